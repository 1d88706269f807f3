"""DailyDialog shift family (Lee et al., 2022): ``source``, ``uw_*``, ``kw_*``, ``uw_imp_*``, ``ic_*``, ``sr_*``.

Declares the configs, the shared features (the *Fields* part of ``hub_cards/dailydialog.md``), the build
options, the statistics and the card section; the transformations themselves live in :mod:`dialshift.shifts` (pipeline:
:mod:`dialshift.shifts.dailydialog`).
"""

import fnmatch
import hashlib
import multiprocessing
import string
from importlib import resources
from pathlib import Path

from dialshift.errors import DialshiftError
from dialshift.registry import BuildContext, ConfigInfo, Family, register_family
from dialshift.shifts.context import IC_SELECTIONS
from dialshift.shifts.dailydialog import (
    IC_WINDOW,
    IMPORTANCE_RATIO,
    UW_RATIOS,
    DailyDialogShifts,
    ShiftOptions,
    config_names,
    parse_config,
    ratio_name,
)
from dialshift.shifts.replace import KW_RULES, ROUNDING

#: Lee et al. (2022) Table 1: ratio -> (UW instances, UW mean targets, KW instances, KW mean targets).
PAPER_TABLE1 = {
    0.05: (5481, 3.82, 5481, 3.82), 0.10: (6229, 7.26, 6229, 7.26), 0.15: (6513, 10.63, 6512, 10.64),
    0.20: (6609, 14.20, 6611, 14.20), 0.25: (6604, 17.88, 6618, 17.85), 0.30: (6550, 21.57, 6561, 21.54),
    0.35: (6354, 25.50, 6456, 25.38), 0.40: (5831, 30.02, 6060, 29.65), 0.45: (4746, 33.30, 5137, 33.41),
    0.50: (2787, 32.99, 3130, 33.92),
}
PAPER_TABLE2 = {1: (5925, 6.58), 2: (5925, 6.98), 3: (5925, 6.98), 4: (5925, 6.98), 5: (5925, 7.39)}
PAPER_SOURCE_TEST, PAPER_IC = 6639, 2370

CITATION = """@inproceedings{lee-etal-2022-evaluating,
  title = {Evaluating Predictive Uncertainty under Distributional Shift on Dialogue Dataset},
  author = {Lee, Nyoungwoo and Park, ChaeHun and Choi, Ho-Jin},
  booktitle = {Proceedings of the 29th International Conference on Computational Linguistics (COLING)},
  year = {2022}
}
@inproceedings{li-etal-2017-dailydialog,
  title = {{D}aily{D}ialog: A Manually Labelled Multi-turn Dialogue Dataset},
  author = {Li, Yanran and Su, Hui and Shen, Xiaoyu and Li, Wenjie and Cao, Ziqiang and Niu, Shuzi},
  booktitle = {Proceedings of the Eighth International Joint Conference on Natural Language Processing (IJCNLP)},
  year = {2017},
  pages = {986--995}
}
@book{fellbaum-1998-wordnet,
  title = {{WordNet}: An Electronic Lexical Database},
  editor = {Fellbaum, Christiane},
  publisher = {MIT Press},
  year = {1998}
}"""

DESCRIPTIONS = {
    "source": "DailyDialog response ranking (10 candidates), train/validation/test",
    "uw": "Unknown Word: {pct}% of the context's tokens replaced by WordNet synonyms unseen in training",
    "kw": "Known Word control: the uw_{ratio} targets replaced by words seen >5,000 times in training",
    "uw_imp": "Unknown Word at ratio 0.20 restricted to importance bucket {value} of 5 (needs --importance-model)",
    "ic": "Insufficient Context: the first {value} of the last 6 context turns deleted",
    "sr": "Source-length control: test instances whose real context has {value} turn(s)",
}


def features():
    """The features every DailyDialog config shares (described in ``hub_cards/dailydialog.md``)."""
    from datasets import Features, List, Value

    return Features({
        "id": Value("string"),
        "dialogue_id": Value("string"),
        "turn": Value("int32"),
        "context": List(Value("string")),
        "candidates": List(Value("string")),
        "label": Value("int32"),
        "context_turns": Value("int32"),
        "replacements": List({"turn": Value("int32"), "index": Value("int32"), "original": Value("string"),
                              "replacement": Value("string")}),
        "deleted_turns": List(Value("string")),
    })


def to_dataset(rows: list[dict]):
    """Rows -> ``datasets.Dataset`` through one typed Arrow table (much faster than ``Dataset.from_dict``)."""
    import pyarrow as pa
    from datasets import Dataset, DatasetInfo

    schema = features()
    table = pa.Table.from_pydict({name: [row[name] for row in rows] for name in schema},
                                 schema=schema.arrow_schema)
    return Dataset(table, info=DatasetInfo(features=schema))


_WORKER_SHIFTS: DailyDialogShifts | None = None


#: The train source config is built in this many dialogue ranges, whatever --num-proc is (same chunks, same bytes).
TRAIN_PARTS = 8


def _dataset_job(job):
    name, split, part, parts = job
    return to_dataset(_WORKER_SHIFTS.rows(parse_config(name), split, part, parts))


def steps_iter(iterable, bar):
    for item in iterable:
        bar.update()
        yield item


def _fingerprint_model(model_dir: Path) -> str:
    digest = hashlib.sha256()
    for file in sorted(model_dir.glob("*")):
        if file.is_file() and file.suffix in (".json", ".safetensors", ".bin", ".txt"):
            digest.update(file.name.encode() + b"\0" + file.read_bytes())
    return digest.hexdigest()[:16]


class DailyDialogFamily(Family):
    name = "dailydialog"
    description = "DailyDialog response ranking under Unknown Word / Insufficient Context shifts (Lee et al., 2022)"
    license = "cc-by-nc-sa-4.0"
    citation = CITATION
    languages = ("en",)
    task_categories = ("text-retrieval",)

    def __init__(self):
        self.last_build: dict = {}

    def configs(self) -> list[ConfigInfo]:
        return [ConfigInfo(name, self.name, self.describe(name)) for name in config_names(with_importance=True)]

    @staticmethod
    def describe(name: str) -> str:
        spec = parse_config(name)
        if spec.kind in ("uw", "kw"):
            return DESCRIPTIONS[spec.kind].format(pct=f"{spec.value * 100:g}", ratio=f"{spec.value:.2f}")
        return DESCRIPTIONS[spec.kind].format(value=spec.value)

    def optional(self, config_name: str) -> bool:
        return config_name.startswith("uw_imp_")

    def add_build_arguments(self, parser) -> None:
        parser.add_argument("--importance-model", metavar="DIR",
                            help="fine-tuned ranker whose attention ranks word importance; builds uw_imp_1..5 "
                                 "(Lee et al. App. A.5); without it a plain build skips them")
        parser.add_argument("--importance-batch-size", type=int, default=32, metavar="N",
                            help="batch size of the importance model")
        parser.add_argument("--kw-rule", choices=KW_RULES, default="random",
                            help="how KW picks the known word for a target: seeded uniform choice, or the farthest "
                                 "normalised Levenshtein distance (UW's rule 4 over known words)")
        parser.add_argument("--kw-min-count", type=int, default=5000, metavar="N",
                            help="a known word occurs more than N times in the training split")
        parser.add_argument("--uw-rounding", choices=sorted(ROUNDING), default="floor",
                            help="targets per instance = floor or round of ratio x context tokens")
        parser.add_argument("--uw-case-sensitive-vocab", action="store_true",
                            help="check rule 3 (not a training word) case-sensitively instead of case-folded")
        parser.add_argument("--ic-selection", choices=IC_SELECTIONS, default="at_least",
                            help="IC instances: contexts of at least 6 turns (last 6 used; the paper's count) or "
                                 "exactly 6")
        parser.add_argument("--dd-validation-variants", action="store_true",
                            help="also publish a validation split of every uw/kw/ic/sr config (for calibration "
                                 "studies under shift; the paper calibrates on the clean validation set only)")

    # --- build -------------------------------------------------------------------------------------------------

    @staticmethod
    def shift_options(context: BuildContext) -> ShiftOptions:
        options = context.options
        return ShiftOptions(
            seed=context.seed,
            rounding=options.get("uw_rounding") or "floor",
            vocab_case_sensitive=bool(options.get("uw_case_sensitive_vocab")),
            kw_rule=options.get("kw_rule") or "random",
            kw_min_count=int(options.get("kw_min_count") or 5000),
            ic_selection=options.get("ic_selection") or "at_least",
        )

    def _selected(self, names: list[str], context: BuildContext) -> list[str]:
        """Without --importance-model, drop uw_imp_* with a printed note, unless a --config pattern asked for
        importance configs only (e.g. ``'uw_imp_*'``, ``uw_imp_3``): that is a one-line error."""
        wanted = [name for name in names if parse_config(name).kind == "uw_imp"]
        if not wanted or context.options.get("importance_model") or context.options.get("importance_scorer"):
            return names
        for pattern in context.options.get("config") or []:
            matched = [name for name in config_names() if fnmatch.fnmatchcase(name, pattern)]
            if matched and all(parse_config(name).kind == "uw_imp" for name in matched):
                raise DialshiftError(f"{pattern} needs a fine-tuned ranker: pass --importance-model DIR "
                                     "(train one with trainers/ranker.py)")
        print(f"note: skipping {', '.join(wanted)} (word importance needs --importance-model DIR)")
        return [name for name in names if name not in wanted]

    def _scorer(self, context: BuildContext):
        options = context.options
        if options.get("importance_scorer"):  # a callable (tests, custom scorers)
            return options["importance_scorer"], options.get("importance_label", "custom scorer")
        model_dir = Path(options["importance_model"]).expanduser()
        if not model_dir.is_dir():
            raise DialshiftError(f"--importance-model {model_dir} is not a directory")
        from dialshift.models.importance import word_importance

        def scorer(contexts):
            return word_importance(str(model_dir), contexts, batch_size=int(options.get("importance_batch_size") or 32),
                                   progress=context.progress)

        return scorer, f"`{model_dir.name}` (files sha256 {_fingerprint_model(model_dir)})"

    def build(self, config_names: list[str], context: BuildContext) -> dict:
        global _WORKER_SHIFTS
        from tqdm.auto import tqdm

        from dialshift.sources import load_source

        specs = [parse_config(name) for name in config_names]  # malformed names fail before any work
        names = self._selected([spec.name for spec in specs], context)
        kinds = {parse_config(name).kind for name in names}
        options = self.shift_options(context)
        validation = bool(context.options.get("dd_validation_variants"))
        steps = tqdm(total=4, desc="dailydialog", unit="step", disable=not context.progress)
        steps.set_postfix_str("reading DailyDialog")
        dialogues = load_source("dailydialog", context.data_dir)
        steps.update()
        steps.set_postfix_str("loading WordNet")
        wordnet = None
        if kinds & {"uw", "kw", "uw_imp"}:
            from dialshift.wordnet import load_wordnet

            wordnet = load_wordnet()
        steps.update()
        shifts = DailyDialogShifts(dialogues, wordnet, options)
        steps.set_postfix_str("tokenising, WordNet look-ups")
        shifted_splits = ["test", "validation"] if validation else ["test"]
        shifts.source_rows("test")
        if wordnet is not None:
            shifts.warm(shifted_splits, context.num_proc)
        steps.update()
        importance_label = None
        if "uw_imp" in kinds:
            steps.set_postfix_str("scoring word importance")
            scorer, importance_label = self._scorer(context)
            shifts.set_importance("test", scorer)
        steps.update()

        jobs = []
        for name in names:
            kind = parse_config(name).kind
            splits = ["train", "validation", "test"] if kind == "source" else (
                ["test"] if kind == "uw_imp" else shifted_splits)
            for split in splits:
                parts = TRAIN_PARTS if (kind, split) == ("source", "train") else 1
                jobs += [(name, split, part, parts) for part in range(parts)]
        steps.total = 4 + len(jobs)
        steps.set_postfix_str("shifting")
        _WORKER_SHIFTS = shifts
        try:
            if context.num_proc > 1 and len(jobs) > 1:
                with multiprocessing.get_context("fork").Pool(min(context.num_proc, len(jobs))) as pool:
                    datasets = list(steps_iter(pool.imap(_dataset_job, jobs), steps))
            else:
                datasets = list(steps_iter(map(_dataset_job, jobs), steps))
        finally:
            _WORKER_SHIFTS = None
        from datasets import DatasetDict, concatenate_datasets

        built = {}
        for name in names:
            splits = {}
            for (job_name, split, _, _), data in zip(jobs, datasets, strict=True):
                if job_name == name:
                    splits.setdefault(split, []).append(data)
            built[name] = DatasetDict({split: concatenate_datasets(splits[split]) if len(splits[split]) > 1
                                       else splits[split][0] for split in ("train", "validation", "test")
                                       if split in splits})
        steps.close()
        self.last_build = {"options": options, "importance": importance_label,
                           "alternative_rounding": self._alternative_rounding(shifts, names)}
        return built

    @staticmethod
    def _alternative_rounding(shifts: DailyDialogShifts, names: list[str]) -> dict:
        """UW instances per ratio under the other rounding rule (for the card's rule comparison)."""
        other = "round" if shifts.options.rounding == "floor" else "floor"
        from dialshift.shifts.replace import target_count

        counts = {}
        tokens = shifts.tokens("test")
        for name in names:
            spec = parse_config(name)
            if spec.kind != "uw":
                continue
            kept = 0
            for row in shifts.source_rows("test"):
                dialogue = tokens[row["dialogue_id"]]
                n = target_count(dialogue.tokens_before[row["turn"]], spec.value, other)
                kept += n > 0 and sum(dialogue.replaceable[: dialogue.words_before[row["turn"]]]) >= n
            counts[spec.value] = kept
        return {"rule": other, "counts": counts}

    # --- card --------------------------------------------------------------------------------------------------

    def card_section(self, built: dict, context: BuildContext) -> str:
        options = self.last_build.get("options") or self.shift_options(context)
        template = resources.files("hub_cards").joinpath("dailydialog.md").read_text(encoding="utf-8")
        return string.Template(template).substitute(
            source_table=_source_table(built),
            table1=_table1(built, self.last_build.get("alternative_rounding")),
            imp_table=_imp_table(built),
            ic_table=_ic_sr_table(built),
            importance_model=self.last_build.get("importance") or (
                "not built in this run" if not any(n.startswith("uw_imp_") for n in built) else
                "kept from an earlier build (see that build's card)"),
            rounding=options.rounding,
            vocab_case="case-sensitive" if options.vocab_case_sensitive else "case-folded (lower-cased)",
            kw_rule=options.kw_rule,
            kw_min_count=f"{options.kw_min_count:,}",
            ic_selection=options.ic_selection,
            seed=options.seed,
            validation_variants="published" if any(
                "validation" in data for name, data in built.items() if name != "source") else "not published",
            paper_source=f"{PAPER_SOURCE_TEST:,}",
            paper_ic=f"{PAPER_IC:,}",
            ic_window=IC_WINDOW,
            imp_ratio=f"{IMPORTANCE_RATIO:.2f}",
        )


def _mean_replacements(dataset) -> float:
    import pyarrow.compute as pc

    if len(dataset) == 0:
        return 0.0
    return float(pc.mean(pc.list_value_length(dataset.data.column("replacements"))).as_py())


def _source_table(built: dict) -> str:
    if "source" not in built:
        return "(source not in this folder)"
    rows = ["| split | dialogues | instances |", "|---|---:|---:|"]
    for split, data in built["source"].items():
        dialogues = len(set(data["dialogue_id"]))
        rows.append(f"| {split} | {dialogues:,} | {len(data):,} |")
    return "\n".join(rows)


def _table1(built: dict, alternative: dict | None) -> str:
    alt = (alternative or {}).get("counts", {})
    alt_rule = (alternative or {}).get("rule", "")
    header = ("| ratio | UW instances | paper | UW mean targets | paper "
              "| KW instances | paper | KW mean targets | paper |")
    extra = f" UW instances with {alt_rule}() |" if alt else ""
    rows = [header + extra, "|---:" * (9 + bool(alt)) + "|"]
    for ratio in UW_RATIOS:
        uw, kw = built.get(ratio_name("uw", ratio)), built.get(ratio_name("kw", ratio))
        if uw is None and kw is None:
            continue
        paper = PAPER_TABLE1[ratio]
        cells = [f"{ratio:.2f}"]
        for data, (count, mean) in ((uw, paper[:2]), (kw, paper[2:])):
            if data is None:
                cells += ["-", f"{count:,}", "-", f"{mean:.2f}"]
            else:
                test = data["test"]
                cells += [f"{len(test):,}", f"{count:,}", f"{_mean_replacements(test):.2f}", f"{mean:.2f}"]
        if alt:
            cells.append(f"{alt[ratio]:,}" if ratio in alt else "-")
        rows.append("| " + " | ".join(cells) + " |")
    return "\n".join(rows)


def _imp_table(built: dict) -> str:
    rows = ["| config | importance interval | instances | paper | mean targets | paper |",
            "|---|---|---:|---:|---:|---:|"]
    for bucket, (count, mean) in PAPER_TABLE2.items():
        data = built.get(f"uw_imp_{bucket}")
        low, high = 20 * (bucket - 1), 20 * bucket
        if data is None:
            rows.append(f"| uw_imp_{bucket} | [{low}, {high}) | not built | {count:,} | - | {mean:.2f} |")
        else:
            test = data["test"]
            rows.append(f"| uw_imp_{bucket} | [{low}, {high}) | {len(test):,} | {count:,} | "
                        f"{_mean_replacements(test):.2f} | {mean:.2f} |")
    return "\n".join(rows)


def _ic_sr_table(built: dict) -> str:
    rows = ["| config | test instances | mean context turns |", "|---|---:|---:|"]
    names = [f"ic_{k}of{IC_WINDOW}" for k in range(IC_WINDOW)] + [f"sr_{n}" for n in range(IC_WINDOW, 0, -1)]
    for name in names:
        if name in built:
            test = built[name]["test"]
            turns = sum(test["context_turns"]) / max(len(test), 1)
            rows.append(f"| {name} | {len(test):,} | {turns:.2f} |")
    return "\n".join(rows)


register_family(DailyDialogFamily())
