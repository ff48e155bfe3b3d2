#!/usr/bin/env bash
# One device call (run from the repository root, with bench/gpu_core_variants/bin carried from build.sh): cuBLAS's
# float32 times on the same problems, then each build of bench/gpu_gemm_core.cu on every problem, ROUNDS rounds in
# alternation, then ncu on problem NCU_CASE (1: 8192^3) for the builds in NCU_BUILDS (default: every build in bin/;
# a name that is not one, e.g. none, skips it). Logs in $OUT.
set -u
cd "$(dirname "$0")"
builds=${BUILDS:-$(ls bin | grep -v "\.ptxas$")}
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv,noheader | tee "$OUT/gpu.txt"
timeout 120 python3 cublas.py 2>&1 | tee "$OUT/cublas.txt"
for r in $(seq "${ROUNDS:-1}"); do
  for b in $builds; do echo "== $b round $r"; timeout 150 "./bin/$b"; done
done 2>&1 | tee "$OUT/core.txt"
metrics=sm__inst_executed_pipe_fma.avg.pct_of_peak_sustained_active,sm__warps_active.avg.pct_of_peak_sustained_active
metrics=$metrics,smsp__issue_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,gpu__time_duration.sum
for s in barrier dispatch_stall long_scoreboard mio_throttle not_selected short_scoreboard wait; do
  metrics=$metrics,smsp__average_warps_issue_stalled_${s}_per_issue_active.ratio
done
for b in ${NCU_BUILDS:-$builds}; do
  echo "== ncu $b"
  timeout 200 ncu --clock-control none --metrics "$metrics" "./bin/$b" "${NCU_CASE:-1}" 2>&1 |
    grep -E "gemm_f32_sm80|\.sum|\.ratio|pct" | sed -E 's/^ *void lockstep::cuda::gemm_core::gemm_f32_sm80<lockstep::cuda::gemm_core::TileShape<([0-9, ]+)>.*/  kernel \1/'
done 2>&1 | tee "$OUT/ncu.txt"
