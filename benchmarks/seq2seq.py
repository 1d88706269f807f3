#!/usr/bin/env python
"""Seq2seq throughput: training tokens/s of each structure, and the scoring time of the nine distracting sets.

    python benchmarks/seq2seq.py --dataset FOLDER [--steps 5] [--batch-size 64] [--dim 64] [--threads 1]

Training: for each of the five structures (and each with the attention loss on self-contained distractions at
probability 0.7), ``--steps`` optimisation steps of ``trainers/seq2seq.py``'s loss on batches of the ``ubuntu``
train split (Adam); tokens/s counts the context tokens read plus the response tokens predicted, timed over the steps
after a warm-up step. Scoring: predictions with random attention scores for every row of the nine
``ubuntu_distract_*`` test sets, scored by ``dialshift.scoring.score_files`` (the ``attention_distribution`` task,
``--replicates`` bootstrap replicates); the time excludes writing the predictions. Prints one JSON document.
"""

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def training(args) -> dict:
    import numpy as np
    import torch

    sys.path.insert(0, str(ROOT))
    from dialshift.models.seq2seq import STRUCTURES, collate
    from trainers.seq2seq import Seq2SeqTask, parse_args

    class Device:
        device, process_index, num_processes = "cpu", 0, 1

    result = {}
    for structure in STRUCTURES:
        for probability in (0.0, 0.7):
            options = parse_args(["--dataset", str(args.dataset), "--output-dir", "unused", "--structure", structure,
                                  "--train-probability", str(probability), "--dim", str(args.dim),
                                  "--batch-size", str(args.batch_size), "--max-train-instances",
                                  str(args.batch_size * (args.steps + 1)), "--max-eval-instances", "10"])
            task = Seq2SeqTask(options)
            model = task.build(Device())
            task.accelerator = Device()
            optimizer = task.optimizer(model, type("A", (), {"learning_rate": 1e-3, "weight_decay": 0.0})())
            batches = task.epoch_batches(0, np.random.default_rng(0))[: args.steps + 1]
            tokens, seconds = 0, 0.0
            for number, batch in enumerate(batches):
                started = time.perf_counter()
                loss = task.loss(model, batch)
                loss.backward()
                optimizer.step()
                optimizer.zero_grad()
                if number:  # the first step warms up
                    seconds += time.perf_counter() - started
                    examples = task.distracted([task.train_rows[i] for i in batch[1]], 0)
                    collated = collate(task.vocab, examples)
                    tokens += int(collated.token_lengths.sum() + collated.target_mask.sum())
            name = structure + ("" if probability == 0 else "+attention_loss_p0.7")
            result[name] = {"tokens_per_second": round(tokens / seconds), "steps_per_second": round(args.steps /
                                                                                                   seconds, 3)}
            print(name, result[name], file=sys.stderr)
    result["torch_threads"] = torch.get_num_threads()
    return result


def scoring(args) -> dict:
    import numpy as np

    from dialshift.scoring import ScoringSettings, score_files
    from dialshift.scoring.predictions import write_predictions
    from trainers.seq2seq import load_rows

    rng = np.random.default_rng(0)
    names = [f"ubuntu_distract_{suffix}" for suffix in ("random_0.5", "random_0.7", "random_1.0", "frequent_begin",
                                                        "frequent_middle", "frequent_end", "rare_begin", "rare_middle",
                                                        "rare_end")]
    with tempfile.TemporaryDirectory() as folder:
        files, rows = {}, 0
        for name in names:
            test = load_rows(args.dataset, name, "test")
            files[name] = write_predictions(Path(folder) / f"{name}.jsonl", "attention_distribution",
                                            [row["id"] for row in test],
                                            {"attention_scores": [rng.random(len(row["context"])) * 2 for row in test]})
            rows += len(test)
        started = time.perf_counter()
        score_files(files, ScoringSettings(dataset=Path(args.dataset), replicates=args.replicates))
        seconds = time.perf_counter() - started
    return {"configs": len(names), "rows": rows, "replicates": args.replicates, "seconds": round(seconds, 2)}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dataset", type=Path, required=True, help="folder built by `dialshift build --family "
                                                                    "distracting`")
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--dim", type=int, default=64)
    parser.add_argument("--threads", type=int, default=1, help="torch CPU threads")
    parser.add_argument("--replicates", type=int, default=1000)
    parser.add_argument("--skip-training", action="store_true")
    args = parser.parse_args(argv)
    import torch

    torch.set_num_threads(args.threads)
    sys.path.insert(0, str(ROOT))
    report = {"scoring": scoring(args)}
    if not args.skip_training:
        report["training"] = training(args)
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
