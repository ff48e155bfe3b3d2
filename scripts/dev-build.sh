#!/usr/bin/env bash
# Developer build: compiles the library and the Python extension into BUILD_DIR (default build/dev, CUDA off
# for speed; pass -DLOCKSTEP_CUDA=ON to include it) and links the extension into python/lockstep, so that
# `PYTHONPATH=python python3 -m pytest tests` runs against the working tree without installing.
#   scripts/dev-build.sh [BUILD_DIR] [extra cmake args...]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build/dev}
shift || true
cmake -S . -B "$build" -G Ninja -DLOCKSTEP_CUDA=OFF -DLOCKSTEP_PYTHON=ON -DLOCKSTEP_TESTS=OFF "$@" >/dev/null
ninja -C "$build" _core
ln -sf "$(realpath "$build")"/_core*.so python/lockstep/
