#!/usr/bin/env bash
# Session 14, call 3: HEAD (old.tar) against the working tree (new.tar: packed_product keeps A runs per thread when
# A is the larger operand), CPU-only builds, at 16 threads on the host: ResNet-50 per node, three CNNs whole.
set -u
python3 -m pip install -q --no-deps --no-index --target /tmp/mld .whl/*.whl 2>/dev/null; export PYTHONPATH=/tmp/mld
t0=$(date +%s)
for v in old new; do
  (rm -rf /tmp/src_$v /tmp/pkg_$v; mkdir -p /tmp/src_$v && tar -xf .devexp/$v.tar -C /tmp/src_$v && cd /tmp/src_$v &&
   CMAKE_BUILD_PARALLEL_LEVEL=8 python3 -m pip install -q --no-build-isolation --no-deps --target /tmp/pkg_$v -C cmake.define.LOCKSTEP_CUDA=OFF . > $OUT/build_$v.log 2>&1 || tail -20 $OUT/build_$v.log) &
done
wait
echo "built after $(( $(date +%s) - t0 )) s"
cd /tmp/src_new
for r in 1 2; do for v in old new; do
  echo "== $v"; PYTHONPATH=/tmp/pkg_$v:/tmp/mld timeout 100 python3 bench/cpu_models.py --threads 16 --runs 10 --warmup 2 --models resnet50,efficientnet_b0,mobilenet_v3_large 2>&1 | grep -E "^(resnet|effic|mobile)"
done; done | tee $OUT/ab16.txt
echo "== old"; PYTHONPATH=/tmp/pkg_old:/tmp/mld timeout 120 python3 bench/cpu_models.py --threads 16 --runs 10 --warmup 2 --models vit_b_16_features,bert_base_encoder,gpt2_small 2>&1 | grep -E "^(vit|bert|gpt)" | tee -a $OUT/ab16.txt
for v in old new; do echo "== $v"; PYTHONPATH=/tmp/pkg_$v:/tmp/mld timeout 60 python3 bench/conv_cpu.py --threads 16 --runs 20 --warmup 3 --shapes 3x3_512_7,3x3_256_14,3x3_128_28,3x3_128_56_s2,1x1_1024_256_14,1x1_256_512_56_s2,stem_7x7_s2 2>&1 | tail -8; done | tee $OUT/conv16.txt
for v in old new; do PYTHONPATH=/tmp/pkg_$v:/tmp/mld timeout 60 python3 bench/nodes_cpu.py resnet50 --threads 16 --runs 10 --top 30 > $OUT/nodes_r50_16_$v.txt 2>&1; head -8 $OUT/nodes_r50_16_$v.txt; done
echo "done after $(( $(date +%s) - t0 )) s"
