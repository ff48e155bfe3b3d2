#!/bin/bash
# Interleaved before/after: base (b7d9be9) and this branch, alternating, each the same cpu_models command.
cd /work/main/build/wt-cpuspeed
out=bench/results/cpu-2026-12-03c${AB_SUB:+/$AB_SUB}
threads=$1; round=$2
for build in base new; do
  if [ $build = base ]; then pp=build/base-src/python; else pp=python; fi
  echo "## $build, threads $threads, round $round, $(date -u +%H:%M:%S), load $(cut -d' ' -f1-3 /proc/loadavg)"
  PYTHONPATH=$pp python3 bench/cpu_models.py --models mobilenet_v3_large,efficientnet_b0,resnet50 --threads $threads --runs 10 --warmup 2 --json $out/${build}_t${threads}_r${round}.json
done
