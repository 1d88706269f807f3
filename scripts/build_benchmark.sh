#!/usr/bin/env bash
# The main job: set up, build every benchmark config implemented so far into a local Hub dataset folder
# (default build/dialshift, or $1), validate it, and print a summary. Extra arguments go to `dialshift build`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
out="${1:-build/dialshift}"
shift || true
export HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1
.venv/bin/dialshift build --out "$out" --num-proc "$(nproc)" "$@"
.venv/bin/dialshift validate "$out"
