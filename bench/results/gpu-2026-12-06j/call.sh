#!/usr/bin/env bash
# Lean device check: CUDA build, node tests on CUDA vs CPU, pytest CUDA subset, CPU figures at 16 threads.
# Run from the repository root on the GPU machine, with the ml_dtypes 0.7.0 cp312 wheel in .whl/ and $OUT set:
#   bash bench/results/gpu-2026-12-06j/call.sh
set -uo pipefail
out=${OUT:-/tmp/out}; mkdir -p "$out"
export PYTHONPATH=$(python3 -c "import zipfile,sys; zipfile.ZipFile(sys.argv[1]).extractall('/tmp/mld')" .whl/ml_dtypes-*.whl && echo /tmp/mld)
python3 -c "import ml_dtypes; print('ml_dtypes', ml_dtypes.__version__)" | tee "$out/env.txt"
nproc >> "$out/env.txt"; lscpu | grep "Model name" >> "$out/env.txt"; nvidia-smi --query-gpu=name --format=csv,noheader >> "$out/env.txt"
t0=$(date +%s)
CUDAARCHS=90 python3 -m pip install -q --no-build-isolation --no-deps . > "$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
echo "build $(( $(date +%s) - t0 )) s" | tee -a "$out/env.txt"
python3 -c "import lockstep; print(lockstep.get_available_providers())" | tee -a "$out/env.txt"
python3 tests/node/runner.py --runtime lockstep --provider cuda --expect tests/node/expect_cuda.txt -j 16 --report "$out/node_cuda.json" > "$out/node_cuda.log" 2>&1
tail -3 "$out/node_cuda.log"
echo "nodes done $(( $(date +%s) - t0 )) s"
PYTHONUNBUFFERED=1 timeout 240 python3 -m pytest -q -p no:cacheprovider tests/test_cross_device.py tests/test_fusion.py tests/test_models.py tests/test_gemm_epilogue.py -k "cuda or CUDA or fusion or model_fixtures or epilogue" > "$out/pytest_cuda.log" 2>&1
tail -3 "$out/pytest_cuda.log"
echo "pytest done $(( $(date +%s) - t0 )) s"
timeout 200 python3 bench/cpu_models.py --threads 16 --runs 10 --warmup 2 > "$out/cpu16.txt" 2>&1
cat "$out/cpu16.txt"
echo "all done $(( $(date +%s) - t0 )) s"
