#!/usr/bin/env bash
# Sets up lockstep on a fresh machine (scripts/setup.sh) and runs the demo: the Conv of onnxruntime issue
# 21220 on every available provider, compared bit for bit and against float64.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
. scripts/env.sh
python3 -m lockstep demo
