#!/usr/bin/env bash
# The CUDA GEMM core on a GPU machine: builds lockstep for sm_90, checks MatMul/Gemm/Conv bit for bit against the
# CPU provider (bench/gpu_gemm.py), runs the cross-device gemm/conv/matmul tests, then times the kernels against
# torch fp32 (TF32 off). Logs go to OUT_DIR (default $OUT, else bench/results/gpu-gemm-<date>).
# GEMM_BENCH=0 skips the timings; GEMM_SASS=1 counts FFMA and spill instructions per kernel (cuobjdump);
# GEMM_NCU=1 reads each GEMM kernel's counters with ncu (bench/gpu_gemm.py --profile), then its stall reasons,
# instruction mix and shared-memory conflicts (gemm_ncu_sections.txt); GEMM_TILES=1 times BERT's and ResNet's GEMMs
# under every tile shape (LOCKSTEP_CUDA_GEMM_TILE) and checks that all give the CPU's bytes (gemm_tiles.txt).
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
if [ "${GEMM_SASS:-0}" = 1 ]; then
  # Per GEMM kernel: FFMA count and local-memory (spill) instructions, read off the installed extension's SASS.
  so=$(python3 -c 'import lockstep._core as c; print(c.__file__)')
  cuobjdump -sass "$so" | awk '/Function :/ {f=$3} f ~ /gemm_f32/ && /FFMA/ {ffma[f]++} f ~ /gemm_f32/ && /LDL|STL/ {
    ldl[f]++} END {for (f in ffma) printf "%6d FFMA %4d LDL/STL  %s\n", ffma[f], ldl[f], f}' | sort -k4 \
    | tee "$out/gemm_sass.txt"
fi
if [ "${GEMM_TILES:-0}" = 1 ]; then
  python3 bench/gpu_gemm.py --out "$out" --tiles --runs "${GEMM_TILE_RUNS:-5}" 2>&1 | tee "$out/gemm_tiles_console.txt"
  [ "${PIPESTATUS[0]}" = 0 ] || bits=1
fi
[ "${GEMM_BENCH:-1}" = 1 ] && python3 bench/gpu_gemm.py --out "$out" --bench --runs 10 2>&1 | tee "$out/gemm_bench_console.txt"
if [ "${GEMM_NCU:-0}" = 1 ]; then
  ncu --clock-control none --kernel-name regex:gemm_f32 --metrics \
    gpu__time_duration.sum,sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_fma.avg.pct_of_peak_sustained_active,sm__throughput.avg.pct_of_peak_sustained_elapsed,dram__throughput.avg.pct_of_peak_sustained_elapsed,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active,launch__occupancy_limit_shared_mem,launch__occupancy_limit_registers,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum,smsp__average_warp_latency_issue_stalled_barrier,smsp__average_warp_latency_issue_stalled_long_scoreboard \
    python3 bench/gpu_gemm.py --profile >"$out/gemm_ncu.txt" 2>&1
  grep -E "gemm_f32|duration|pipe_fma_cycles|warps_active|registers|occupancy_limit|stalled" "$out/gemm_ncu.txt" | tail -60
  # Where the issue slots go: warp stall reasons, the executed instruction mix and the schedulers' issue rate.
  timeout "${GEMM_NCU_LIMIT_S:-150}" ncu --clock-control none --kernel-name regex:gemm_f32 --section WarpStateStats \
    --section InstructionStats --section SchedulerStats --section MemoryWorkloadAnalysis_Tables --print-details all \
    python3 bench/gpu_gemm.py --profile >"$out/gemm_ncu_sections.txt" 2>&1
fi
exit $bits
