#!/usr/bin/env bash
# One device call (run from the repository root, $OUT set, the ml_dtypes 0.7.0 cp312 wheel in .whl/, carry [".whl"]):
# the CUDA build, bench/gpu_elementwise.py, the cross-device cases with CUDA and the ONNX node tests on CUDA (each
# output against the CPU's bytes).
set -uo pipefail
out=${OUT:-/tmp/out}; t0=$(date +%s)
python3 -m pip install -q --no-build-isolation --no-deps -C cmake.define.CMAKE_CUDA_ARCHITECTURES=90 . > "$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
echo "built $(( $(date +%s) - t0 )) s"
timeout 25 python3 bench/gpu_elementwise.py > "$out/elementwise.txt" 2>&1; grep -v Warn "$out/elementwise.txt" | head -16
timeout 90 python3 -m pytest -q -p no:cacheprovider tests/test_cross_device.py -k "cuda or CUDA" > "$out/pytest.log" 2>&1
echo "pytest rc=$?"; tail -2 "$out/pytest.log"; grep -E "^FAILED|^ERROR" "$out/pytest.log" | head
PYTHONPATH=$(python3 -c "import zipfile,sys; zipfile.ZipFile(sys.argv[1]).extractall('/tmp/mld')" .whl/ml_dtypes-*.whl && echo /tmp/mld) \
  timeout 80 python3 tests/node/runner.py --runtime lockstep --provider cuda --expect tests/node/expect_cuda.txt -j 16 > "$out/node_cuda.log" 2>&1
echo "nodes rc=$?"; tail -3 "$out/node_cuda.log"; echo "$(( $(date +%s) - t0 )) s"
