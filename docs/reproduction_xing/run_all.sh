#!/usr/bin/env bash
# The runs behind docs/reproduction_xing.md: the 23 model variants of Table 3 (Xing & Gulla 2022), three seeds each.
#
#     docs/reproduction_xing/run_all.sh OUT          # start one worker; start a second one for a second core
#
# Order: seed 0 of all 23 variants, then seeds 1 and 2 of the variants Table 3's findings compare (the four
# structures and DynamicUI at 0.0 and 0.7, Non-atten-loss StaticUI at 0.7), then seeds 1 and 2 of the rest, so that
# a stopped sequence leaves the most useful runs. Workers claim a run by creating OUT/runs/VARIANT/seed_S.claim
# (atomic mkdir), so several may run at once; a run is finished when its command.json exists (written last) and
# is skipped then; a claimed, unfinished run of a stopped worker is rerun from scratch once its .claim folder is
# removed. The code of commit $CODE_COMMIT (default: HEAD) is copied once to OUT/code/<commit> and every run imports
# it from there, so later edits of the working tree do not reach runs in progress. Each run leaves
# OUT/runs/VARIANT/seed_S/ (the trainer's folder, with predictions/ and their scores) and command.json (commit,
# command, threads, wall and CPU seconds). Then `python docs/reproduction_xing/collect.py OUT` copies the files the
# report reads.
set -euo pipefail
out=${1:?usage: run_all.sh OUT}
python=$(realpath -s "${PYTHON:-.venv/bin/python}")  # -s: a venv's python is a symlink; resolving it leaves the venv
data=${DIALSHIFT_DATA_DIR:-/work/shared/data}
export OMP_NUM_THREADS=1 HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 TRANSFORMERS_OFFLINE=1 MPLBACKEND=Agg
commit=$(git rev-parse "${CODE_COMMIT:-HEAD}")
code="$out/code/$commit"
mkdir -p "$out/runs" "$out/code"
if [ ! -d "$code" ] && mkdir "$code.tmp" 2>/dev/null; then
  git archive "$commit" dialshift trainers | tar -x -C "$code.tmp" && mv "$code.tmp" "$code"
fi
while [ ! -d "$code" ]; do sleep 1; done  # another worker is copying it
export PYTHONPATH="$(realpath "$code")"
build="$out/build"
if mkdir "$build.claim" 2>/dev/null; then
  [ -f "$build/.dialshift-build.json" ] || "$python" -m dialshift build --family distracting --config ubuntu \
    --config 'ubuntu_distract_*' --data-dir "$data" --out "$build" --no-progress
  touch "$build.claim/done"
fi
while [ ! -f "$build.claim/done" ]; do sleep 1; done

# The setting every run shares (chosen by timed pilots: the report's "Set-up" says why).
setting=(--max-train-instances 6000 --num-epochs 2 --learning-rate 3e-3 --batch-size 64 --dim 64 --vocab-size 2000
         --max-utterance-tokens 10 --max-response-tokens 10 --output-bias unigram --max-eval-instances 300
         --replicates 200 --torch-threads 1 --no-progress)
# VARIANT = STRUCTURE@PROBABILITY; STRUCTURE static_ui_no_loss is StaticUI with --no-attention-loss.
key=(static_ui@0.0 static_ui@0.7 static_ui_no_loss@0.7 static@0.0 static@0.7 non_hier@0.0 non_hier@0.7
     dynamic@0.0 dynamic@0.7 dynamic_ui@0.0 dynamic_ui@0.7)
rest=(static_ui@0.5 static_ui_no_loss@0.5 static@0.5 non_hier@0.5 dynamic@0.5 dynamic_ui@0.5
      static_ui@1.0 static_ui_no_loss@1.0 static@1.0 non_hier@1.0 dynamic@1.0 dynamic_ui@1.0)
order=()
for variant in "${key[@]}" "${rest[@]}"; do order+=("$variant:0"); done
for variant in "${key[@]}"; do order+=("$variant:1" "$variant:2"); done
for variant in "${rest[@]}"; do order+=("$variant:1" "$variant:2"); done

for job in "${order[@]}"; do
  variant=${job%:*} seed=${job##*:}
  structure=${variant%@*} probability=${variant#*@}
  run_dir="$out/runs/${structure}_p$probability/seed_$seed"
  [ -f "$run_dir/command.json" ] && continue
  mkdir -p "$(dirname "$run_dir")"
  mkdir "$run_dir.claim" 2>/dev/null || continue  # another worker has it
  rm -rf "$run_dir"  # the remains of a stopped run
  options=(--structure "${structure%_no_loss}" --train-probability "$probability")
  [ "$structure" = static_ui_no_loss ] && options+=(--no-attention-loss)
  command=(trainers/seq2seq.py --dataset "$build" --output-dir "$run_dir" --seed "$seed" "${options[@]}"
           "${setting[@]}" --predict ubuntu 'ubuntu_distract_*')
  start=$(date +%s.%N)
  if ! /usr/bin/time -f "%U %S" -o "$run_dir.time" nice -n 10 "$python" "$code/${command[0]}" "${command[@]:1}" \
      >>"$out/log.txt" 2>&1; then
    echo "$(date -u +%H:%M:%S) $variant seed $seed FAILED (see log.txt)" >>"$out/progress.txt"
    continue
  fi
  end=$(date +%s.%N)
  read -r user sys <"$run_dir.time"
  "$python" - "$run_dir/command.json" "$commit" "$start" "$end" "$user" "$sys" "${command[@]}" <<'EOF'
import json, os, sys
path, commit, start, end, user, system, *command = sys.argv[1:]
build = ["dialshift", "build", "--family", "distracting", "--config", "ubuntu", "--config", "ubuntu_distract_*"]
json.dump({"commit": commit, "threads": 1, "build": build, "command": ["python", *command],
           "wall_seconds": round(float(end) - float(start), 1), "cpu_seconds": round(float(user) + float(system), 1)},
          open(path + ".tmp", "w"), indent=1)
os.replace(path + ".tmp", path)
EOF
  rm -f "$run_dir.time"
  echo "$(date -u +%H:%M:%S) $variant seed $seed done" >>"$out/progress.txt"
done
