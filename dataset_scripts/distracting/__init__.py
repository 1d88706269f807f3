"""Distracting-test family (Xing and Gulla 2022): ``ubuntu``, ``ubuntu_distract_*`` and ``dailydialog_distract_*``.

``ubuntu`` holds context/response pairs of the Ubuntu IRC gold conversations (or of Lowe's Ubuntu Dialogue Corpus
CSV, ``--ubuntu-csv``); the nine distracting test sets of §4.4 insert two distracting utterances into the History of
each test context, for Ubuntu and for DailyDialog: ``*_distract_random_{0.5,0.7,1.0}`` (utterances of the training
split of the same corpus, each kept with that probability, each at a random History slot) and
``*_distract_{frequent,rare}_{begin,middle,end}`` (two fixed sentences of frequent / rare training words, as one
block at the start, the middle or the end of the History). Insertion is the public Shift
:class:`dialshift.shifts.distraction.DistractingInsertion`; :mod:`.corpora` turns the raw corpora into pairs;
:mod:`.card` renders the card section (template ``hub_cards/distracting.md``) from the build facts.
"""

from dataclasses import dataclass

from dialshift import arguments
from dialshift.configs import Baseline, BenchmarkConfig, ShiftGroup
from dialshift.registry import BuildContext, BuildResult, Family, option, rows_to_dataset
from dialshift.shifts.base import InstanceRandom
from dialshift.shifts.distraction import (
    DistractingInsertion,
    DistractionPool,
    frequent_sentences,
    normalise,
    rare_sentences,
    word_counts,
)

TASK = "attention_distribution"
PROBABILITIES = (0.5, 0.7, 1.0)
POSITIONS = ("begin", "middle", "end")
KINDS = ("frequent", "rare")
COUNT = 2
CORPORA = {"ubuntu": "Ubuntu", "dailydialog": "DailyDialog"}
#: Fixed-position sets keep contexts with at least 2 History utterances, so that begin, middle and end differ and the
#: six sets share their dialogues; random sets need one.
MIN_HISTORY = {"random": 1, "frequent": 2, "rare": 2}

CITATION = """@inproceedings{xing-gulla-2022-das,
  title = {Evaluating and Improving Context Attention Distribution on Multi-Turn Response Generation using
           Self-Contained Distractions},
  author = {Xing, Yujie and Gulla, Jon Atle},
  booktitle = {Proceedings of the 5th International Conference on Natural Language Processing and Information
               Retrieval (NLPIR)},
  year = {2022}
}
@inproceedings{kummerfeld-etal-2019-large,
  title = {A Large-Scale Corpus for Conversation Disentanglement},
  author = {Kummerfeld, Jonathan K. and Gouravajhala, Sai R. and Peper, Joseph J. and Athreya, Vignesh and
            Gunasekara, Chulaka and Ganhotra, Jatin and Patel, Siva Sankalp and Polymenakos, Lazaros C and
            Lasecki, Walter},
  booktitle = {Proceedings of the 57th Annual Meeting of the Association for Computational Linguistics},
  year = {2019},
  pages = {3846--3856}
}
@inproceedings{li-etal-2017-dailydialog,
  title = {{D}aily{D}ialog: A Manually Labelled Multi-turn Dialogue Dataset},
  author = {Li, Yanran and Su, Hui and Shen, Xiaoyu and Li, Wenjie and Cao, Ziqiang and Niu, Shuzi},
  booktitle = {Proceedings of the Eighth International Joint Conference on Natural Language Processing (IJCNLP)},
  year = {2017},
  pages = {986--995}
}"""


def _groups(corpus: str) -> dict:
    label = CORPORA[corpus]
    return {
        "random": ShiftGroup(f"{corpus}_distract_random", f"{label} random", f"{corpus}_distract_random",
                             f"{label}: random distractions (Xing and Gulla Table 3)", "testing inserting probability"),
        **{kind: ShiftGroup(f"{corpus}_distract_{kind}", f"{label} {kind}", f"{corpus}_distract_fixed",
                            f"{label}: frequent / rare distracting sentences (Xing and Gulla Table 3)",
                            "insertion position (0 = begin, 0.5 = middle, 1 = end)") for kind in KINDS},
    }


def declared_configs(family: str = "distracting") -> list[BenchmarkConfig]:
    """Every config: ``ubuntu``, then per corpus the nine distracting test sets in Table 3's order.

    Baseline of each distracting set: the undistracted test set of its own corpus (``ubuntu``, or the ``dailydialog``
    family's ``dailydialog``), as Xing and Gulla report perplexity and History AS on the "Original" test set beside the
    distracting ones; a difference is computed only on the ids both hold (DailyDialog's distracting sets are made from
    its dialogues, not from the ranking instances, so they share none and no difference is printed).
    """
    configs = [BenchmarkConfig("ubuntu", family, TASK, "Ubuntu context/response pairs (IRC gold conversations or "
                               "Lowe's CSV), train/validation/test, no distraction",
                               parameters={"includes_query": True}, splits=("train", "validation", "test"))]
    for corpus, label in CORPORA.items():
        groups = _groups(corpus)
        baselines = (Baseline(corpus, "corpus", f"the undistracted {label} test set (Xing and Gulla's \"Original\" "
                                                "test set)"),)
        for probability in PROBABILITIES:
            configs.append(BenchmarkConfig(
                f"{corpus}_distract_random_{probability:.1f}", family, TASK,
                f"{label} test contexts with 2 training utterances of other dialogues inserted, each with probability "
                f"{probability:g}, each at a random History slot", groups["random"], probability, f"{probability:.1f}",
                {"corpus": corpus, "source": "random", "probability": probability, "position": "random",
                 "count": COUNT, "includes_query": True}, baselines=baselines))
        for kind in KINDS:
            for index, position in enumerate(POSITIONS):
                configs.append(BenchmarkConfig(
                    f"{corpus}_distract_{kind}_{position}", family, TASK,
                    f"{label} test contexts with the 2 {kind}-word distracting sentences inserted as one block at the "
                    f"{position} of the History", groups[kind], index / 2, position,
                    {"corpus": corpus, "source": kind, "probability": 1.0, "position": position, "count": COUNT,
                     "includes_query": True}, baselines=baselines))
    return configs


@dataclass(frozen=True)
class DistractingOptions:
    """The family's build options (``dialshift build`` flags; each rule is stated in the card)."""

    ubuntu_csv: str | None = option(None, "build the Ubuntu configs from Lowe et al.'s Ubuntu Dialogue Corpus: its "
                                          "train.csv (valid.csv and test.csv beside it) instead of the Ubuntu IRC "
                                          "conversations", metavar="FILE")
    redraw_seed: int = option(0, "another draw of the random distractions (0: the published draw); every other "
                                 "choice stays the same", metavar="N", type=arguments.seed)
    distract_window: int = option(10, "context window: the last N utterances before a response", metavar="N")
    distract_frequent_top: int = option(200, "frequent words: the N most frequent training tokens", metavar="N",
                                        type=arguments.positive_int)
    distract_rare_max: int = option(5, "rare words: seen at least once and at most N times in training",
                                    metavar="N", type=arguments.positive_int)


def features():
    """The features every config of the family shares (described in ``hub_cards/distracting.md``)."""
    from datasets import Features, List, Value

    from dialshift.shifts.dataset import shift_feature

    return Features({
        "id": Value("string"),
        "dialogue_id": Value("string"),
        "context": List(Value("string")),
        "response": Value("string"),
        "distractor_mask": List(Value("int8")),
        "distractors": List(Value("string")),
        "context_turns": Value("int32"),
        "truncated_turns": List(Value("string")),
        "shift": shift_feature(),
    })


def to_dataset(rows: list[dict]):
    return rows_to_dataset(rows, features())


def plain_row(pair) -> dict:
    return {"id": pair.id, "dialogue_id": pair.dialogue_id, "context": list(pair.context), "response": pair.response,
            "distractor_mask": [0] * (len(pair.context) - 1), "distractors": [], "context_turns": len(pair.context),
            "truncated_turns": list(pair.truncated), "shift": None}


def shifted_rows(pairs, shift: DistractingInsertion, seed: int) -> list[dict]:
    """The rows of the pairs ``shift`` applies to (the Query is never a distraction, so the mask covers History)."""
    rows = []
    for pair in pairs:
        result = shift.apply(pair.context, InstanceRandom(seed, pair.id))
        if not result:  # Skipped: the reason the shift did not apply
            continue
        mask = list(result.inserted_mask[:-1])
        rows.append({**plain_row(pair), "context": list(result.context), "distractor_mask": mask,
                     "distractors": [text for text, flag in zip(result.context, mask, strict=False) if flag],
                     "shift": shift.describe(seed)})
    return rows


class Resources:
    """A corpus loaded once per build, with what its shifts need (pool, word counts, fixed sentences)."""

    def __init__(self, corpus, options: DistractingOptions):
        self.corpus = corpus
        train = corpus.dialogues["train"]
        self.counts = word_counts(text for _, utterances in train for text in utterances)
        everything = {normalise(text) for split in corpus.dialogues.values() for _, utterances in split
                      for text in utterances}
        everything |= {normalise(text) for split in corpus.pairs.values() for pair in split
                       for text in (*pair.context, pair.response)}
        self.sentences = {"frequent": frequent_sentences(self.counts, everything, options.distract_frequent_top),
                          "rare": rare_sentences(self.counts, everything, options.distract_rare_max)}
        self.pool = DistractionPool(train)

    def shift(self, config: BenchmarkConfig, redraw_seed: int) -> DistractingInsertion:
        parameters = config.parameters
        kind = parameters["source"]
        params = {"count": parameters["count"], "probability": parameters["probability"],
                  "position": parameters["position"], "min_history": MIN_HISTORY[kind]}
        if kind == "random":
            stream = config.name + (f"_redraw{redraw_seed}" if redraw_seed else "")
            return DistractingInsertion(pool=self.pool, stream=stream, **params)
        return DistractingInsertion(sentences=self.sentences[kind].sentences, stream=config.name, **params)


class DistractingFamily(Family):
    """The unshifted ``ubuntu`` pairs and the nine distracting test sets of Xing and Gulla (2022) for Ubuntu and for
    DailyDialog, scored as attention distribution (DAS ratio); each distracting set is compared with its corpus."""

    name = "distracting"
    description = ("Distracting tests of context attention distribution (DAS ratio) on Ubuntu and DailyDialog "
                   "(Xing and Gulla, 2022)")
    license = "other"
    citation = CITATION
    languages = ("en",)
    task_categories = ("text-generation",)
    options_class = DistractingOptions

    def configs(self) -> list[BenchmarkConfig]:
        return declared_configs(self.name)

    def _corpus(self, name: str, context: BuildContext):
        from . import corpora

        options: DistractingOptions = context.options
        if name == "dailydialog":
            return corpora.dailydialog(context.data_dir, options.distract_window)
        if options.ubuntu_csv:
            return corpora.lowe_csv(options.ubuntu_csv, options.distract_window)
        return corpora.ubuntu_irc(context.data_dir, options.distract_window)

    def build(self, configs: list[BenchmarkConfig], context: BuildContext) -> BuildResult:
        from datasets import DatasetDict
        from tqdm.auto import tqdm

        options: DistractingOptions = context.options
        if options.distract_window < 2:
            from dialshift.errors import DialshiftError

            raise DialshiftError(f"--distract-window must be at least 2 (a Query and a History utterance), got "
                                 f"{options.distract_window}")
        needed = sorted({config.parameters.get("corpus", "ubuntu") for config in configs})
        resources = {}
        for name in tqdm(needed, desc="distracting: corpora", disable=not context.progress):
            resources[name] = Resources(self._corpus(name, context), options)
        built, facts = {}, {}
        for config in tqdm(configs, desc="distracting: configs", disable=not context.progress):
            corpus_name = config.parameters.get("corpus", "ubuntu")
            resource = resources[corpus_name]
            corpus = resource.corpus
            if config.group is None:
                data = {split: to_dataset([plain_row(pair) for pair in corpus.pairs[split]])
                        for split in config.splits}
            else:
                shift = resource.shift(config, options.redraw_seed)
                data = {"test": to_dataset(shifted_rows(corpus.pairs["test"], shift, context.seed))}
            built[config.name] = DatasetDict(data)
            facts[config.name] = config_facts(config, built[config.name], resource, options, context.seed)
        return BuildResult(built, facts)

    def card_section(self, facts: dict) -> str:
        from .card import render_section

        return render_section(facts)


def config_facts(config: BenchmarkConfig, data, resource: Resources, options: DistractingOptions, seed: int) -> dict:
    """What the card reports of a built config."""
    corpus = resource.corpus
    test = data["test"]
    facts = {
        "corpus": corpus.name,
        "source": corpus.source,
        "splits": {split: {"rows": len(part), "dialogues": len(set(part["dialogue_id"]))}
                   for split, part in data.items()},
        "mean_context_turns": sum(len(context) for context in test["context"]) / max(len(test), 1),
        "mean_distractors": sum(len(items) for items in test["distractors"]) / max(len(test), 1),
        "test_pairs": len(corpus.pairs["test"]),
        "seed": seed,
        "window": options.distract_window,
    }
    if config.group is None:
        facts["processing"] = corpus.counts
    else:
        kind = config.parameters["source"]
        facts["min_history"] = MIN_HISTORY[kind]
        if kind == "random":
            facts["redraw_seed"] = options.redraw_seed
            facts["pool_utterances"] = len(resource.pool)
        else:
            chosen = resource.sentences[kind]
            facts["sentences"] = list(chosen.sentences)
            facts["rule"] = chosen.rule
            facts["word_counts"] = dict(chosen.word_counts)
            facts["rejected"] = list(chosen.rejected)
    return facts
