#!/usr/bin/env bash
# Set up, then run the test suite (extra arguments go to pytest, e.g. `-k hub` or `-m "not data"`).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 TRANSFORMERS_OFFLINE=1 MPLBACKEND=Agg
exec .venv/bin/python -m pytest -q "$@"
