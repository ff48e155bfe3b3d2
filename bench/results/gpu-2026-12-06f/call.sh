#!/usr/bin/env bash
# Session 12, final call: the quick GPU suite on the final tree (new.tar), the binary64 host-vs-device check, fresh
# CUDA node expectations, and an A/B of whole models against old.tar (0ab3253: before the strided-copy change).
set -u
python3 -m pip install -q --no-deps --no-index --target /tmp/mld .whl/*.whl 2>/dev/null; export PYTHONPATH=/tmp/mld
REPO=$PWD; export CUDAARCHS=90; t0=$(date +%s)
for v in old new; do mkdir -p /tmp/src_$v && tar -xf .devexp/$v.tar -C /tmp/src_$v; done
(python3 -m pip install -q --no-build-isolation --no-deps --target /tmp/pkg_old -C cmake.define.CMAKE_CUDA_ARCHITECTURES=90 /tmp/src_old > $OUT/build_old.log 2>&1 || tail -20 $OUT/build_old.log) &
cd /tmp/src_new
(nvcc -std=c++20 -O2 -arch=sm_90 --fmad=false --prec-div=true --prec-sqrt=true --ftz=false -Xcompiler -ffp-contract=off -Isrc tests/arith/math_f64_device_check.cu -o /tmp/f64check && /tmp/f64check --count 2000000 > $OUT/f64_device.txt 2>&1; echo "f64 device check rc $?" >> $OUT/f64_device.txt) &
LOCKSTEP_COMMIT=$(cat $REPO/.devexp/commit) GPU_CHECK_QUICK=1 timeout 400 bash scripts/gpu-check.sh $OUT/gc > $OUT/gpu-check.log 2>&1
echo "gpu-check rc $? after $(( $(date +%s) - t0 )) s"; tail -7 $OUT/gc/summary.txt
grep -E "^FAILED|^ERROR" $OUT/gc/pytest.log | head -30
wait; echo "old built after $(( $(date +%s) - t0 )) s"; tail -2 $OUT/f64_device.txt
cp tests/node/expect_cuda.txt $OUT/expect_cuda.txt
timeout 60 python3 tests/node/runner.py --runtime lockstep --provider cuda -j 16 --expect $OUT/expect_cuda.txt --update-expectations > $OUT/node_update.log 2>&1; tail -1 $OUT/node_update.log
for r in 1 2; do for v in old new; do echo "== models bs32 $v round $r"; if [ $v = old ]; then P=/tmp/pkg_old:/tmp/mld; else P=/tmp/mld; fi
  PYTHONPATH=$P timeout 60 python3 bench/gpu_models.py --batch 32 --runs 10 --models resnet50,bert_base_encoder 2>&1 | grep -E "^[a-z]"; done; done | tee $OUT/models.txt
echo "done after $(( $(date +%s) - t0 )) s"
rm -f $OUT/gc/node_cuda.log $OUT/gc/node_cuda.json
