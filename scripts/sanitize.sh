#!/usr/bin/env bash
# Checked builds, run by CI (.ci/run) after scripts/test.sh (issue 7):
#   asan    the C++ tests under AddressSanitizer + UndefinedBehaviorSanitizer (build/asan, which also builds the
#           fuzzers and the Python extension with the same flags)
#   python  the Python suite against that extension (libasan preloaded into Python), sampled: see PY_SAMPLE
#   tsan    the concurrency tests under ThreadSanitizer (build/tsan)
#   fuzz    libFuzzer on the loader and on session creation from the seed corpus of tests/fuzz/make_corpus.py,
#           FUZZ_SECONDS each (default 45: 90 s in all), after replaying every past finding in tests/fuzz/regressions/
#   scripts/sanitize.sh [asan|python|tsan|fuzz ...]      (default: all four, in that order)
# Installs clang and llvm (apt) where missing; needs scripts/setup.sh's environment for the Python stages.
# Exits non-zero on any sanitizer report, test failure or fuzzer finding.
set -euo pipefail
cd "$(dirname "$0")/.."
stages=("${@:-asan python tsan fuzz}")
stages=(${stages[*]})
. scripts/env.sh

need_apt=()
command -v clang++ >/dev/null || need_apt+=(clang)
command -v llvm-symbolizer >/dev/null || need_apt+=(llvm)
if [ ${#need_apt[@]} -gt 0 ]; then
  . scripts/apt.sh
  apt_install "${need_apt[@]}" libclang-rt-dev
fi
export CC=clang CXX=clang++
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1
jobs=${JOBS:-2}

# The Python sample under ASan: everything but the model fixtures (minutes each when instrumented), the report
# pages (they start a browser, which must not get libasan preloaded), the node runner's deliberate worker
# crash (ASan turns its SIGSEGV into an abort), the ISA comparison (every case again per ISA; the ASan C++
# tests already run the GEMM, conv, pool and elementwise kernels under every ISA) and the RSS bound of the host
# allocator (ASan's quarantine holds freed memory; the C++ allocator tests check the bound under ASan).
PY_SAMPLE=${PY_SAMPLE:-tests --ignore=tests/test_models.py --ignore=tests/test_compare.py
  --ignore=tests/test_isa_invariance.py
  --deselect tests/node/test_runner.py::test_isolated_run_survives_a_crash
  --deselect tests/test_reliability.py::test_host_memory_stays_bounded_when_every_run_has_new_sizes}

configure() {  # build folder, sanitizers, extra cmake args
  cmake -S . -B "$1" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLOCKSTEP_CUDA=OFF -DLOCKSTEP_TESTS=ON \
    -DLOCKSTEP_SANITIZE="$2" "${@:3}" >/dev/null
}

timed() {  # label, command...: runs it and prints its wall time (CI's budget is per stage)
  local start=$SECONDS
  "${@:2}"
  echo "sanitize.sh: $1 took $((SECONDS - start)) s"
}

python_under_asan() {
  # A copy of the package with the instrumented extension, first on the path; the runtime must be loaded first.
  rm -rf build/asan/pkg && mkdir -p build/asan/pkg && cp -r python/lockstep build/asan/pkg/
  rm -f build/asan/pkg/lockstep/_core*.so && cp build/asan/_core*.so build/asan/pkg/lockstep/
  # -s: an abort on a report must not be swallowed with pytest's captured output. Python itself leaks by design.
  LD_PRELOAD=$(clang -print-file-name=libclang_rt.asan-x86_64.so) ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 \
    PYTHONPATH=build/asan/pkg python3 -m pytest -q -x -s -p no:faulthandler -p no:cacheprovider $PY_SAMPLE
}

fuzz() {  # target: replays the past findings, then fuzzes; fails on a crash, a leak, a timeout or a bad start
  if compgen -G "tests/fuzz/regressions/*" >/dev/null; then build/asan/$1 tests/fuzz/regressions/*; fi
  local log=build/fuzz-findings/$1.log rc=0
  build/asan/$1 build/fuzz-corpus -max_total_time="${FUZZ_SECONDS:-45}" -timeout=10 -rss_limit_mb=2048 \
    -artifact_prefix=build/fuzz-findings/ -print_final_stats=1 >"$log" 2>&1 || rc=$?
  grep -E "^(stat::number_of_executed_units|Done)" "$log" || true
  if [ "$rc" -ne 0 ] || compgen -G "build/fuzz-findings/[a-z]*-*" >/dev/null; then
    tail -60 "$log" >&2
    echo "$1 failed (exit $rc); crashing inputs in build/fuzz-findings/: add each to tests/fuzz/regressions/ once fixed" >&2
    return 1
  fi
}

for stage in "${stages[@]}"; do
  case $stage in
    asan)
      configure build/asan address,undefined -DLOCKSTEP_FUZZ=ON -DLOCKSTEP_PYTHON=ON
      timed "asan build" ninja -j "$jobs" -C build/asan lockstep_tests fuzz_reader fuzz_session _core
      timed "asan C++ tests" build/asan/lockstep_tests --gtest_brief=1
      ;;
    python)
      [ -f build/asan/build.ninja ] || { echo "python needs the asan stage first" >&2; exit 1; }
      timed "asan Python sample" python_under_asan
      ;;
    tsan)
      configure build/tsan thread
      timed "tsan build" ninja -j "$jobs" -C build/tsan lockstep_tests
      timed "tsan concurrency tests" build/tsan/lockstep_tests --gtest_brief=1 --gtest_filter='SessionConcurrency.*:*Thread*'
      ;;
    fuzz)
      [ -x build/asan/fuzz_session ] || { echo "fuzz needs the asan stage first" >&2; exit 1; }
      python3 tests/fuzz/make_corpus.py build/fuzz-corpus
      rm -rf build/fuzz-findings && mkdir -p build/fuzz-findings
      for target in fuzz_reader fuzz_session; do timed "$target" fuzz "$target"; done
      ;;
    *) echo "unknown stage $stage (asan, python, tsan, fuzz)" >&2; exit 2 ;;
  esac
done
