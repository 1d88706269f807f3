"""Korean adversarial response selection (Han et al., 2021): ``kor_adv``, ``kor_adv_<type>`` and ``kor_chitchat``.

``kor_adv`` holds the 2,220 KorAdvMRS test cases (pairwise selection: a context, the correct and the adversarial
response in a seeded order), ``kor_adv_<type>`` the cases of one of the seven types; ``kor_chitchat`` is the
in-domain response-ranking data built the paper's way (§4.1) from the small public Korean corpora available here
(XPersona-ko, ChatbotData): train 1:1, validation and test 1:9. :mod:`.pipeline` makes the rows, :mod:`.card`
renders the card section from the facts; the fields are described in ``hub_cards/korean.md``.
"""

from dataclasses import asdict, dataclass

from dialshift.configs import BenchmarkConfig
from dialshift.errors import DialshiftError
from dialshift.registry import BuildContext, BuildResult, Family, option, rows_to_dataset

from .pipeline import TYPES, adversarial_rows, assign_splits, check_adversarial_files, chitchat_dialogues, chitchat_rows

ADVERSARIAL, CHITCHAT = "kor_adv", "kor_chitchat"

CITATION = """@inproceedings{han-etal-2021-evaluation,
  title = {An Evaluation Dataset and Strategy for Building Robust Multi-turn Response Selection Model},
  author = {Han, Kijong and Lee, Seojin and Lee, Woojin and Lee, Joosung and Lee, Dong-hun},
  booktitle = {Proceedings of the 2021 Conference on Empirical Methods in Natural Language Processing},
  year = {2021}
}
@inproceedings{lin-etal-2021-xpersona,
  title = {{XP}ersona: Evaluating Multilingual Personalized Chatbot},
  author = {Lin, Zhaojiang and Liu, Zihan and Winata, Genta Indra and Cahyawijaya, Samuel and Madotto, Andrea and
            Bang, Yejin and Ishii, Etsuko and Fung, Pascale},
  booktitle = {Proceedings of the 3rd Workshop on Natural Language Processing for Conversational AI},
  year = {2021}
}
@misc{song-2018-chatbotdata,
  title = {Chatbot\\_data\\_for\\_Korean v1.0},
  author = {Song, Youngsook},
  year = {2018},
  howpublished = {\\url{https://github.com/songys/Chatbot_data}}
}"""


def declared_configs(family: str = "korean") -> list[BenchmarkConfig]:
    """``kor_adv``, one config per adversarial type (Table 1's order), then ``kor_chitchat``.

    No config declares a baseline: a type's set is a subset of ``kor_adv`` with its instances unchanged (a paired
    difference on the shared ids would compare a model's predictions with themselves; ``kor_adv``'s per-type accuracies
    already report it), and ``kor_chitchat`` (Han et al.'s in-domain test) shares neither an instance nor the task.
    """
    task = "pairwise_selection"
    configs = [BenchmarkConfig(ADVERSARIAL, family, task, "KorAdvMRS: all 2,220 adversarial test cases (7 types), "
                                                          "correct vs adversarial response",
                               parameters={"types": list(TYPES)})]
    configs += [BenchmarkConfig(f"{ADVERSARIAL}_{kind}", family, task,
                                f"KorAdvMRS {kind.replace('_', '-')} cases only ({count} cases)",
                                parameters={"types": [kind]})
                for kind, count in TYPES.items()]
    configs.append(BenchmarkConfig(CHITCHAT, family, "response_ranking",
                                   "Korean chit-chat response ranking (XPersona-ko + ChatbotData): train 1:1, "
                                   "validation and test 1:9", splits=("train", "validation", "test")))
    return configs


@dataclass(frozen=True)
class KoreanOptions:
    """The family's build options (``dialshift build`` flags; stated in the card)."""

    kor_split: str = option("0.1,0.1", "kor_chitchat: the shares of dialogues drawn into validation and test "
                                       "(the rest is train)", metavar="VAL,TEST")

    def fractions(self) -> tuple[float, float]:
        try:
            validation, test = (float(part) for part in self.kor_split.split(","))
        except ValueError:
            raise DialshiftError(f"--kor-split {self.kor_split!r}: expected two shares VAL,TEST such as 0.1,0.1"
                                 ) from None
        return validation, test


def adversarial_features():
    from datasets import Features, List, Value

    return Features({"id": Value("string"), "type": Value("string"), "case_id": Value("string"),
                     "source_dialogue": Value("string"), "context": List(Value("string")),
                     "candidates": List(Value("string")), "label": Value("int32"), "adversarial": Value("string"),
                     "context_turns": Value("int32")})


def chitchat_features():
    from datasets import Features, List, Value

    return Features({"id": Value("string"), "dialogue_id": Value("string"), "source": Value("string"),
                     "turn": Value("int32"), "context": List(Value("string")), "candidates": List(Value("string")),
                     "label": Value("int32"), "context_turns": Value("int32")})


def _example(row: dict) -> dict:
    """The first case of a type, as the card shows it (Table 1 of the paper shows one per type)."""
    return {"id": row["id"], "context": row["context"], "correct": row["candidates"][row["label"]],
            "adversarial": row["adversarial"]}


def _mean(values) -> float:
    values = list(values)
    return sum(values) / len(values) if values else 0.0


class KoreanFamily(Family):
    """KorAdvMRS's adversarial cases (``kor_adv``, one config per type; scored as pairwise selection) and the
    in-domain ``kor_chitchat`` response-ranking data (XPersona-ko and ChatbotData; train, validation, test), built
    the way Han et al. (2021) describe; no shift is applied, so no config declares a baseline."""

    name = "korean"
    description = "Korean adversarial multi-turn response selection, KorAdvMRS (Han et al., 2021)"
    license = "apache-2.0"
    citation = CITATION
    languages = ("ko",)
    task_categories = ("text-retrieval", "text-classification")
    options_class = KoreanOptions

    def configs(self) -> list[BenchmarkConfig]:
        return declared_configs(self.name)

    def build(self, configs: list[BenchmarkConfig], context: BuildContext) -> BuildResult:
        from datasets import DatasetDict

        from dialshift.sources import load_source
        from dialshift.sources.koradvmrs import FOLDER

        options: KoreanOptions = context.options
        built, facts = {}, {}
        adversarial = [config for config in configs if config.task == "pairwise_selection"]
        if adversarial:
            check_adversarial_files(context.data_dir, FOLDER)
            rows = adversarial_rows(load_source("koradvmrs", context.data_dir)["test"], context.seed)
            for config in adversarial:
                kinds = set(config.parameters["types"])
                chosen = [row for row in rows if row["type"] in kinds]
                built[config.name] = DatasetDict({"test": rows_to_dataset(chosen, adversarial_features())})
                facts[config.name] = {
                    "cases": len(chosen),
                    "per_type": {kind: sum(row["type"] == kind for row in chosen) for kind in TYPES
                                 if kind in kinds},
                    "gold_first": sum(row["label"] == 0 for row in chosen),
                    "mean_context_turns": _mean(row["context_turns"] for row in chosen),
                    "sessions": len({row["source_dialogue"] for row in chosen}),
                    "examples": {kind: _example(next(row for row in chosen if row["type"] == kind))
                                 for kind in TYPES if kind in kinds},
                    "seed": context.seed,
                }
        if any(config.name == CHITCHAT for config in configs):
            dialogues = chitchat_dialogues(load_source("xpersona_ko", context.data_dir),
                                           load_source("chatbotdata", context.data_dir))
            splits = assign_splits(dialogues, context.seed, options.fractions())
            parts, split_facts = {}, {}
            for split, members in splits.items():
                rows = chitchat_rows(members, split, context.seed)
                parts[split] = rows_to_dataset(rows, chitchat_features())
                candidates = len(rows[0]["candidates"]) if rows else 0
                split_facts[split] = {
                    "instances": len(rows), "pairs": len(rows) * candidates, "candidates": candidates,
                    "dialogues": {source: sum(d.source == source for d in members)
                                  for source in ("xpersona_ko", "chatbotdata")},
                    "instances_by_source": {source: sum(row["source"] == source for row in rows)
                                            for source in ("xpersona_ko", "chatbotdata")},
                    "mean_context_turns": _mean(row["context_turns"] for row in rows),
                }
            built[CHITCHAT] = DatasetDict(parts)
            facts[CHITCHAT] = {"splits": split_facts, "settings": {**asdict(options), "seed": context.seed}}
        return BuildResult(built, facts)

    def card_section(self, facts: dict) -> str:
        from .card import render_section

        return render_section(facts)
