#!/usr/bin/env bash
# Session 12, call 2: old (HEAD) and new (elementwise 32-bit index + quads, GEMM tiles) wheels side by side.
set -u
python3 -m pip install -q --no-deps --no-index --target /tmp/mld .whl/*.whl 2>/dev/null; export PYTHONPATH=/tmp/mld
t0=$(date +%s)
for v in old new; do mkdir -p /tmp/src_$v && tar -xf .devexp/$v.tar -C /tmp/src_$v; done
build() { python3 -m pip install -q --no-build-isolation --no-deps --target /tmp/pkg_$1 -C cmake.define.CMAKE_CUDA_ARCHITECTURES=90 /tmp/src_$1 > $OUT/build_$1.log 2>&1 || tail -30 $OUT/build_$1.log; }
build old & build new & wait
echo "built after $(( $(date +%s) - t0 )) s"; ls /tmp/pkg_old/lockstep/ | head -3
cd /tmp/src_new
for v in old new; do echo "== elementwise $v"; PYTHONPATH=/tmp/pkg_$v:/tmp/mld timeout 200 python3 bench/gpu_elementwise.py --runs 20 2>&1 | grep -v Warn; done | tee $OUT/elementwise.txt
for r in 1 2; do for v in old new; do echo "== models bs32 $v round $r"; PYTHONPATH=/tmp/pkg_$v:/tmp/mld timeout 200 python3 bench/gpu_models.py --batch 32 --runs 10 --models resnet50,bert_base_encoder 2>&1 | grep -E "^[a-z]|model"; done; done | tee $OUT/models.txt
echo "== gemm check new"; PYTHONPATH=/tmp/pkg_new:/tmp/mld timeout 200 python3 bench/gpu_gemm.py --check 2>&1 | tail -5 | tee $OUT/gemm_check.txt
echo "done after $(( $(date +%s) - t0 )) s"
