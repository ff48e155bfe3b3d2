#!/usr/bin/env bash
# Session 14: a lean GPU check of HEAD (new.tar) after the session's CPU changes (conv planes, transposed tile
# stores, Transpose, pools): build, the node tests on CUDA against the CPU's bytes, and pytest with CUDA on the
# cross-device cases, fusion, model fixtures and compare files.
set -u
python3 -m pip install -q --no-deps --no-index --target /tmp/mld .whl/*.whl 2>/dev/null; export PYTHONPATH=/tmp/mld
REPO=$PWD; t0=$(date +%s)
rm -rf /tmp/src_new; mkdir -p /tmp/src_new && tar -xf .devexp/new.tar -C /tmp/src_new && cd /tmp/src_new
CUDAARCHS=90 CMAKE_BUILD_PARALLEL_LEVEL=16 python3 -m pip install -q --no-build-isolation --no-deps . > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
echo "built after $(( $(date +%s) - t0 )) s"
timeout 150 python3 tests/node/runner.py --runtime lockstep --provider cuda -j 16 --expect tests/node/expect_cuda.txt > $OUT/node_cuda.log 2>&1; echo "node rc $?"; tail -3 $OUT/node_cuda.log
echo "after $(( $(date +%s) - t0 )) s"
timeout 260 python3 -m pytest -q -p no:cacheprovider tests/test_cross_device.py tests/test_fusion.py tests/test_models.py tests/test_compare.py -k "cuda or CUDA or fusion or model_fixtures or compare" > $OUT/pytest.log 2>&1; echo "pytest rc $?"; tail -3 $OUT/pytest.log; grep -E "^FAILED|^ERROR" $OUT/pytest.log | head
echo "done after $(( $(date +%s) - t0 )) s"
