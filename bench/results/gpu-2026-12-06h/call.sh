#!/usr/bin/env bash
# Session 13: a lean GPU check of HEAD (new.tar): build, the node tests on CUDA against the CPU's bytes, the pytest
# files this session touched with CUDA enabled, exp/tanh host vs device over all 2^32 inputs, GPT-2 small timing.
set -u
python3 -m pip install -q --no-deps --no-index --target /tmp/mld .whl/*.whl 2>/dev/null; export PYTHONPATH=/tmp/mld
REPO=$PWD; t0=$(date +%s)
mkdir -p /tmp/src_new && tar -xf .devexp/new.tar -C /tmp/src_new && cd /tmp/src_new
(nvcc -std=c++20 -O2 -arch=sm_90 --fmad=false --prec-div=true --prec-sqrt=true --ftz=false -Xcompiler -ffp-contract=off -Isrc tests/arith/math_device_check.cu -o /tmp/math_device_check && timeout 300 /tmp/math_device_check exp tanh > $OUT/math_device.log 2>&1; echo "math device check rc $?" >> $OUT/math_device.log) &
CUDAARCHS=90 python3 -m pip install -q --no-build-isolation --no-deps . > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
echo "built after $(( $(date +%s) - t0 )) s"
timeout 200 python3 tests/node/runner.py --runtime lockstep --provider cuda -j 16 --expect tests/node/expect_cuda.txt > $OUT/node_cuda.log 2>&1; echo "node rc $?"; tail -3 $OUT/node_cuda.log
echo "after $(( $(date +%s) - t0 )) s"
timeout 200 python3 -m pytest -q -p no:cacheprovider tests/test_fusion.py tests/test_gemm_epilogue.py tests/test_models.py tests/test_compare.py "tests/test_cross_device.py" -k "fusion or gemm or Gemm or gpt2 or cuda or pow or softmax or Softmax or exp or model_fixtures" > $OUT/pytest.log 2>&1; echo "pytest rc $?"; tail -3 $OUT/pytest.log; grep -E "^FAILED|^ERROR" $OUT/pytest.log | head
wait; tail -4 $OUT/math_device.log
echo "done after $(( $(date +%s) - t0 )) s"
