#!/usr/bin/env bash
# The test suite: C++ tests, the exhaustive math check, the Python tests (cross-device cases, API, seed scripts,
# models) and the ONNX node tests against their expectation list. GPU tests skip without a GPU.
# Usage: scripts/test.sh [--quick]   (--quick samples the math check instead of covering all 2^32 inputs)
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
. scripts/env.sh

build=build/cpp-tests
cmake -S . -B "$build" -G Ninja -DLOCKSTEP_CUDA=OFF -DLOCKSTEP_TESTS=ON >/dev/null
ninja -C "$build"
"$build/lockstep_tests"

stride=1
[ "${1:-}" = "--quick" ] && stride=4099
"$build/exhaustive_math" --stride "$stride"

python3 -m pytest -q tests
