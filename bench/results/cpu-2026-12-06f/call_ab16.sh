#!/usr/bin/env bash
# Two CPU-only builds side by side at 16 threads on the device host: the CNN and transformer fixtures, and
# convolutions with their weights from memory. Run from the repository root, with the trees to compare as
# .devexp/old.tar and .devexp/new.tar (git archive COMMIT -o ...) and $OUT set.
set -e
out=${OUT:-/tmp/out}
bash bench/build_ab_trees.sh
bash bench/ab_builds.sh 2 bench/cpu_models.py --threads 16 --runs 10 --warmup 2 \
  --models resnet50,mobilenet_v3_large,efficientnet_b0,vit_b_16_features,bert_base_encoder,gpt2_small > $out/ab16_models.txt 2>&1
python3 bench/summarize_ab.py $out/ab16_models.txt
for shape in "256 14" "1024:256 14 --kernel 1" "128 28" "64 56"; do
  for v in old new; do echo "== $v $shape"; PYTHONPATH=/tmp/pkg_$v python3 bench/conv_chain.py $shape --threads 16 --count 16; done
done 2>&1 | tee $out/ab16_chains.txt
