#!/usr/bin/env bash
# Builds bench/gpu_gemm_core.cu against the GEMM core (base) and against each variant NAME.patch beside this script
# (applied to a copy of src/cuda/gemm_core.cuh, optional NAME.flags holding extra nvcc flags), into bin/ beside this
# script (ignored by git: carry it to the device), with ptxas' register and spill report of each kernel in
# bin/NAME.ptxas. Runs where nvcc is (no GPU needed).
set -eu
here=$(cd "$(dirname "$0")" && pwd); root=$(cd "$here/../.." && pwd)
rm -rf "$here/bin"; mkdir -p "$here/bin"; work=$(mktemp -d)
NVCC=${NVCC:-/usr/local/cuda/bin/nvcc}
FLAGS="-std=c++20 -O3 -arch=sm_90 --fmad=false --prec-div=true --prec-sqrt=true --ftz=false -Xcompiler -ffp-contract=off"
FLAGS="$FLAGS -I$root/src -I$root/include -I$work -Xptxas -v"
build() {
  local name=$1; shift
  $NVCC $FLAGS "$@" "$root/bench/gpu_gemm_core.cu" -o "$here/bin/$name" > "$here/bin/$name.ptxas" 2>&1 ||
    { cat "$here/bin/$name.ptxas"; exit 1; }
  # One line per kernel: TileShape<BM, BN, TN, min blocks, stages, totals in shared>, registers, spill stores.
  awk -v name="$name" '/Compiling entry function .*gemm_f32_sm80/ {
      match($0, /TileShapeILi[0-9]+ELi[0-9]+ELi[0-9]+ELi[0-9]+ELi[0-9]+ELNS1_6TotalsE[01]/)
      shape = substr($0, RSTART + 12, RLENGTH - 12); gsub(/ELi|ELNS1_6TotalsE/, ",", shape) }
    /spill stores/ { spill = $5 }
    /Used [0-9]+ registers/ && shape != "" {
      print name ": <" shape "> " $5 " registers, " spill " bytes spilled"; shape = "" }' \
    "$here/bin/$name.ptxas"
}
build base &
for patch in "$here"/*.patch; do
  [ -e "$patch" ] || continue
  name=$(basename "$patch" .patch)
  patch -s -o "$work/gemm_core_$name.cuh" "$root/src/cuda/gemm_core.cuh" < "$patch"
  build "$name" "-DCORE=\"gemm_core_$name.cuh\"" $(cat "$here/$name.flags" 2>/dev/null) &
done
wait
rm -rf "$work"
