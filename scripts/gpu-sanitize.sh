#!/usr/bin/env bash
# compute-sanitizer over a sample of the GPU suite (issue 7), for a GPU machine: memcheck (out-of-bounds and
# misaligned device accesses, invalid frees, CUDA API errors) and racecheck (shared-memory hazards).
#   scripts/gpu-sanitize.sh [RESULTS_DIR] [STRIDE]   (default bench/results/gpu-sanitize-<date>, every 5th case)
# The sample: every STRIDE-th CUDA cross-device op case of tests/test_cross_device.py (every op family is spread
# over the list), plus tests/test_api_values.py's CUDA tests (device feeds and outputs, IOBinding) under memcheck;
# racecheck, far slower, gets every (4 x STRIDE)-th op case. Exits non-zero when either tool reports an error.
# Set LOCKSTEP_COMMIT when the tree has no .git (a copy). Needs what scripts/gpu-check.sh needs, and
# compute-sanitizer (CUDA toolkit) on PATH or in /usr/local/cuda/bin.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:-bench/results/gpu-sanitize-$(date +%Y-%m-%d)}
stride=${2:-5}
mkdir -p "$out"
log() { echo "$@" | tee -a "$out/summary.txt"; }
: >"$out/summary.txt"
log "compute-sanitizer on the GPU suite, $(date -u +%Y-%m-%dT%H:%MZ), commit ${LOCKSTEP_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}"

sanitizer=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
[ -x "$sanitizer" ] || { log "compute-sanitizer not found"; exit 2; }
log "$("$sanitizer" --version | tail -1); $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)"
# The H100 and H200 run the sm_90 code; one architecture keeps the build short (CUDAARCHS=... to change it).
export CUDAARCHS=${CUDAARCHS:-90}
python3 -m pip install -q --no-build-isolation --no-deps . >"$out/build.log" 2>&1 || { tail -40 "$out/build.log"; exit 1; }
python3 -c "import lockstep; assert 'CUDAExecutionProvider' in lockstep.get_available_providers(), 'no CUDA provider'" \
  || exit 1

# Node ids of every k-th CUDA op case (pytest --collect-only prints one id a line, then a summary).
sample() {
  python3 -m pytest -q --collect-only tests/test_cross_device.py -k test_cuda_bit_identical 2>/dev/null |
    grep '::' | awk -v k="$1" '(NR - 1) % k == 0'
}

status=0
check() {  # tool, log name, pytest arguments...
  local tool=$1 name=$2
  shift 2
  # Tests run outside the pytest tree's temp paths unchanged; --target-processes all follows subprocesses.
  "$sanitizer" --tool "$tool" --error-exitcode 86 --target-processes all --print-limit 50 \
    python3 -m pytest -q -p no:cacheprovider "$@" >"$out/$name.log" 2>&1
  local rc=$?
  local summary
  summary=$(grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$out/$name.log" | tail -1)
  log "$name: $(grep -oE '[0-9]+ (passed|failed|skipped)' "$out/$name.log" | tr '\n' ' ')| ${summary:-no summary} (rc $rc)"
  [ "$rc" -eq 0 ] || status=1
}

mapfile -t memcheck_cases < <(sample "$stride")
mapfile -t racecheck_cases < <(sample $((4 * stride)))
log "sample: ${#memcheck_cases[@]} op cases for memcheck, ${#racecheck_cases[@]} for racecheck"
[ ${#memcheck_cases[@]} -gt 0 ] || { log "no CUDA op cases collected"; exit 1; }
check memcheck memcheck_ops "${memcheck_cases[@]}"
check memcheck memcheck_api_values tests/test_api_values.py -k cuda
check racecheck racecheck_ops "${racecheck_cases[@]}"
log "$([ $status -eq 0 ] && echo clean || echo "ERRORS: see $out/*.log")"
exit $status
