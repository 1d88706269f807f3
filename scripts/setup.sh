#!/usr/bin/env bash
# Set up a fresh machine for dialshift, idempotently: Debian's WordNet packages and headless Chromium, a virtual
# environment in .venv, the CPU build of torch, and the package with its train, dev and leaderboard extras. Safe to
# run again: it skips what is already there.
set -euo pipefail
cd "$(dirname "$0")/.."

missing=()
[ -f /usr/share/wordnet/data.noun ] || missing+=(wordnet-base)
[ -f /usr/share/wordnet/index.sense ] || missing+=(wordnet-sense-index)
# Headless Chromium and its driver: the leaderboard page test drives a real browser.
[ -x /usr/bin/chromium ] || missing+=(chromium)
[ -x /usr/bin/chromedriver ] || missing+=(chromium-driver)
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "installing Debian packages: ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

[ -x .venv/bin/python ] || python3 -m venv .venv
stamp=.venv/.dialshift-installed
if [ ! -f "$stamp" ] || [ setup.cfg -nt "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
  echo "installing Python packages into .venv (first run: a few minutes)"
  .venv/bin/python -m pip install -q --upgrade pip
  # The CPU build first: a plain `torch` requirement would pull several GB of CUDA packages.
  .venv/bin/python -m pip install -q torch==2.13.0
  .venv/bin/python -m pip install -q -e ".[train,dev,leaderboard]"
  touch "$stamp"
fi
