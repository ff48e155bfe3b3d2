#!/usr/bin/env bash
# One device call (run from the repository root, $OUT set): the CUDA build with the bits check
# (scripts/gpu-gemm-check.sh; GEMM_TILES=1 adds BERT's and ResNet's GEMMs and convs under every tile), then
# lockstep against torch eager fp32 at batch 32 (BERT, ResNet-50), 128 (ResNet-50) and 1 (four models), in one file,
# and where BERT's and ResNet's batch-32 time goes per kernel (bench/gpu_profile.py). At most 8 files come back.
set -uo pipefail
out=${OUT:-/tmp/out}; mkdir -p "$out"
t0=$(date +%s)
GEMM_TILES=${GEMM_TILES:-0} GEMM_TILE_RUNS=3 GEMM_BENCH=0 timeout 330 bash scripts/gpu-gemm-check.sh "$out"
echo "gemm check rc=$? $(( $(date +%s) - t0 )) s"
rm -f "$out/gemm_tiles_console.txt" "$out/gemm_env.txt"
{ timeout 40 python3 bench/gpu_models.py --runs 10 --batch 32 --models bert_base_encoder,resnet50
  timeout 50 python3 bench/gpu_models.py --runs 10 --batch 128 --models resnet50
  timeout 60 python3 bench/gpu_models.py --runs 20 --batch 1; } > "$out/bench_gpu.txt" 2>&1
cat "$out/bench_gpu.txt"; echo "models $(( $(date +%s) - t0 )) s"
timeout 60 python3 bench/gpu_profile.py --models bert_base_encoder,resnet50 --batch 32 --runs 3 --top 25 \
  > "$out/profile_bs32.txt" 2>&1
echo "profile $(( $(date +%s) - t0 )) s"
