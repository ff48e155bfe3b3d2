#!/usr/bin/env bash
# GPU check of the PTX path: the CUDA provider built as sm_90 PTX only (the driver compiles it on load, as on a GPU
# newer than the build's architectures), then the CUDA node tests and the cross-device pytest subset against the CPU.
export LOCKSTEP_COMMIT=$(cat .devexp/commit)-ptx
python3 -m pip install -q --no-deps --no-index --target /tmp/mld .whl/*.whl && export PYTHONPATH=/tmp/mld
t0=$(date +%s); nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
CUDAARCHS=90-virtual python3 -m pip install -q --no-build-isolation --no-deps . > $OUT/build.log 2>&1; echo "build rc $? after $(( $(date +%s) - t0 )) s"
so=$(python3 -c "import lockstep._core as c; print(c.__file__)"); cuobjdump --list-elf "$so" 2>&1 | head -3 > $OUT/cuobjdump.txt; cuobjdump --list-ptx "$so" 2>&1 | head -3 >> $OUT/cuobjdump.txt; cat $OUT/cuobjdump.txt
timeout 200 python3 tests/node/runner.py --provider cuda --expect tests/node/expect_cuda.txt -j 16 --report $OUT/node_cuda.json > $OUT/node_cuda.log 2>&1
echo "node rc $? after $(( $(date +%s) - t0 )) s"; tail -2 $OUT/node_cuda.log
par=(); python3 -c "import xdist" 2>/dev/null && par=(-n 16)
timeout 200 python3 -m pytest -q "${par[@]}" -p no:cacheprovider tests/test_cross_device.py tests/test_model_variants.py \
  tests/test_half_precision.py tests/test_models.py tests/test_ml_ops.py tests/test_seed.py -k "cuda or CUDA or half or seed" > $OUT/pytest.log 2>&1
echo "pytest rc $? after $(( $(date +%s) - t0 )) s"; tail -1 $OUT/pytest.log; grep -E "^FAILED|^ERROR" $OUT/pytest.log | head -30
