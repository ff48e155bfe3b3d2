#!/usr/bin/env bash
# Runs onnxruntime's own Python API tests (onnxruntime/test/python/onnxruntime_test_python.py from an onnxruntime
# source tree, MIT licensed; not kept in this repository) on onnxruntime and on lockstep, and prints the counts.
#   bash scripts/ort_api_tests.sh PATH/TO/onnxruntime_test_python.py
# Needs onnxruntime, onnx, pytest and the lockstep extension (scripts/dev-build.sh, or an installed package).
set -euo pipefail
cd "$(dirname "$0")/.."
exec python3 scripts/ort_api/compare.py "${1:?give the path of onnxruntime_test_python.py}"
