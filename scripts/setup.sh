#!/usr/bin/env bash
# Set up a fresh machine for dialshift, idempotently: Debian's WordNet packages and headless Chromium, a virtual
# environment in .venv, the CPU build of torch, and the package with its train, dev, leaderboard and lm-eval
# extras. Safe to run again: it skips what is already there.
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
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ] || [ setup.py -nt "$stamp" ] || [ constraints.txt -nt "$stamp" ]
then
  echo "installing Python packages into .venv (first run: a few minutes)"
  pip=(.venv/bin/python -m pip install -q -c constraints.txt)
  .venv/bin/python -m pip install -q --upgrade pip
  # The CPU build of torch, chosen explicitly: a plain `torch` requirement would pull several GB of CUDA packages.
  # The pin carries the +cpu label, so no other build can satisfy it. This machine's pip finds that wheel through
  # its own configuration (find-links in /etc/pip.conf); elsewhere it comes from PyTorch's CPU index
  # ($DIALSHIFT_TORCH_INDEX to use another).
  torch_cpu="torch==$(sed -n 's/^torch==//p' constraints.txt)+cpu"
  if ! "${pip[@]}" "$torch_cpu" 2>/dev/null; then
    "${pip[@]}" --index-url "${DIALSHIFT_TORCH_INDEX:-https://download.pytorch.org/whl/cpu}" \
      --extra-index-url https://pypi.org/simple "$torch_cpu"
  fi
  # The package with every extra, at the exact versions the test suite runs with (ranges are in pyproject.toml).
  "${pip[@]}" -e ".[train,dev,leaderboard,lm-eval]"
  touch "$stamp"
fi
