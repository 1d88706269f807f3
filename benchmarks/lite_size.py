#!/usr/bin/env python
"""The lite track's size arithmetic: the pairs a lite submission scores, its CPU time, and the interval widths.

    python benchmarks/lite_size.py [--dataset FOLDER] [--pairs-per-second 50]

Prints, for every family, its configs, the most (config, instance, candidate) pairs a lite submission scores (every
config x ``LITE_SIZE`` x its candidates; ``dialshift evaluate`` scores a pair shared by configs once, so a real run is
at most this) and the minutes at ``--pairs-per-second`` (about 50 for the MiniLM ranker on the 2-core CPU,
``benchmarks/ranker.py``); then the 95 % half-width of a proportion (R@1, accuracy) measured on ``LITE_SIZE``
instances, for the accuracies Lee et al. (2022, Table 3, vanilla) report from the unshifted test (0.895) to UW 0.50
(0.441), beside the same on the full test split when ``--dataset`` gives a built folder (its real lite/test rows).
The binomial half-width is 1.96 sqrt(p (1 - p) / n); the page's percentile bootstrap is close to it.
"""

import argparse
import math

from dialshift.lite import LITE_SIZE, LITE_SPLIT, SOURCE_SPLIT

#: R@1/10 of the vanilla ranker in Lee et al. (2022), Appendix B, Table 3: test, UW 0.20, UW 0.35, UW 0.50.
PAPER_ACCURACY = {"test": 0.895, "uw_0.20": 0.790, "uw_0.35": 0.626, "uw_0.50": 0.441}
CANDIDATES = {"response_ranking": 10, "pairwise_selection": 2}


def half_width(p: float, n: int) -> float:
    return 1.96 * math.sqrt(p * (1 - p) / n)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dataset", default=None, help="a built folder: read its real lite/test row counts")
    parser.add_argument("--pairs-per-second", type=float, default=50.0)
    args = parser.parse_args()
    from dialshift.registry import families

    print(f"lite split: at most {LITE_SIZE} rows of each config's {SOURCE_SPLIT} split\n")
    print(f"{'family':<12} {'task':<22} {'configs':>7} {'(optional)':>10} {'pairs':>8} {'minutes':>8} "
          f"{'without optional':>17}")
    for family in families().values():
        by_task = {}
        for config in family.configs():
            by_task.setdefault(config.task, []).append(config)
        for task, configs in sorted(by_task.items()):
            if task not in CANDIDATES:
                continue
            pairs = len(configs) * LITE_SIZE * CANDIDATES[task]
            optional = sum(config.optional for config in configs)
            plain = (len(configs) - optional) * LITE_SIZE * CANDIDATES[task]
            print(f"{family.name:<12} {task:<22} {len(configs):>7} {optional:>10} {pairs:>8,} "
                  f"{pairs / args.pairs_per_second / 60:>8.1f} {plain / args.pairs_per_second / 60:>17.1f}")
    rows = {}
    if args.dataset:
        from dialshift.hub.reading import card_infos

        infos = card_infos(args.dataset)
        if "dailydialog" in infos:
            rows = {split: infos["dailydialog"].splits[split].num_examples for split in (LITE_SPLIT, SOURCE_SPLIT)}
    n_full = rows.get(SOURCE_SPLIT)
    print(f"\n95% half-width of R@1/10 (binomial) at the paper's accuracy, n = {LITE_SIZE}"
          + (f" (lite) vs {n_full:,} (full test)" if n_full else ""))
    for name, p in PAPER_ACCURACY.items():
        print(f"  {name:<8} p={p:.3f}  lite ±{half_width(p, LITE_SIZE):.3f}"
              + (f"  full ±{half_width(p, n_full):.3f}" if n_full else ""))


if __name__ == "__main__":
    main()
