#!/usr/bin/env bash
# Twentieth session, third call: the thread pool's shares over up to 256 chunks (new) against 16 (old), 16 threads.
set -uo pipefail
out=${OUT:-/tmp/out}; mkdir -p "$out"
[ -d /tmp/mld ] || python3 -c "import zipfile,sys,glob; zipfile.ZipFile(glob.glob('.whl/ml_dtypes-*.whl')[0]).extractall('/tmp/mld')"
export PYTHONPATH=/tmp/mld
t0=$(date +%s)
bash bench/build_ab_trees.sh > "$out/ab_build.log" 2>&1 || { tail -20 "$out/ab_build.log"; exit 1; }
echo "built $(( $(date +%s) - t0 )) s"
timeout 420 bash bench/ab_builds.sh 3 bench/cpu_models.py --threads 16 --runs 10 --warmup 2 \
  --models resnet50,mobilenet_v3_large,efficientnet_b0,vit_b_16_features,bert_base_encoder,gpt2_small > "$out/ab16_shares256.txt" 2>&1
echo "ab $(( $(date +%s) - t0 )) s"
python3 bench/summarize_ab.py "$out/ab16_shares256.txt"
PYTHONPATH=/tmp/pkg_new:/tmp/mld timeout 60 python3 bench/nodes_cpu.py resnet50 --threads 16 > $out/nodes16_resnet50_shares256.txt 2>&1
PYTHONPATH=/tmp/pkg_old:/tmp/mld timeout 60 python3 bench/nodes_cpu.py resnet50 --threads 16 > $out/nodes16_resnet50_old.txt 2>&1
echo "done $(( $(date +%s) - t0 )) s"
