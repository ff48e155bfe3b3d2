#!/usr/bin/env bash
# The GPU suite: builds lockstep with CUDA on a GPU machine and checks CUDA against the CPU bit for bit.
#   scripts/gpu-check.sh [RESULTS_DIR]     (default bench/results/gpu-<date>)
# Runs: the host/device check of the scalar math (sampled), the cross-device op cases, the seed scripts,
# the model fixtures and invariance tests (pytest, CUDA tests enabled), and the ONNX node tests on CUDA
# compared bit for bit with the CPU. Prints the closing line `N passed, M failed` over all of it.
# GPU_CHECK_QUICK=1 (a short device lease): no scalar-math check, and of the benchmarks only batch 32 on CUDA.
# Set LOCKSTEP_COMMIT when the tree has no .git (a copy). Offline machines: needs numpy, onnx, onnxruntime, pytest, nanobind, scikit-build-core, cmake, ninja installed.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:-bench/results/gpu-$(date +%Y-%m-%d)}
mkdir -p "$out"
log() { echo "$@" | tee -a "$out/summary.txt"; }
: >"$out/summary.txt"
log "lockstep GPU suite, $(date -u +%Y-%m-%dT%H:%MZ), commit ${LOCKSTEP_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}"
log "$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)"
# The node tests' data and the low-precision references are onnx's conversions through ml_dtypes, which differ
# between its versions (out-of-range float -> int4, double -> float8): on another version than the pinned one,
# expect those cases to fail on both providers alike. (Offline: carry the pinned wheel and put it on PYTHONPATH.)
pinned=$(sed -n 's/^ml_dtypes==\([^ ]*\).*/\1/p' requirements-dev.txt)
found=$(python3 -c "import ml_dtypes; print(ml_dtypes.__version__)" 2>/dev/null)
[ "$found" = "$pinned" ] || log "warning: ml_dtypes $found, pinned $pinned"

jobs=$(nproc)
# The H100 and H200 run the sm_90 code; one architecture keeps the build short (CUDAARCHS=... to change it).
export CUDAARCHS=${CUDAARCHS:-90}
if ! python3 -m pip install -q --no-build-isolation --no-deps . >"$out/build.log" 2>&1; then
  tail -40 "$out/build.log"
  log "0 passed, 1 failed"
  exit 1
fi
python3 -c "import lockstep; assert 'CUDAExecutionProvider' in lockstep.get_available_providers(), 'no CUDA provider'" \
  || { log "0 passed, 1 failed"; exit 1; }

passed=0 failed=0
count() {  # parses "N passed" / "M failed" out of a log
  local p f
  p=$(grep -oE '[0-9]+ passed' "$1" | tail -1 | grep -oE '[0-9]+' || echo 0)
  f=$(grep -oE '[0-9]+ failed' "$1" | tail -1 | grep -oE '[0-9]+' || echo 0)
  passed=$((passed + ${p:-0})) failed=$((failed + ${f:-0}))
  log "$2: ${p:-0} passed, ${f:-0} failed"
}

# Host vs device bits of every scalar math function (every 7th float pattern; the CPU test covers accuracy).
quick=${GPU_CHECK_QUICK:-0}
if [ "$quick" = 1 ]; then
  log "scalar math host vs device: not run (GPU_CHECK_QUICK)"
else
  nvcc -std=c++20 -O2 -arch=sm_90 --fmad=false --prec-div=true --prec-sqrt=true --ftz=false -Xcompiler -ffp-contract=off \
    -Isrc tests/arith/math_device_check.cu -o /tmp/math_device_check
  if /tmp/math_device_check --stride 7 >"$out/math_device.log" 2>&1; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
  log "scalar math host vs device: $(grep -c ': 0 differences' "$out/math_device.log") functions with 0 differences"
fi

# The node tests on CUDA; the runner also compares every CUDA output with the CPU's bit for bit. The first run
# on a machine without tests/node/expect_cuda.txt writes it (a bit difference is recorded there as a failure).
node_args=(--runtime lockstep --provider cuda --expect tests/node/expect_cuda.txt -j "$jobs" --report "$out/node_cuda.json")
[ -f tests/node/expect_cuda.txt ] || node_args+=(--update-expectations)
python3 tests/node/runner.py "${node_args[@]}" >"$out/node_cuda.log" 2>&1
cp tests/node/expect_cuda.txt "$out/" 2>/dev/null
# Of the cases that pass on the CPU, how many pass on CUDA with the same bits (the promise), and which do not.
python3 - "$out/node_cuda.json" tests/node/expect_cpu.txt >"$out/node_cuda_promise.log" <<'PY'
import json, sys
cpu = {l.split()[0] for l in open(sys.argv[2]) if not l.startswith("#") and l.split()[1:2] == ["pass"]}
results = {r["name"]: r for r in json.load(open(sys.argv[1]))["results"]}
bad = [(n, results[n]["status"], results[n]["reason"]) for n in sorted(cpu) if results.get(n, {}).get("status") != "pass"]
for name, status, reason in bad:
    print(f"{name}: {status}: {reason}")
print(f"{len(cpu) - len(bad)} passed, {len(bad)} failed")
PY
grep -v " passed, " "$out/node_cuda_promise.log" | head -30 >>"$out/summary.txt"  # the cases that broke the promise
count "$out/node_cuda_promise.log" "ONNX node tests that pass on the CPU, run on CUDA and compared bit for bit"

parallel=()
python3 -c "import xdist" 2>/dev/null && parallel=(-n "$jobs")
PYTHONUNBUFFERED=1 python3 -m pytest -q "${parallel[@]}" -p no:cacheprovider tests >"$out/pytest.log" 2>&1
grep -E "FAILED|Error" "$out/pytest.log" | head -50 >"$out/pytest_failures.txt"
count "$out/pytest.log" "pytest (cross-device cases, seed, models, invariance; CUDA on)"

# Figures, not pass/fail: lockstep CUDA against torch eager fp32 (TF32 off), and the CPU against onnxruntime.
if [ "$quick" = 1 ]; then
  python3 bench/gpu_models.py --runs 10 --batch 32 --models resnet50,bert_base_encoder >"$out/bench_gpu.txt" 2>&1 || true
  cat "$out/bench_gpu.txt" >>"$out/summary.txt"
  log "$passed passed, $failed failed"
  [ "$failed" -eq 0 ]
  exit
fi
python3 bench/gpu_models.py --runs 10 >"$out/bench_gpu.txt" 2>&1 || true
for batch in 32 128; do
  python3 bench/gpu_models.py --runs 10 --batch "$batch" --models resnet50,bert_base_encoder >>"$out/bench_gpu.txt" 2>&1 || true
done
python3 bench/cpu_models.py --threads "$jobs" --runs 5 --models resnet50,bert_base_encoder >"$out/bench_cpu.txt" 2>&1 || true
cat "$out/bench_gpu.txt" "$out/bench_cpu.txt" >>"$out/summary.txt"

log "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
