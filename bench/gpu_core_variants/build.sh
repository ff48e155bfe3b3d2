#!/usr/bin/env bash
# Builds bench/gpu_gemm_core.cu against the GEMM core (base) and against variants of it made by applying a patch to
# a copy of src/cuda/gemm_core.cuh, into bin/ beside this script (ignored by git: carry it to the device), with
# ptxas' register and spill report of each kernel in bin/NAME.ptxas. Runs where nvcc is (no GPU needed).
set -eu
here=$(cd "$(dirname "$0")" && pwd); root=$(cd "$here/../.." && pwd)
mkdir -p "$here/bin"; work=$(mktemp -d)
patch -s -o "$work/gemm_core_shared_totals.cuh" "$root/src/cuda/gemm_core.cuh" < "$here/shared_totals.patch"
NVCC=${NVCC:-/usr/local/cuda/bin/nvcc}
FLAGS="-std=c++20 -O3 -arch=sm_90 --fmad=false --prec-div=true --prec-sqrt=true --ftz=false -Xcompiler -ffp-contract=off"
FLAGS="$FLAGS -I$root/src -I$root/include -I$work -Xptxas -v"
build() {
  local name=$1; shift
  $NVCC $FLAGS "$@" "$root/bench/gpu_gemm_core.cu" -o "$here/bin/$name" > "$here/bin/$name.ptxas" 2>&1 ||
    { cat "$here/bin/$name.ptxas"; exit 1; }
  echo "$name: $(grep -A3 "Compiling entry function '_ZN8lockstep4cuda9gemm_core13gemm_f32_sm80" "$here/bin/$name.ptxas" |
    grep -oE 'TileShapeILi[0-9]+ELi[0-9]+ELi[0-9]+ELi[0-9]+E|Used [0-9]+ registers|[0-9]+ bytes spill stores' |
    sed -E 's/TileShapeILi([0-9]+)ELi([0-9]+)ELi([0-9]+)ELi([0-9]+)E/\1x\2x\3\/\4/' | paste -sd' ')"
}
build base -DSHAPESET=1 &
build totals_shared_4_stages '-DCORE="gemm_core_shared_totals.cuh"' -DCORE_SHARED_TOTALS=1 -DCORE_STAGES=4 -DSHAPESET=1 &
build totals_shared_2_stages '-DCORE="gemm_core_shared_totals.cuh"' -DCORE_SHARED_TOTALS=1 -DCORE_STAGES=2 -DSHAPESET=2 &
wait
rm -rf "$work"
