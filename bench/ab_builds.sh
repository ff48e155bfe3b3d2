#!/usr/bin/env bash
# Two builds of the Python package side by side, processes alternating: ROUNDS rounds of "old" then "new".
#   bash bench/ab_builds.sh ROUNDS SCRIPT [ARGS...]
# It needs /tmp/pkg_old/lockstep and /tmp/pkg_new/lockstep: copies of python/lockstep with the _core extension of
# each build copied in, not linked (mkdir -p /tmp/pkg_new && cp -rL python/lockstep /tmp/pkg_new/ after building).
# Each process's output follows a line "== old" or "== new"; bench/summarize_ab.py reads the output of
# bench/cpu_models.py or bench/conv_cpu.py.
r=$1; shift
for v in old new; do
  # A missing package would silently import whatever lockstep is installed: both sides the same build.
  [ -f "/tmp/pkg_$v/lockstep/__init__.py" ] || { echo "ab_builds.sh: /tmp/pkg_$v/lockstep is missing" >&2; exit 1; }
done
for i in $(seq "$r"); do
  for v in old new; do echo "== $v"; PYTHONPATH=/tmp/pkg_$v python3 "$@"; done
done
