#!/usr/bin/env bash
# The CPU runs behind the "CPU run on the current build" section of docs/reproduction_lee.md.
#
#     docs/reproduction_lee/run_all.sh OUT [WORKERS]
#     JOIN=1 docs/reproduction_lee/run_all.sh OUT [WORKERS]   # add workers to a run in progress
#
# Builds the DailyDialog family into OUT/build, trains one MiniLM ranker per seed in $SEEDS (OUT/rankers/seed_S) and
# scores each with `dialshift evaluate` on $CONFIGS, $MAX_INSTANCES instances per config (the same ids wherever a
# config holds them): vanilla and temperature into OUT/eval/seed_S/vanilla_temperature, then MC dropout of the
# rankers in $DROPOUT_SEEDS into OUT/eval/seed_S/dropout ($DROPOUT_CONFIGS, $DROPOUT_INSTANCES per config). The
# defaults below are the runs of the report. The seeds with MC dropout come first, so that a run stopped early still
# holds them. The jobs run in that order on WORKERS
# (default 2) processes at `nice -n 10` with $OMP_NUM_THREADS (default 1) torch threads each; a job starts once the
# ranker it needs exists, so scoring seed 0 overlaps training seed 1. The code of commit $CODE_COMMIT (default: HEAD)
# is copied once to OUT/code/<commit> and every job imports it from there. Each job leaves command.json beside its
# output (commit, command, threads, wall and CPU seconds); finished jobs are skipped on a re-run. Then
# `python docs/reproduction_lee/collect.py OUT` copies the files the report reads.
set -euo pipefail
out=$(realpath -m "${1:?usage: run_all.sh OUT [WORKERS]}")
workers=${2:-2}
seeds=(${SEEDS:-0 1 2 3 4})
configs=(${CONFIGS:-dailydialog uw_0.10 uw_0.30 uw_0.50 kw_0.50 ic_0of6 ic_2of6 ic_4of6 ic_5of6 sr_6 sr_4 sr_2})
max_instances=${MAX_INSTANCES:-100}
dropout_seeds=(${DROPOUT_SEEDS:-0 1 2})
dropout_configs=(${DROPOUT_CONFIGS:-dailydialog uw_0.50})
dropout_instances=${DROPOUT_INSTANCES:-$max_instances}
python=$(realpath -s "${PYTHON:-.venv/bin/python}")  # -s: a venv's python is a symlink; resolving it leaves the venv
data=${DIALSHIFT_DATA_DIR:-/work/shared/data}
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1} MKL_NUM_THREADS=${OMP_NUM_THREADS:-1} HF_HUB_OFFLINE=1
export HF_DATASETS_OFFLINE=1 TRANSFORMERS_OFFLINE=1 MPLBACKEND=Agg
commit=$(git rev-parse "${CODE_COMMIT:-HEAD}")
code="$out/code/$commit"
if [ ! -d "$code" ]; then
  # the family and metric packages too (installed as dialshift_families and dialshift_metrics: the environment's entry
  # points name them, so they must come from the same commit)
  mkdir -p "$code.tmp" && git archive "$commit" dialshift trainers dataset_scripts metrics | tar -x -C "$code.tmp"
  ln -s dataset_scripts "$code.tmp/dialshift_families" && ln -s metrics "$code.tmp/dialshift_metrics"
  mv "$code.tmp" "$code"
fi
export PYTHONPATH="$code"
build=(-m dialshift build --family dailydialog --data-dir "$data" --out "$out/build" --no-progress)

# One job: NAME DONE_FILE NEEDED_FILE OUTPUT_DIR COMMAND... (run from $code, timed, command.json written last but one)
run_job() {
  local name=$1 done_file=$2 needed=$3 dir=$4
  shift 4
  mkdir -p "$dir"
  local start end user sys
  start=$(date +%s.%N)
  # a failed job (non-zero exit, or killed) is reported by the worker; it must not end the worker (set -e)
  (cd "$code" && /usr/bin/time -f "%U %S" -o "$dir.time" nice -n 10 "$python" "$@") >>"$out/log.txt" 2>&1 || true
  [ -f "$done_file" ] || return 0
  end=$(date +%s.%N)
  read -r user sys < <(tail -n 1 "$dir.time")
  "$python" - "$dir/command.json" "$commit" "$OMP_NUM_THREADS" "$start" "$end" "$user" "$sys" "$@" <<'EOF'
import json, sys
path, commit, threads, start, end, user, system, *command = sys.argv[1:]
json.dump({"commit": commit, "threads": int(threads), "command": ["python", *command],
           "wall_seconds": round(float(end) - float(start), 1), "cpu_seconds": round(float(user) + float(system), 1)},
          open(path, "w"), indent=1)
EOF
  echo "$(date -u +%H:%M:%S) $name done" >>"$out/progress.txt"
}

# The job list, in order: NAME|DONE_FILE|NEEDED_FILE|OUTPUT_DIR|ARGUMENTS (space-separated, no spaces inside).
jobs_list() {
  local seed
  for seed in "${seeds[@]}"; do  # the seeds with MC dropout first, then their dropout jobs, then the other seeds
    [[ " ${dropout_seeds[*]} " == *" $seed "* ]] && seed_jobs "$seed"
  done
  for seed in "${dropout_seeds[@]}"; do
    echo "dropout $seed|$out/eval/seed_$seed/dropout/dropout/results.json|$out/rankers/seed_$seed/dialshift_model.json\
|$out/eval/seed_$seed/dropout|-m dialshift evaluate --model-dir $out/rankers/seed_$seed --method dropout \
--out $out/eval/seed_$seed/dropout --dataset $out/build --configs ${dropout_configs[*]} \
--max-instances $dropout_instances --no-plots --no-progress"
  done
  for seed in "${seeds[@]}"; do
    [[ " ${dropout_seeds[*]} " == *" $seed "* ]] || seed_jobs "$seed"
  done
}

# Training and vanilla/temperature scoring of one seed.
seed_jobs() {
  local seed=$1 ranker="$out/rankers/seed_$1"
  local common="--dataset $out/build --configs ${configs[*]} --max-instances $max_instances --no-plots --no-progress"
  echo "train $seed|$ranker/dialshift_model.json|$out/build/.dialshift-build.json|$ranker|trainers/ranker.py \
--dataset $out/build --output-dir $ranker --seed $seed --max-train-instances 144 --max-eval-instances 100 \
--max-length 128 --learning-rate 1e-4 --eval-steps 6 --no-progress"
  echo "vanilla+temperature $seed|$out/eval/seed_$seed/vanilla_temperature/temperature/results.json|\
$ranker/dialshift_model.json|$out/eval/seed_$seed/vanilla_temperature|-m dialshift evaluate --model-dir $ranker \
--method vanilla temperature --out $out/eval/seed_$seed/vanilla_temperature $common"
}

# A worker takes the first job not done, not claimed by another worker and whose input exists; it waits while only
# jobs whose input is still being made are left.
worker() {
  while :; do
    local pending=0 line name done_file needed dir arguments claim
    while IFS='|' read -r name done_file needed dir arguments; do
      [ -f "$done_file" ] && continue
      pending=1
      claim="$out/claims/${name// /_}"
      [ -f "$needed" ] || continue
      mkdir "$claim" 2>/dev/null || continue
      touch "$claim/running"
      # shellcheck disable=SC2086  # the arguments are split on spaces on purpose
      run_job "$name" "$done_file" "$needed" "$dir" $arguments
      rm "$claim/running"  # a failed job keeps its claim: not retried by this invocation
      [ -f "$done_file" ] || echo "$(date -u +%H:%M:%S) $name FAILED (see log.txt)" >>"$out/progress.txt"
      continue 2
    done < <(jobs_list)
    [ "$pending" = 1 ] || return 0
    compgen -G "$out/claims/*/running" >/dev/null || return 1  # nothing runs, nothing can start: a job failed
    sleep 20
  done
}

mkdir -p "$out"
[ -n "${JOIN:-}" ] || { rm -rf "$out/claims" && mkdir -p "$out/claims"; }  # JOIN=1: more workers for a running run
if [ ! -f "$out/build/.dialshift-build.json" ]; then
  run_job build "$out/build/.dialshift-build.json" - "$out/build_command" "${build[@]}"
fi
for _ in $(seq "$workers"); do worker & sleep 1; done
wait
