#!/usr/bin/env bash
# Session 12, call 3: the quick GPU suite on HEAD (LOCKSTEP_COMMIT), the binary64 host-vs-device check, a fresh
# CUDA expectation list for the node tests.
set -u
python3 -m pip install -q --no-deps --no-index --target /tmp/mld .whl/*.whl 2>/dev/null; export PYTHONPATH=/tmp/mld
REPO=$PWD; mkdir -p /tmp/src && tar -xf .devexp/head.tar -C /tmp/src && cd /tmp/src
export CUDAARCHS=90
t0=$(date +%s)
(nvcc -std=c++20 -O2 -arch=sm_90 --fmad=false --prec-div=true --prec-sqrt=true --ftz=false -Xcompiler -ffp-contract=off -Isrc tests/arith/math_f64_device_check.cu -o /tmp/f64check && /tmp/f64check > $OUT/f64_device.txt 2>&1; echo "f64 device check rc $?" >> $OUT/f64_device.txt) &
LOCKSTEP_COMMIT=$(cat $REPO/.devexp/commit 2>/dev/null || echo head) GPU_CHECK_QUICK=1 timeout 470 bash scripts/gpu-check.sh $OUT/gc > $OUT/gpu-check.log 2>&1
echo "gpu-check rc $? after $(( $(date +%s) - t0 )) s"; tail -7 $OUT/gc/summary.txt
grep -E "^FAILED|^ERROR" $OUT/gc/pytest.log | head -30
wait; tail -6 $OUT/f64_device.txt
cp tests/node/expect_cuda.txt $OUT/expect_cuda.txt
timeout 100 python3 tests/node/runner.py --runtime lockstep --provider cuda -j 16 --expect $OUT/expect_cuda.txt --update-expectations > $OUT/node_update.log 2>&1
echo "node update rc $? after $(( $(date +%s) - t0 )) s"; tail -2 $OUT/node_update.log
rm -f $OUT/gc/node_cuda.log $OUT/gc/node_cuda.json
