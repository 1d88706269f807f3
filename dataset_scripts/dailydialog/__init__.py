"""DailyDialog shift family (Lee et al., 2022): ``dailydialog``, ``uw_*``, ``kw_*``, ``uw_imp_*``, ``ic_*``, ``sr_*``.

``__init__`` declares the typed configs, the build options and the build; :mod:`.pipeline` applies the shifts (the
public Shift API of :mod:`dialshift.shifts`) to the source instances; :mod:`.card` renders the card section from the
facts the build records. The fields are described in ``hub_cards/dailydialog.md``.
"""

from dataclasses import dataclass
from pathlib import Path

from dialshift.arguments import non_negative_int, positive_int
from dialshift.configs import Baseline, BenchmarkConfig, ShiftGroup
from dialshift.errors import DialshiftError
from dialshift.parallel import fork_map, get_shared, shared
from dialshift.registry import BuildContext, BuildResult, Family, option, rows_to_dataset
from dialshift.shifts.context import IC_SELECTIONS
from dialshift.shifts.lexical import ratio_name
from dialshift.shifts.replace import BASES, KW_MIN_COUNT, KW_RULES, ROUNDING, UW_RULES, WordRules, target_count

from .constants import IC_WINDOW, IMPORTANCE_RATIO, NUM_BUCKETS, UW_RATIOS
from .pipeline import DailyDialogShifts, ShiftOptions

#: The train split of the unshifted config is built in this many dialogue ranges, whatever --num-proc is.
TRAIN_PARTS = 8
TASK = "response_ranking"

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
_WORDS = ("UW / KW: word replacement ratio (Lee et al. Tables 3, 5)", "word replacement ratio")
_TURNS = ("IC / SR: sentence deletion ratio and context length (Lee et al. Tables 4, 6)",
          f"sentence deletion ratio (SR: ({IC_WINDOW} - context turns) / {IC_WINDOW})")
GROUPS = {
    "uw": ShiftGroup("uw", "UW", "uw_kw", *_WORDS),
    "kw": ShiftGroup("kw", "KW", "uw_kw", *_WORDS, rank=1),
    "uw_imp": ShiftGroup("uw_imp", "UW-imp", "uw_imp", "UW word importance (Lee et al. Table 7)",
                         f"word importance bucket (ratio {IMPORTANCE_RATIO:.2f})"),
    "ic": ShiftGroup("ic", "IC", "ic_sr", *_TURNS),
    "sr": ShiftGroup("sr", "SR", "ic_sr", *_TURNS, rank=1),
}


def declared_configs(name: str = "dailydialog") -> list[BenchmarkConfig]:
    """Every config of the family, in the order of the paper's tables.

    Baselines: every shifted config is compared with the unshifted test set it was made from (``dailydialog``, on the
    instances they share), and a shift with its own control also with that control: ``uw_R`` with ``kw_R`` (Lee et al.
    §4.3: the same instances and target words, replaced by known words instead) and ``ic_Kof6`` with ``ic_0of6`` (the
    same 6+-turn instances, nothing deleted).
    """
    test = ("test",)
    corpus = Baseline(name, "corpus", "the unshifted DailyDialog test set the instances were made from (Lee et al.'s "
                                      "source dataset), on the instances both hold")

    def kw_control(ratio):
        return Baseline(ratio_name("kw", ratio), "control", "Known Word control (Lee et al. §4.3): the same instances "
                        "with the same target words replaced by words frequent in training instead of unknown ones")

    ic_control = Baseline(f"ic_0of{IC_WINDOW}", "control", f"the same instances with a {IC_WINDOW}+-turn context and "
                          "nothing deleted (Lee et al. App. A.2)")
    configs = [BenchmarkConfig(name, name, TASK, "DailyDialog response ranking (10 candidates), train/validation/test",
                               splits=("train", "validation", "test"))]
    for group, text in (("uw", "Unknown Word: {pct}% of the context's tokens replaced by WordNet synonyms unseen in "
                                "training"),
                        ("kw", "Known Word control: the uw_{ratio} targets replaced by words seen >{count} times in "
                               "training")):
        configs += [BenchmarkConfig(ratio_name(group, ratio), name, TASK,
                                    text.format(pct=f"{ratio * 100:g}", ratio=f"{ratio:.2f}",
                                                count=f"{KW_MIN_COUNT:,}"),
                                    GROUPS[group], ratio, f"{ratio:.2f}", {"ratio": ratio}, test,
                                    baselines=(corpus, kw_control(ratio)) if group == "uw" else (corpus,))
                    for ratio in UW_RATIOS]
    configs += [BenchmarkConfig(f"uw_imp_{bucket}", name, TASK,
                                f"Unknown Word at ratio {IMPORTANCE_RATIO:.2f} restricted to importance bucket "
                                f"{bucket} of {NUM_BUCKETS} (needs --importance-model)",
                                GROUPS["uw_imp"], float(bucket), str(bucket), {"bucket": bucket}, test, optional=True,
                                baselines=(corpus,))
                for bucket in range(1, NUM_BUCKETS + 1)]
    configs += [BenchmarkConfig(f"ic_{k}of{IC_WINDOW}", name, TASK,
                                f"Insufficient Context: the first {k} of the last {IC_WINDOW} context turns deleted",
                                GROUPS["ic"], k / IC_WINDOW, f"{k}/{IC_WINDOW}", {"deleted": k, "window": IC_WINDOW},
                                test, baselines=(corpus, ic_control) if k else (corpus,))
                for k in range(IC_WINDOW)]
    configs += [BenchmarkConfig(f"sr_{turns}", name, TASK,
                                f"Source-length control: test instances whose real context has {turns} turn(s)",
                                GROUPS["sr"], (IC_WINDOW - turns) / IC_WINDOW, f"{IC_WINDOW - turns}/{IC_WINDOW}",
                                {"turns": turns}, test, baselines=(corpus,))
                for turns in range(IC_WINDOW, 0, -1)]
    return configs


@dataclass(frozen=True)
class DailyDialogOptions:
    """The family's build options (``dialshift build`` flags; each rule is stated in the card)."""

    importance_model: str | None = option(
        None, "fine-tuned ranker whose attention ranks word importance; builds uw_imp_1..5 (Lee et al. App. A.5); "
              "without it a plain build skips them", metavar="DIR")
    importance_batch_size: int = option(32, "batch size of the importance model", metavar="N", type=positive_int)
    kw_rule: str = option("random", "how KW picks the known word for a target: seeded uniform choice, or the "
                                    "farthest normalised Levenshtein distance (UW's rule 4 over known words)",
                          choices=KW_RULES)
    kw_min_count: int = option(KW_MIN_COUNT, "a known word occurs more than N times in the training split",
                               metavar="N", type=non_negative_int)
    uw_rounding: str = option("floor", "targets per instance = floor, round or ceil of ratio x the count base",
                              choices=sorted(ROUNDING))
    uw_count_base: str = option("tokens", "what the UW/KW ratio multiplies: bert-style tokens (the paper's 'words (= "
                                          "token)'), whitespace-separated tokens, \\w+ runs or alphabetic words "
                                          "(docs/uw_audit.md compares each with Table 1)", choices=BASES)
    uw_case_sensitive_vocab: bool = option(False, "check rule 3 (not a training word) case-sensitively instead of "
                                                  "case-folded")
    uw_rules: str = option("paper", "UW/KW/UW-imp word rules: 'paper' (Lee et al. as stated: any word, every sense of "
                                    "every part of speech, the WordNet lemma as it is) or 'sense' (beyond the paper: "
                                    "content words only, the most frequent sense of the word's likely part of speech, "
                                    "re-inflected); --uw-content-words, --uw-senses and --uw-inflect override one rule",
                           choices=sorted(UW_RULES))
    uw_content_words: str | None = option(None, "targets restricted to content words: no stop word (scikit-learn's "
                                                "list), contraction piece or inflection of a stop word (default: as "
                                                "--uw-rules)", choices=("on", "off"))
    uw_senses: str | None = option(None, "synonyms only from the word's K most frequent WordNet senses (SemCor "
                                         "counts) of its likely part of speech, or 'all' (default: as --uw-rules)",
                                   metavar="K|all")
    uw_inflect: str | None = option(None, "re-inflect a synonym like the word it replaces (cars -> automobiles, "
                                          "lemminflect; default: as --uw-rules)", choices=("on", "off"))
    ic_selection: str = option("at_least", "IC instances: contexts of at least 6 turns (last 6 used; the paper's "
                                           "count) or exactly 6", choices=IC_SELECTIONS)
    dd_drop_train_overlap: bool = option(False, "leave out validation/test instances whose dialogue also occurs in "
                                                "the training split (case- and space-folded; the release shares "
                                                "dialogues between splits)")
    dd_validation_variants: bool = option(False, "also publish a validation split of every uw/kw/ic/sr config (for "
                                                 "calibration studies under shift; the paper calibrates on the clean "
                                                 "validation set only)")
    importance_scorer: object = option(None, "a callable scoring contexts (library use and tests)", cli=False)
    importance_label: str = option("custom scorer", "how the card names importance_scorer", cli=False)

    def __post_init__(self):
        self.word_rules()  # a bad --uw-* value is a one-line error before anything is read

    def word_rules(self) -> WordRules:
        """The ``--uw-rules`` preset with the single-rule overrides applied."""
        if self.uw_rules not in UW_RULES:
            raise DialshiftError(f"--uw-rules {self.uw_rules!r} is not one of {', '.join(sorted(UW_RULES))}")
        rules = UW_RULES[self.uw_rules]
        switches = {}
        for name, value in (("content_words", self.uw_content_words), ("inflect", self.uw_inflect)):
            if value is None:
                continue
            if value not in ("on", "off", True, False):
                raise DialshiftError(f"--uw-{name.replace('_', '-')} must be on or off, got {value!r}")
            switches[name] = value in ("on", True)
        senses = rules.senses
        if self.uw_senses is not None:
            text = str(self.uw_senses).strip().lower()
            if text != "all" and not (text.isdigit() and int(text) >= 1):
                raise DialshiftError(f"--uw-senses must be a whole number >= 1 or 'all', got {self.uw_senses!r}")
            senses = 0 if text == "all" else int(text)
        return WordRules(content_words=switches.get("content_words", rules.content_words), senses=senses,
                         inflect=switches.get("inflect", rules.inflect))

    def shift_options(self, seed: int) -> ShiftOptions:
        rules = self.word_rules()
        return ShiftOptions(seed=seed, rounding=self.uw_rounding, count_base=self.uw_count_base,
                            vocab_case_sensitive=self.uw_case_sensitive_vocab,
                            kw_rule=self.kw_rule, kw_min_count=self.kw_min_count, ic_selection=self.ic_selection,
                            drop_train_overlap=self.dd_drop_train_overlap, content_words=rules.content_words,
                            senses=rules.senses, inflect=rules.inflect)


def features():
    """The features every DailyDialog config shares (described in ``hub_cards/dailydialog.md``)."""
    from datasets import Features, List, Value

    from dialshift.shifts.dataset import shift_feature

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
        "truncated_turns": List(Value("string")),
        "in_train": Value("bool"),
        "shift": shift_feature(),
    })


def to_dataset(rows: list[dict]):
    return rows_to_dataset(rows, features())


def _fingerprint_model(model_dir: Path) -> str:
    from dialshift.io import files_digest

    return files_digest(sorted(file for file in model_dir.glob("*")
                               if file.is_file() and file.suffix in (".json", ".safetensors", ".bin", ".txt")))[:16]


def _dataset_job(job):
    name, split, part, parts = job
    shifts = get_shared("dailydialog_shifts")
    return to_dataset(shifts.rows(shifts.config_by_name[name], split, part, parts))


class DailyDialogFamily(Family):
    """DailyDialog response ranking (10 candidates) and its shifts after Lee et al. (2022): Unknown Word (``uw_*``)
    with its Known Word control (``kw_*``), word-importance buckets (``uw_imp_*``, which need a trained ranker),
    Insufficient Context (``ic_*``) with its source-length control (``sr_*``); every shifted config is compared with
    ``dailydialog`` and, where it has one, its control."""

    name = "dailydialog"
    description = "DailyDialog response ranking under Unknown Word / Insufficient Context shifts (Lee et al., 2022)"
    license = "cc-by-nc-sa-4.0"
    citation = CITATION
    languages = ("en",)
    task_categories = ("text-retrieval",)
    options_class = DailyDialogOptions

    def configs(self) -> list[BenchmarkConfig]:
        return declared_configs(self.name)

    # --- build -------------------------------------------------------------------------------------------------

    def _selected(self, configs: list[BenchmarkConfig], context: BuildContext) -> list[BenchmarkConfig]:
        """Without an importance model, drop uw_imp_* with a printed note, unless a --config pattern asked for
        importance configs only (e.g. ``'uw_imp_*'``, ``uw_imp_3``): that is a one-line error."""
        import fnmatch

        options: DailyDialogOptions = context.options
        wanted = [config for config in configs if config.group is not None and config.group.name == "uw_imp"]
        if not wanted or options.importance_model or options.importance_scorer:
            return configs
        every = self.configs()
        for pattern in context.requested or ():
            matched = [config for config in every if fnmatch.fnmatchcase(config.name, pattern)]
            if matched and all(config.group is not None and config.group.name == "uw_imp" for config in matched):
                raise DialshiftError(f"{pattern} needs a fine-tuned ranker: pass --importance-model DIR "
                                     "(train one with trainers/ranker.py)")
        print(f"note: skipping {', '.join(config.name for config in wanted)} (word importance needs "
              "--importance-model DIR)")
        return [config for config in configs if config not in wanted]

    @staticmethod
    def _scorer(context: BuildContext):
        options: DailyDialogOptions = context.options
        if options.importance_scorer is not None:
            return options.importance_scorer, options.importance_label
        model_dir = Path(options.importance_model).expanduser()
        if not model_dir.is_dir():
            raise DialshiftError(f"--importance-model {model_dir} is not a directory")
        from dialshift.models.importance import word_importance

        def scorer(contexts):
            return word_importance(str(model_dir), contexts, batch_size=options.importance_batch_size,
                                   progress=context.progress)

        return scorer, f"`{model_dir.name}` (files sha256 {_fingerprint_model(model_dir)})"

    def build(self, configs: list[BenchmarkConfig], context: BuildContext) -> BuildResult:
        from datasets import DatasetDict, concatenate_datasets
        from tqdm.auto import tqdm

        from dialshift.sources import load_source

        options: DailyDialogOptions = context.options
        configs = self._selected(configs, context)
        groups = {config.group.name for config in configs if config.group is not None}
        shifted_splits = ("test", "validation") if options.dd_validation_variants else ("test",)
        steps = tqdm(total=4, desc="dailydialog", unit="step", disable=not context.progress)
        steps.set_postfix_str("reading DailyDialog")
        dialogues = load_source("dailydialog", context.data_dir)
        steps.update()
        wordnet = None
        if groups & {"uw", "kw", "uw_imp"}:
            steps.set_postfix_str("loading WordNet")
            from dialshift.wordnet import load_wordnet

            wordnet = load_wordnet()
        steps.update()
        shifts = DailyDialogShifts(dialogues, wordnet, options.shift_options(context.seed))
        shifts.config_by_name = {config.name: config for config in configs}
        steps.set_postfix_str("source instances, WordNet look-ups")
        shifts.source_rows("test")
        if wordnet is not None:
            shifts.warm(shifted_splits, context.num_proc)
        steps.update()
        importance = None
        if "uw_imp" in groups:
            steps.set_postfix_str("scoring word importance")
            scorer, importance = self._scorer(context)
            shifts.set_importance("test", scorer)
        steps.update()

        jobs = []
        for config in configs:
            splits = config.splits if config.group is None else (
                ("test",) if config.group.name == "uw_imp" else shifted_splits)
            for split in splits:
                parts = TRAIN_PARTS if (config.group, split) == (None, "train") else 1
                jobs += [(config.name, split, part, parts) for part in range(parts)]
        steps.total = 4 + len(jobs)
        steps.set_postfix_str("shifting")
        with shared(dailydialog_shifts=shifts):
            datasets = []
            for data in fork_map(_dataset_job, jobs, context.num_proc):
                datasets.append(data)
                steps.update()
        steps.close()

        built = {}
        for config in configs:
            parts: dict[str, list] = {}
            for (name, split, _, _), data in zip(jobs, datasets, strict=True):
                if name == config.name:
                    parts.setdefault(split, []).append(data)
            built[config.name] = DatasetDict({split: concatenate_datasets(parts[split]) if len(parts[split]) > 1
                                              else parts[split][0] for split in ("train", "validation", "test")
                                              if split in parts})
        settings = {**shifts.options.settings(), "validation_variants": options.dd_validation_variants}
        facts = {config.name: config_facts(config, built[config.name], settings, shifts,
                                           importance if config.group and config.group.name == "uw_imp" else None)
                 for config in configs}
        return BuildResult(built, facts)

    # --- card --------------------------------------------------------------------------------------------------

    def card_section(self, facts: dict) -> str:
        from .card import render_section

        return render_section(facts)


def config_facts(config: BenchmarkConfig, data, settings: dict, shifts: DailyDialogShifts,
                 importance: str | None) -> dict:
    """What the card reports of one built config: rows and dialogues per split, mean targets and context turns of
    the test split, the rule settings it was built with, and for UW the count under the other rounding rule."""
    import pyarrow.compute as pc

    test = data["test"]
    facts = {
        "splits": {split: {"rows": len(part), "dialogues": len(set(part["dialogue_id"]))}
                   for split, part in data.items()},
        "mean_replacements": float(pc.mean(pc.list_value_length(test.data.column("replacements"))).as_py() or 0.0)
        if len(test) else 0.0,
        "mean_context_turns": sum(test["context_turns"]) / max(len(test), 1),
        "in_train": {split: int(sum(part["in_train"])) for split, part in data.items()},
        "settings": settings,
    }
    if config.group is None:
        facts["overlap"] = train_overlap(shifts, data)
    if config.group is not None and config.group.name == "ic":
        facts["truncated"] = sum(1 for turns in test["truncated_turns"] if turns)
    if importance is not None:
        facts["importance_model"] = importance
    if config.group is not None and config.group.name in ("uw", "kw", "uw_imp"):
        rules = shifts.options.word_rules
        facts["word_rules"] = {"preset": rules.preset, "describe": rules.describe()}
    if config.group is not None and config.group.name == "uw":
        facts["alternative_rounding"] = alternative_rounding(shifts, config.parameters["ratio"])
        facts["alternative_rules"] = alternative_rules(shifts, config.parameters["ratio"])
    return facts


def train_overlap(shifts: DailyDialogShifts, data) -> dict:
    """How much of validation/test also occurs in train: whole dialogues (case- and space-folded) and instances'
    (context, gold response) pairs."""
    from .pipeline import fold

    def pairs(part):
        return {(tuple(context), candidates[label]) for context, candidates, label
                in zip(part["context"], part["candidates"], part["label"], strict=True)}

    train_pairs = pairs(data["train"]) if "train" in data else set()
    result = {}
    for split in ("validation", "test"):
        dialogues = sum(fold(dialogue) in shifts.train_dialogues for dialogue in shifts.dialogues[split])
        result[split] = {"dialogues": dialogues, "of_dialogues": len(shifts.dialogues[split]),
                         "pairs_in_train": len(pairs(data[split]) & train_pairs) if split in data else None}
    return result


def surviving(shifts: DailyDialogShifts, ratio: float, rounding: str, rules: WordRules) -> tuple[int, float]:
    """How many UW test instances ``ratio`` keeps under ``rounding`` and word ``rules``, and their mean targets: an
    instance is kept when its n = rounding(ratio x tokens) > 0 and it has at least n replaceable words."""
    from dialshift.shifts.lexical import TokenizedContext

    synonyms = shifts.synonyms.with_rules(rules)
    kept, targets = 0, 0
    for row in shifts.source_rows("test"):
        context = TokenizedContext.of(row["context"])
        n = target_count(context.ratio_base(synonyms, shifts.options.count_base), ratio, rounding)
        if n > 0 and sum(context.replaceable(synonyms)) >= n:
            kept, targets = kept + 1, targets + n
    return kept, targets / max(kept, 1)


def alternative_rounding(shifts: DailyDialogShifts, ratio: float) -> dict:
    """UW test instances at ``ratio`` under the other rounding rule (for the card's rule comparison)."""
    other = "round" if shifts.options.rounding == "floor" else "floor"
    return {"rule": other, "count": surviving(shifts, ratio, other, shifts.options.word_rules)[0]}


def alternative_rules(shifts: DailyDialogShifts, ratio: float) -> dict:
    """UW test instances at ``ratio`` under the other word rules: the ``sense`` preset for a build with the paper's
    rules, the paper's for any other (for the card's Table 1 comparison)."""
    rules = shifts.options.word_rules
    other = "sense" if rules.preset == "paper" else "paper"
    count, mean = surviving(shifts, ratio, shifts.options.rounding, UW_RULES[other])
    return {"rules": other, "count": count, "mean_targets": mean}
