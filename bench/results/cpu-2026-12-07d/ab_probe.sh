#!/bin/bash
# usage: abprobe.sh ROUNDS SECS probe args...
rounds=$1; secs=$2; shift 2
for r in $(seq $rounds); do
  for v in old new; do
    out=$(PYTHONPATH=/tmp/pkg_$v /work/main/.venv/bin/python "$@" | tail -1)
    echo "$v $out"
  done
done
