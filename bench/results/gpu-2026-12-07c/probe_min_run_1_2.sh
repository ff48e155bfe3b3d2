#!/usr/bin/env bash
# Twentieth session, second probe: kMinRunPanels 1 (old rule) against 2, ResNet-50 at 16 threads, 4 alternating rounds.
set -uo pipefail
out=${OUT:-/tmp/out}; mkdir -p "$out"
[ -d /tmp/mld ] || python3 -c "import zipfile,sys,glob; zipfile.ZipFile(glob.glob('.whl/ml_dtypes-*.whl')[0]).extractall('/tmp/mld')"
nb=$(python3 -c "import nanobind;print(nanobind.cmake_dir())")
t0=$(date +%s)
[ -f /tmp/b/build.ninja ] || cmake -S . -B /tmp/b -G Ninja -DCMAKE_BUILD_TYPE=Release -DLOCKSTEP_CUDA=OFF -DLOCKSTEP_TESTS=OFF -DLOCKSTEP_PYTHON=ON -Dnanobind_DIR=$nb > $out/build.log 2>&1
ninja -C /tmp/b _core >> $out/build.log 2>&1 || { tail -20 $out/build.log; exit 1; }
echo "build $(( $(date +%s) - t0 )) s"
rm -rf /tmp/pkg && mkdir -p /tmp/pkg && cp -r python/lockstep /tmp/pkg/ && rm -f /tmp/pkg/lockstep/_core*.so && cp /tmp/b/_core*.so /tmp/pkg/lockstep/
export PYTHONPATH=/tmp/pkg:/tmp/mld
for r in 1 2 3 4; do for m in 1 2; do echo "== min_run $m round $r"; LOCKSTEP_EXP_MIN_RUN=$m timeout 100 python3 bench/cpu_models.py --threads 16 --runs 10 --warmup 2 --models resnet50; done; done > $out/models16_m1_m2.txt 2>&1
echo "models16 $(( $(date +%s) - t0 )) s"
for m in 1 2; do LOCKSTEP_EXP_MIN_RUN=$m timeout 60 python3 bench/nodes_cpu.py resnet50 --threads 16 > $out/nodes16_resnet50_m$m.txt 2>&1; done
shapes=3x3_128_56_s2,3x3_128_28,1x1_512_128_28,3x3_256_14
for r in 1 2 3; do for m in 1 2; do echo "== min_run $m round $r"; LOCKSTEP_EXP_MIN_RUN=$m timeout 100 python3 bench/conv_cpu.py --threads 16 --runs 30 --shapes $shapes; done; done > $out/conv16_m1_m2.txt 2>&1
echo "done $(( $(date +%s) - t0 )) s"
