#!/usr/bin/env bash
# The test suite: C++ tests, the exhaustive math check, the Python tests (cross-device cases, API, seed scripts,
# models) and the ONNX node tests against their expectation list. GPU tests skip without a GPU.
# Usage: scripts/test.sh [--quick | --full-math]
# The math check (every unary function against a binary64 reference, <= 1 ulp) tests every 3rd float bit pattern
# by default (all signs and binades, about 1.4 billion inputs a function: CI's time on 2 cores for 20 functions);
# --full-math covers all 2^32 inputs (run it when src/arith/math.h changes); --quick every 4099th.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
. scripts/env.sh

build=build/cpp-tests
cmake -S . -B "$build" -G Ninja -DLOCKSTEP_CUDA=OFF -DLOCKSTEP_TESTS=ON >/dev/null
ninja -C "$build"
"$build/lockstep_tests"

stride=3
[ "${1:-}" = "--quick" ] && stride=4099
[ "${1:-}" = "--full-math" ] && stride=1
"$build/exhaustive_math" --stride "$stride"

python3 -m pytest -q tests
