#!/usr/bin/env bash
# Checked builds for CI (issue 7): the C++ tests under AddressSanitizer + UndefinedBehaviorSanitizer, the
# concurrency tests under ThreadSanitizer, and a short libFuzzer run of the loader and of session creation from the
# seed corpus of tests/fuzz/make_corpus.py, after replaying every past finding in tests/fuzz/regressions/.
#   scripts/sanitize.sh [asan|tsan|fuzz ...]      (default: all three; FUZZ_SECONDS per fuzzer, default 60)
# Needs clang (installed by scripts/setup.sh). Exits non-zero on any report. Build folders: build/asan, build/tsan.
set -euo pipefail
cd "$(dirname "$0")/.."
stages=("${@:-asan tsan fuzz}")
stages=(${stages[*]})
export CC=clang CXX=clang++
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1

configure() {  # build folder, sanitizers, extra cmake args
  cmake -S . -B "$1" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLOCKSTEP_CUDA=OFF -DLOCKSTEP_TESTS=ON \
    -DLOCKSTEP_SANITIZE="$2" "${@:3}" >/dev/null
}

for stage in "${stages[@]}"; do
  case $stage in
    asan)
      configure build/asan address,undefined -DLOCKSTEP_FUZZ=ON
      ninja -C build/asan lockstep_tests fuzz_reader fuzz_session
      build/asan/lockstep_tests --gtest_brief=1
      ;;
    tsan)
      configure build/tsan thread
      ninja -C build/tsan lockstep_tests
      build/tsan/lockstep_tests --gtest_brief=1 --gtest_filter='SessionConcurrency.*:*Thread*'
      ;;
    fuzz)
      [ -x build/asan/fuzz_session ] || { echo "fuzz needs the asan stage first" >&2; exit 1; }
      corpus=build/fuzz-corpus
      python3 tests/fuzz/make_corpus.py "$corpus"
      mkdir -p build/fuzz-findings
      for target in fuzz_reader fuzz_session; do
        # Past findings first: each must now be refused cleanly.
        if compgen -G "tests/fuzz/regressions/*" >/dev/null; then build/asan/$target tests/fuzz/regressions/*; fi
        build/asan/$target "$corpus" -max_total_time="${FUZZ_SECONDS:-60}" -timeout=10 -rss_limit_mb=2048 \
          -artifact_prefix=build/fuzz-findings/ -print_final_stats=1 2>&1 | grep -E "^(stat::number_of_executed_units|Done|==)" || true
        if compgen -G "build/fuzz-findings/*" >/dev/null; then
          echo "$target found inputs that crash (build/fuzz-findings/): add each to tests/fuzz/regressions/ once fixed" >&2
          exit 1
        fi
      done
      ;;
    *) echo "unknown stage $stage (asan, tsan, fuzz)" >&2; exit 2 ;;
  esac
done
