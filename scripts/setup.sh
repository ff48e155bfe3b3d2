#!/usr/bin/env bash
# Installs what lockstep needs to build and test (Debian packages, and pinned Python packages in a virtual
# environment), then builds and installs the Python package. Safe to re-run.
# The packages go into .venv, made here (Debian 12 and Ubuntu 24.04 refuse pip installs into the system's
# Python, PEP 668), unless a virtual environment is already active, which is then used as it is.
set -euo pipefail
cd "$(dirname "$0")/.."

. scripts/apt.sh

need_apt=()
command -v cmake >/dev/null || need_apt+=(cmake)
command -v g++ >/dev/null || need_apt+=(g++)
[ -f /usr/include/gtest/gtest.h ] || need_apt+=(libgtest-dev)
# The headless browser that tests/test_compare.py opens `lockstep compare --report` pages in.
command -v chromium >/dev/null || command -v chromium-browser >/dev/null || need_apt+=(chromium)
if [ ${#need_apt[@]} -gt 0 ]; then
  apt_install "${need_apt[@]}"
fi

if [ -z "${VIRTUAL_ENV:-}" ] && [ ! -f .venv/bin/activate ]; then
  # Without Debian's python3-venv, venv cannot install pip into the environment; add it and try again.
  python3 -m venv .venv 2>/dev/null || { rm -rf .venv; apt_install python3-venv; python3 -m venv .venv; }
fi
. scripts/env.sh
python3 -m pip install -q -r requirements-dev.txt
python3 -m pip install -q --no-build-isolation .
