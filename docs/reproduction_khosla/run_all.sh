#!/usr/bin/env bash
# The runs behind docs/reproduction_khosla.md, one training process at a time, seeds interleaved across the jobs so
# that a stopped sequence leaves every job with its first seeds.
#
#     docs/reproduction_khosla/run_all.sh OUT [FIRST_SEED LAST_SEED [JOB ...]]
#
# JOB is BUILD:CONFIG:EPOCHS (BUILD 'default' = `dialshift build --family covariate`, 'nodedup' = the same with
# `--cov-dedup none`); default jobs: the three full configs below. The code of commit $CODE_COMMIT (default: HEAD) is
# copied once to OUT/code/<commit> and every run imports it from there, so later edits of the working tree do not
# reach runs in progress. Each run leaves OUT/BUILD/CONFIG/seed_S/ (the trainer's folder) and
# OUT/BUILD/CONFIG/seed_S/command.json (commit, command, threads, wall and CPU seconds). Finished seeds are skipped.
# Then `python docs/reproduction_khosla/collect.py OUT` copies the files the report reads.
set -euo pipefail
out=$(realpath -m "${1:?usage: run_all.sh OUT [FIRST_SEED LAST_SEED [JOB ...]]}")
first=${2:-0}
last=${3:-9}
shift $(( $# < 3 ? $# : 3 ))
jobs=("$@")
[ ${#jobs[@]} -gt 0 ] || jobs=(nodedup:hwu12_cov:2 default:clinc14_cov:2 default:hwu12_cov:2)
python=$(realpath -s "${PYTHON:-.venv/bin/python}")  # -s: a venv's python is a symlink; resolving it leaves the venv
data=$(realpath -m "${DIALSHIFT_DATA_DIR:-/work/shared/data}")
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-2} HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 TRANSFORMERS_OFFLINE=1 MPLBACKEND=Agg
commit=$(git rev-parse "${CODE_COMMIT:-HEAD}")
code="$out/code/$commit"
if [ ! -d "$code" ]; then
  # the library, the trainers and the family and metric packages (installed as dialshift_families and
  # dialshift_metrics: the entry points of the environment name them, so they must come from the same commit)
  mkdir -p "$code.tmp" && git archive "$commit" dialshift trainers dataset_scripts metrics | tar -x -C "$code.tmp"
  ln -s dataset_scripts "$code.tmp/dialshift_families" && ln -s metrics "$code.tmp/dialshift_metrics"
  mv "$code.tmp" "$code"
fi
export PYTHONPATH="$(realpath "$code")"

for build in default nodedup; do
  if [ ! -f "$out/build_$build/.dialshift-build.json" ]; then
    options=(); [ "$build" = nodedup ] && options=(--cov-dedup none)
    (cd "$code" && "$python" -m dialshift build --family covariate "${options[@]}" --data-dir "$data" --out "$out/build_$build" \
      --no-progress)  # from the copy's folder: the current one's dialshift/ would come first on sys.path
  fi
done

for seed in $(seq "$first" "$last"); do
  for job in "${jobs[@]}"; do
    IFS=: read -r build config epochs <<<"$job"
    run_dir="$out/$build/$config/seed_$seed"
    [ -f "$run_dir/run.json" ] && continue
    command=(trainers/open_world.py --dataset "$out/build_$build" --config "$config" --output-dir "$out/$build"
             --seed "$seed" --num-seeds 1 --num-epochs "$epochs" --learning-rate 1e-4 --no-progress
             --resume-from-checkpoint latest)
    start=$(date +%s.%N)
    /usr/bin/time -f "%U %S" -o "$out/time.txt" nice -n 10 "$python" "$code/${command[0]}" "${command[@]:1}" \
      >>"$out/log.txt" 2>&1
    end=$(date +%s.%N)
    read -r user sys <"$out/time.txt"
    "$python" - "$run_dir/command.json" "$commit" "$OMP_NUM_THREADS" "$start" "$end" "$user" "$sys" "$build" \
      "${command[@]}" <<'EOF'
import json, sys
path, commit, threads, start, end, user, system, build, *command = sys.argv[1:]
build_options = {"default": [], "nodedup": ["--cov-dedup", "none"]}[build]
json.dump({"commit": commit, "threads": int(threads),
           "build": ["dialshift", "build", "--family", "covariate", *build_options], "command": ["python", *command],
           "wall_seconds": round(float(end) - float(start), 1), "cpu_seconds": round(float(user) + float(system), 1)},
          open(path, "w"), indent=1)
EOF
    echo "$(date -u +%H:%M:%S) $build $config seed $seed done" >>"$out/progress.txt"
  done
done
