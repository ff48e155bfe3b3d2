#!/usr/bin/env bash
# Two CPU-only builds side by side at 16 threads on the device host. Run from the repository root, with the trees to
# compare as .devexp/old.tar and .devexp/new.tar (git archive COMMIT -o ...) and $OUT set.
set -e
out=${OUT:-/tmp/out}
bash bench/build_ab_trees.sh
bash bench/ab_builds.sh 2 bench/cpu_models.py --threads 16 --runs 10 --warmup 2 --models vit_b_16_features,bert_base_encoder,gpt2_small > $out/ab16_transformers.txt 2>&1
python3 bench/summarize_ab.py $out/ab16_transformers.txt
