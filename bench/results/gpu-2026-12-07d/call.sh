#!/usr/bin/env bash
# Twentieth session, last call: the lean GPU check of the tree, then the session's start (eebdbb6) against its end
# at 16 threads, CPU-only builds side by side, 2 rounds.
set -uo pipefail
out=${OUT:-/tmp/out}; mkdir -p "$out"
bash bench/results/gpu-2026-12-06j/call.sh
t0=$(date +%s)
bash bench/build_ab_trees.sh > "$out/ab_build.log" 2>&1 || { tail -20 "$out/ab_build.log"; exit 1; }
echo "ab built $(( $(date +%s) - t0 )) s"
timeout 200 bash bench/ab_builds.sh 2 bench/cpu_models.py --threads 16 --runs 10 --warmup 2 \
  --models resnet50,mobilenet_v3_large,efficientnet_b0,vit_b_16_features,bert_base_encoder,gpt2_small > "$out/ab16_session.txt" 2>&1
python3 bench/summarize_ab.py "$out/ab16_session.txt"
echo "ab done $(( $(date +%s) - t0 )) s"
