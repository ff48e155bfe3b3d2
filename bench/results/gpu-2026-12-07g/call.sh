#!/usr/bin/env bash
# One device call (run from the repository root, $OUT set, the ml_dtypes 0.7.0 cp312 wheel in .whl/, carry
# [".whl", "bench/gpu_core_variants/bin"]): scripts/gpu-gemm-check.sh (CUDA build, MatMul/Gemm/Conv bytes against
# the CPU, the cross-device GEMM tests; GEMM_TILES=1 adds BERT's and ResNet's GEMMs under each tile), the ONNX node
# tests on CUDA (the runner compares each CUDA output with the CPU's bytes), lockstep against torch eager fp32 on
# BERT-base and ResNet-50 at batch 32, the core's variants (bench/gpu_core_variants/call.sh), and the SASS of
# MatMul's 64x128x8/3 kernel.
set -uo pipefail
out=${OUT:-/tmp/out}; mkdir -p "$out"
t0=$(date +%s)
GEMM_TILES=${GEMM_TILES:-0} GEMM_BENCH=0 timeout 240 bash scripts/gpu-gemm-check.sh "$out"
echo "gemm check rc=$? $(( $(date +%s) - t0 )) s"
PYTHONPATH=$(python3 -c "import zipfile,sys; zipfile.ZipFile(sys.argv[1]).extractall('/tmp/mld')" .whl/ml_dtypes-*.whl && echo /tmp/mld) \
  timeout 120 python3 tests/node/runner.py --runtime lockstep --provider cuda --expect tests/node/expect_cuda.txt -j 16 \
  --report "$out/node_cuda.json" > "$out/node_cuda.log" 2>&1
tail -3 "$out/node_cuda.log"; echo "nodes $(( $(date +%s) - t0 )) s"
timeout 80 python3 bench/gpu_models.py --runs 10 --batch 32 --models bert_base_encoder,resnet50 > "$out/bench_gpu_bs32.txt" 2>&1
cat "$out/bench_gpu_bs32.txt"; echo "models $(( $(date +%s) - t0 )) s"
mkdir -p "$out/variants"
OUT="$out/variants" ROUNDS=2 NCU_BUILDS=fixed_walks timeout 100 bash bench/gpu_core_variants/call.sh > /dev/null 2>&1
tail -4 "$out/variants/core.txt"; echo "variants $(( $(date +%s) - t0 )) s"
so=$(python3 -c 'import lockstep._core as c; print(c.__file__)')
cuobjdump -sass "$so" | awk '/Function :/ { p = ($0 ~ /gemm_f32_sm80.*TileShapeILi64ELi128ELi8ELi3ELi2E.*Lb0E.*MatrixProblem/) } p' \
  | gzip > "$out/sass_matmul_64x128x8_3.txt.gz"
