#!/usr/bin/env bash
# The CUDA GEMM core on a GPU machine: builds lockstep for sm_90, checks MatMul/Gemm/Conv bit for bit against the
# CPU provider (bench/gpu_gemm.py), runs the cross-device gemm/conv/matmul tests, then times the kernels against
# torch fp32 (TF32 off). Logs go to OUT_DIR (default $OUT, else bench/results/gpu-gemm-<date>).
#   scripts/gpu-gemm-check.sh [OUT_DIR]
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:-${OUT:-bench/results/gpu-gemm-$(date +%Y-%m-%d)}}
mkdir -p "$out"
export PYTHONUNBUFFERED=1
{ date -u +%Y-%m-%dT%H:%MZ; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader; } \
  | tee "$out/gemm_env.txt"
if ! python3 -m pip install -q --no-build-isolation --no-deps -C cmake.define.CMAKE_CUDA_ARCHITECTURES=90 . \
  >"$out/gemm_build.log" 2>&1; then
  tail -40 "$out/gemm_build.log"
  exit 1
fi
echo "built $(date -u +%T)"
python3 bench/gpu_gemm.py --out "$out" --check; bits=$?
python3 -m pytest -q -p no:cacheprovider tests/test_cross_device.py -k "gemm or conv or matmul" 2>&1 \
  | tee "$out/gemm_pytest.log" | tail -5
[ "${GEMM_BENCH:-1}" = 1 ] && python3 bench/gpu_gemm.py --out "$out" --bench --runs 10 2>&1 | tee "$out/gemm_bench_console.txt"
exit $bits
