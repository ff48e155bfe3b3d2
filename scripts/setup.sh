#!/usr/bin/env bash
# Installs what lockstep needs to build and test (Debian packages and pinned Python packages), then builds and
# installs the Python package. Safe to re-run.
set -euo pipefail
cd "$(dirname "$0")/.."

need_apt=()
command -v cmake >/dev/null || need_apt+=(cmake)
command -v g++ >/dev/null || need_apt+=(g++)
[ -f /usr/include/gtest/gtest.h ] || need_apt+=(libgtest-dev)
if [ ${#need_apt[@]} -gt 0 ]; then
  apt-get update -q && apt-get install -y -q "${need_apt[@]}"
fi
python3 -m pip install -q -r requirements-dev.txt
python3 -m pip install -q --no-build-isolation .
