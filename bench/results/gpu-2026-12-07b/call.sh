#!/usr/bin/env bash
# Device call of the eighteenth session (2026-12-07): the lean GPU check of the tree (CUDA build, node tests on CUDA
# against the CPU's bytes, pytest's CUDA cases with the fusion tests), then CPU-only builds of the session's first and
# last trees side by side at 16 threads on the host. Run from the repository root on the GPU machine, with the
# ml_dtypes 0.7.0 cp312 wheel in .whl/, the trees as .devexp/old.tar and .devexp/new.tar, and $OUT set.
set -uo pipefail
out=${OUT:-/tmp/out}; mkdir -p "$out"
bash bench/results/gpu-2026-12-06j/call.sh
for v in old new; do [ -f .devexp/$v.tar ] || { echo "no .devexp/$v.tar: no 16-thread A/B"; exit 0; }; done
bash bench/build_ab_trees.sh > "$out/ab_build.log" 2>&1 || { tail -20 "$out/ab_build.log"; exit 1; }
timeout 280 bash bench/ab_builds.sh 2 bench/cpu_models.py --threads 16 --runs 10 --warmup 2 \
  --models resnet50,mobilenet_v3_large,efficientnet_b0,vit_b_16_features,bert_base_encoder,gpt2_small > "$out/ab16_models.txt" 2>&1
python3 bench/summarize_ab.py "$out/ab16_models.txt"
