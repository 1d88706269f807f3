"""Benchmark: the meaning-keeping Unknown Word mode on a corpus it was not designed on: rows kept, speed, a sample.

    python benchmarks/uw_meaning.py [--corpus ubuntu_irc|dailydialog] [--ratio 0.3] [--rounding ceil]
                                    [--fit minilm|none|FOLDER] [--fit-min F] [--fit-prefer F]
                                    [--instances N] [--sample 50]
                                    [--sample-seed 0] [--sample-out FILE] [--data-dir DIR]

Rows: every prefix of the corpus's test dialogues (messages 1..k, k < length) as a context, the first
``--instances`` of them (all by default); the vocabulary ("unknown" = unseen in it) is the same corpus's training
split, as a user shifting their own corpus would give. ``ubuntu_irc`` (Kummerfeld et al. 2019, #ubuntu IRC, 3,975
test contexts) is the foreign corpus: no UW rule was tuned on it; ``dailydialog`` is the paper's corpus.

Prints rows kept (and why the others were not), the instances per second of the cold call without disk cache
(``for_corpus`` then ``shift_dataset``, the table's disk cache in a fresh folder; split into counting the vocabulary,
filling the table, the contextual check (``--fit``, the mode's ``fit``: scoring every synonym in its context,
:mod:`dialshift.shifts.fit`) and shifting), of a second call in the same process (the table in memory) and of the cold
call with the disk cache filled (issue 34's measure: a fresh process, the time from ``for_corpus`` to the shifted rows,
the vocabulary, the cached table and the cached fit scores included; the process's imports, timed and printed apart,
and interpreter start-up not), with the load average, prints how varied the replacements are (distinct word pairs,
the share of the 10 most frequent) and writes a seeded sample of ``--sample`` replacements in context
(``dialshift.shifts.lexical.sample_replacements``) as a markdown table whose
verdict column is left for a reader (``benchmarks/uw_meaning_sample.md`` is that table for Ubuntu IRC, judged).
"""

import argparse
import os
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

TARGET = 0.90
#: Libraries a cold call with a filled disk cache should not import.
HEAVY = ("nltk", "scipy", "sklearn", "torch", "transformers")


def corpus_rows(name: str, data_dir: Path, limit: int | None) -> tuple[list[str], list[dict]]:
    """Training texts and test contexts (every proper prefix of every test dialogue) of a corpus."""
    if name == "dailydialog":
        from dialshift.sources import dailydialog

        dialogues = dailydialog.read(data_dir)
        train = [turn for dialogue in dialogues["train"] for turn in dialogue.turns]
        test = [(dialogue.id, list(dialogue.turns)) for dialogue in dialogues["test"]]
    else:
        from dialshift.sources import ubuntu_irc

        conversations = ubuntu_irc.read(data_dir)
        train = [message.text for conversation in conversations["train"] for message in conversation.messages]
        test = [(conversation.id, [message.text for message in conversation.messages])
                for conversation in conversations["test"]]
    rows = [{"id": f"{uid}:{k}", "context": turns[:k]} for uid, turns in test for k in range(1, len(turns))]
    return train, rows[:limit] if limit else rows


def fresh_process_call(train: list[str], rows: list[dict], cache: str, params: dict, results) -> None:
    """In a spawned process: import ``datasets`` and ``dialshift.shifts``, then the first UW call (``for_corpus`` and
    ``shift_dataset``) with the disk cache ``cache``; put the seconds of the imports and of the call, and the heavy
    libraries the process imported (none of :data:`HEAVY` when the cache holds every word and every fit), into
    ``results``."""
    start = time.perf_counter()
    from datasets import Dataset, disable_progress_bars

    from dialshift.shifts import UnknownWord, shift_dataset

    disable_progress_bars()
    imported = time.perf_counter()
    data = Dataset.from_list(rows)  # the user's rows, made before the call
    called = time.perf_counter()
    shift = UnknownWord.for_corpus(train, cache=cache, **params)
    shift_dataset(data, shift)
    done = time.perf_counter()
    heavy = [name for name in HEAVY if name in sys.modules]
    results.put((imported - start, done - called, heavy))


def sample_table(sample: list[dict]) -> str:
    lines = ["| # | id | turn:index | replacement | utterance (shifted) | plausible | reason |",
             "|---:|---|---|---|---|---|---|"]
    for number, item in enumerate(sample, 1):
        utterance = " ".join(item["utterance"].split()).replace("|", "\\|")
        lines.append(f"| {number} | {item['id']} | {item['turn']}:{item['index']} | "
                     f"`{item['original']} -> {item['replacement']}` | {utterance} |  |  |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", default="ubuntu_irc", choices=("ubuntu_irc", "dailydialog"))
    parser.add_argument("--ratio", type=float, default=0.3)
    parser.add_argument("--rounding", default="ceil", choices=("floor", "round", "ceil"))
    parser.add_argument("--unseen", choices=("required", "preferred", "optional"),
                        help="the mode's unseen rule (default: the mode's default, preferred)")
    parser.add_argument("--fit", help="the mode's contextual check: minilm, none or a model folder (default: the "
                                      "mode's default, minilm)")
    parser.add_argument("--fit-min", type=float, help="the check's fit_min (default: the mode's)")
    parser.add_argument("--fit-prefer", type=float, help="the check's fit_prefer (default: the mode's)")
    parser.add_argument("--instances", type=int, help="at most this many contexts (default: all)")
    parser.add_argument("--sample", type=int, default=50, help="replacements in the sample (default 50)")
    parser.add_argument("--sample-seed", type=int, default=0, help="seed of the sample (default 0, the judged one)")
    parser.add_argument("--sample-out", help="write the sample's markdown table here (default: print it)")
    parser.add_argument("--data-dir", help="raw data directory (default: $DIALSHIFT_DATA_DIR or ../shared/data)")
    args = parser.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ["HF_DATASETS_CACHE"] = tempfile.mkdtemp(prefix="dialshift-bench-hf-")

    import datasets
    from datasets import Dataset

    from dialshift.data_dir import resolve_data_dir
    from dialshift.shifts import UnknownWord, shift_dataset
    from dialshift.shifts.lexical import prepare_synonyms, sample_replacements

    datasets.disable_progress_bars()
    datasets.disable_caching()
    train, rows = corpus_rows(args.corpus, resolve_data_dir(args.data_dir), args.instances)
    cache = tempfile.mkdtemp(prefix="dialshift-bench-uw-cache-")
    params = {"ratio": args.ratio, "rounding": args.rounding, "mode": "meaning"}
    if args.unseen:
        params["unseen"] = args.unseen
    for name in ("fit", "fit_min", "fit_prefer"):
        if getattr(args, name) is not None:
            params[name] = getattr(args, name)
    rates, parts = {}, {}
    for name in ("cold call, no disk cache", "second call (warm table)"):
        data = Dataset.from_list(rows)
        start = time.perf_counter()
        if name.startswith("cold"):
            shift = UnknownWord.for_corpus(train, cache=cache, **params)
            parts["vocabulary (for_corpus)"] = time.perf_counter() - start
            contexts = [row["context"] for row in rows]
            prepare_synonyms(shift.synonyms, contexts)  # shift_dataset's own prepare then finds the table full
            parts["table (WordNet import, open, fill)"] = time.perf_counter() - start - parts["vocabulary (for_corpus)"]
            shift.prepare(contexts)  # the table full: the contextual check of every turn
            parts["contextual check (fit)"] = time.perf_counter() - start - sum(parts.values())
        shifted, report = shift_dataset(data, shift, return_report=True)
        rates[name] = len(rows) / (time.perf_counter() - start)
        if name.startswith("cold"):
            parts["shifting the rows"] = time.perf_counter() - start - sum(parts.values())
    import multiprocessing

    context = multiprocessing.get_context("spawn")
    results = context.Queue()
    child = context.Process(target=fresh_process_call, args=(train, rows, cache, params, results))
    child.start()
    import_seconds, seconds, heavy = results.get()
    child.join()
    rates["cold call, disk cache filled"] = len(rows) / seconds
    kept = report.shifted / max(report.rows, 1)
    verdict = "meets" if kept >= TARGET else "misses"
    fit = shift.params.fit if shift.params.fit == "none" else \
        f"{shift.params.fit} (fit_min {shift.params.fit_min}, fit_prefer {shift.params.fit_prefer})"
    print(f"UW mode=meaning unseen={shift.params.unseen} fit={fit} ratio={args.ratio} rounding={args.rounding} on "
          f"{args.corpus} (vocabulary: its training split, {len(shift.synonyms.vocabulary.counts):,} distinct tokens)")
    print(f"  rows kept: {report.shifted:,} of {report.rows:,} ({kept:.1%}; {verdict} the {TARGET:.0%} target)")
    for reason, count in sorted(report.skipped.items()):
        print(f"    not shifted, {reason}: {count:,}")
    pairs = Counter((item["original"].lower(), item["replacement"].lower())
                    for items in shifted["replacements"] for item in items)
    replacements = sum(pairs.values())
    print(f"  replacements: {replacements:,} ({replacements / max(report.shifted, 1):.2f} per shifted row); "
          f"{len(pairs):,} distinct word pairs, the 10 most frequent "
          f"{sum(n for _, n in pairs.most_common(10)) / max(replacements, 1):.0%} of them: "
          + ", ".join(f"{a} -> {b} {n:,}" for (a, b), n in pairs.most_common(5)) + ", ...")
    for name, rate in rates.items():
        print(f"  {name:<36} {rate:>9,.0f} instances/s")
    print(f"  (cold call: a fresh process, from for_corpus to the shifted rows; its imports of datasets and "
          f"dialshift.shifts took {import_seconds:.1f} s before it; it imported "
          f"{', '.join(heavy) if heavy else 'none of ' + ', '.join(HEAVY)}; "
          f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs)")
    print("  cold call without disk cache, seconds: "
          + ", ".join(f"{part} {taken:.1f}" for part, taken in parts.items())
          + f"; the issue's bar: {len(rows) / 1000:.1f} s in all (1,000 instances/s)")
    sample = sample_replacements(shifted.to_list(), size=args.sample, seed=args.sample_seed)
    table = sample_table(sample)
    if args.sample_out:
        Path(args.sample_out).write_text(table, encoding="utf-8")
        print(f"  sample of {len(sample)} replacements written to {args.sample_out}")
    else:
        print(table, end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
