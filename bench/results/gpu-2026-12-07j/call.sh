#!/usr/bin/env bash
# One device call (run from the repository root, $OUT set, the ml_dtypes 0.7.0 cp312 wheel in .whl/, carry [".whl"]):
# the CUDA build, the cross-device cases with CUDA (bytes against the CPU), the ONNX node tests on CUDA (each output
# against the CPU's bytes), the broadcasting elementwise bench (bench/gpu_elementwise.py) and BERT-base at batch 32
# with its per-kernel profile. At most 8 files come back.
set -uo pipefail
out=${OUT:-/tmp/out}; mkdir -p "$out"
t0=$(date +%s)
python3 -m pip install -q --no-build-isolation --no-deps -C cmake.define.CMAKE_CUDA_ARCHITECTURES=90 . \
  > "$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
echo "built $(( $(date +%s) - t0 )) s"
timeout 120 python3 -m pytest -q -p no:cacheprovider tests/test_cross_device.py -k "cuda or CUDA" > "$out/pytest.log" 2>&1
echo "pytest rc=$?"; tail -2 "$out/pytest.log"; grep -E "^FAILED|^ERROR" "$out/pytest.log" | head
PYTHONPATH=$(python3 -c "import zipfile,sys; zipfile.ZipFile(sys.argv[1]).extractall('/tmp/mld')" .whl/ml_dtypes-*.whl && echo /tmp/mld) \
  timeout 100 python3 tests/node/runner.py --runtime lockstep --provider cuda --expect tests/node/expect_cuda.txt -j 16 \
  > "$out/node_cuda.log" 2>&1
echo "nodes rc=$?"; tail -3 "$out/node_cuda.log"; echo "$(( $(date +%s) - t0 )) s"
timeout 40 python3 bench/gpu_elementwise.py > "$out/elementwise.txt" 2>&1; grep -v Warn "$out/elementwise.txt" | head -20
{ timeout 40 python3 bench/gpu_models.py --runs 10 --batch 32 --models bert_base_encoder
  timeout 40 python3 bench/gpu_profile.py --models bert_base_encoder --batch 32 --runs 3 --top 12; } > "$out/bert_bs32.txt" 2>&1
grep -v Warn "$out/bert_bs32.txt" | head -30; echo "done $(( $(date +%s) - t0 )) s"
