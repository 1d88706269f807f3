"""Covariate-shift open-world intent family (Khosla & Gangadharaiah, 2022): ``clinc14_cov``, ``hwu12_cov`` and their
5-/10-shot variants.

The paper's datasets were announced but not released; they are rebuilt here from the public corpora through the
equivalence clusters of its Table 1 (:mod:`.clusters`, kept as data). :mod:`.pipeline` builds the rows, :mod:`.card`
renders the card section (template ``hub_cards/covariate.md``) from the facts the build records.
"""

from collections import Counter
from dataclasses import asdict, dataclass

from dialshift.configs import Baseline, BenchmarkConfig
from dialshift.registry import BuildContext, BuildResult, Family, option

from .clusters import BENCHMARKS, CORPORA
from .pipeline import DEDUP_RULES, OOS, SPLITS, BuildSettings, Sources, build_benchmark, few_shot

TASK = "open_world_intent"
SHOTS = (5, 10)

CITATION = """@inproceedings{khosla-gangadharaiah-2022-benchmarking,
  title = {Benchmarking the Covariate Shift Robustness of Open-world Intent Classification Approaches},
  author = {Khosla, Sopan and Gangadharaiah, Rashmi},
  booktitle = {Proceedings of the 2nd Conference of the Asia-Pacific Chapter of the Association for Computational
               Linguistics and the 12th International Joint Conference on Natural Language Processing},
  year = {2022}
}
@inproceedings{larson-etal-2019-evaluation,
  title = {An Evaluation Dataset for Intent Classification and Out-of-Scope Prediction},
  author = {Larson, Stefan and others},
  booktitle = {Proceedings of EMNLP-IJCNLP},
  year = {2019}
}
@inproceedings{liu-etal-2019-benchmarking,
  title = {Benchmarking Natural Language Understanding Services for building Conversational Agents},
  author = {Liu, Xingkun and Eshghi, Arash and Swietojanski, Pawel and Rieser, Verena},
  booktitle = {Proceedings of IWSDS},
  year = {2019}
}
@article{fitzgerald-etal-2022-massive,
  title = {MASSIVE: A 1M-Example Multilingual Natural Language Understanding Dataset with 51 Typologically-Diverse
           Languages},
  author = {FitzGerald, Jack and others},
  journal = {arXiv preprint arXiv:2204.08582},
  year = {2022}
}
@inproceedings{gangal-etal-2020-likelihood,
  title = {Likelihood Ratios and Generative Classifiers for Unsupervised Out-of-Domain Detection in Task Oriented
           Dialog},
  author = {Gangal, Varun and Arora, Abhinav and Einolghozati, Arash and Gupta, Sonal},
  booktitle = {Proceedings of AAAI},
  year = {2020}
}
@article{coucke-etal-2018-snips,
  title = {Snips Voice Platform: an embedded Spoken Language Understanding system for private-by-design voice
           interfaces},
  author = {Coucke, Alice and others},
  journal = {arXiv preprint arXiv:1805.10190},
  year = {2018}
}
@inproceedings{casanueva-etal-2020-efficient,
  title = {Efficient Intent Detection with Dual Sentence Encoders},
  author = {Casanueva, I{\\~n}igo and Tem{\\v{c}}inas, Tadas and Gerz, Daniela and Henderson, Matthew and Vuli{\\'c},
            Ivan},
  booktitle = {Proceedings of the 2nd Workshop on NLP for Conversational AI},
  year = {2020}
}"""


@dataclass(frozen=True)
class CovariateOptions:
    """The family's build options (``dialshift build`` flags; each rule is stated in the card)."""

    cov_hold_fraction: float = option(0.5, "share of each class's validation utterances (oos included) moved to "
                                           "validation_hold (VAL-HOLD, for threshold selection)", metavar="F")
    cov_dedup: str = option("global", "global: each normalised utterance once across the i.i.d. splits (test, then "
                                      "validation, then train keeps it; HWU64 before MASSIVE); none: concatenate "
                                      "HWU64 and MASSIVE as released", choices=DEDUP_RULES)
    cov_exclude_rostd: bool = option(False, "leave ROSTD (licence unknown) out of cov_test: alarm_remove, "
                                            "alarm_query and reminder then have no cov_test utterances")


def label_names(bench) -> list[str]:
    return [bench.intent(cluster) for cluster in bench.clusters()] + [OOS]


def features(names: list[str]):
    """The features of every config of the family (described in ``hub_cards/covariate.md``)."""
    from datasets import ClassLabel, Features, Value

    return Features({"id": Value("string"), "text": Value("string"), "label": ClassLabel(names=names),
                     "source": Value("string"), "source_label": Value("string"), "source_split": Value("string"),
                     "cluster": Value("int32")})


def declared_configs(family: str = "covariate") -> list[BenchmarkConfig]:
    configs = []
    for name, bench in BENCHMARKS.items():
        names = label_names(bench)
        parameters = {"oos_label": len(names) - 1, "num_labels": len(names), "intents": len(names) - 1,
                      "cov_per_intent": bench.cov_per_intent, "benchmark": bench.title}
        configs.append(BenchmarkConfig(name, family, TASK, f"{bench.title}: {len(names) - 1} intents + oos, i.i.d. "
                                       f"test and covariate-shifted cov_test", parameters=parameters, splits=SPLITS))
        configs += [BenchmarkConfig(f"{name}_{shots}shot", family, TASK, f"{bench.title} with {shots} training "
                                    "utterances per intent (other splits as the full config)",
                                    parameters={**parameters, "shots": shots}, splits=SPLITS,
                                    baselines=(Baseline(name, "corpus", f"the same {bench.title} test instances, "
                                                        "model trained on the full training split"),))
                    for shots in SHOTS]
    return configs


def to_dataset(rows: list[dict], names: list[str]):
    from datasets import Dataset

    schema = features(names)
    encoded = {column: [item[column] for item in rows] for column in schema if column != "label"}
    encoded["label"] = [names.index(item["label"]) for item in rows]
    return Dataset.from_dict(encoded, features=schema)


def config_facts(data: dict, settings: BuildSettings, extra: dict) -> dict:
    splits = {}
    for split, rows in data.items():
        splits[split] = {"rows": len(rows), "oos": sum(item["label"] == OOS for item in rows),
                         "labels": dict(sorted(Counter(item["label"] for item in rows).items())),
                         "sources": dict(sorted(Counter(item["source"] for item in rows if item["label"] != OOS)
                                                .items()))}
    return {"splits": splits, "settings": asdict(settings), **extra}


class CovariateFamily(Family):
    """CLINC14-COV and HWU12-COV (and their 5- and 10-shot variants, compared with the full config), scored as
    open-world intent classification: one intent per Table 1 cluster, trained and tested (``test``) on the i.i.d.
    corpora, ``cov_test`` drawn from the cluster's other corpora (the covariate shift), ``oos`` the last label."""

    name = "covariate"
    description = ("Open-world intent classification under covariate shift: CLINC14-COV and HWU12-COV "
                   "(Khosla & Gangadharaiah, 2022), rebuilt from the public corpora")
    license = "other"
    citation = CITATION
    languages = ("en",)
    task_categories = ("text-classification",)
    options_class = CovariateOptions

    def configs(self) -> list[BenchmarkConfig]:
        return declared_configs(self.name)

    def build(self, configs: list[BenchmarkConfig], context: BuildContext) -> BuildResult:
        from datasets import DatasetDict

        options: CovariateOptions = context.options
        settings = BuildSettings(seed=context.seed, hold_fraction=options.cov_hold_fraction, dedup=options.cov_dedup,
                                 exclude_rostd=options.cov_exclude_rostd)
        sources = Sources.load(context.data_dir, CORPORA)
        built, facts, full = {}, {}, {}
        for config in configs:
            base = config.name.split("_", 2)
            bench = BENCHMARKS["_".join(base[:2])]
            if bench.name not in full:
                full[bench.name] = build_benchmark(bench, sources, settings)
            rows, extra = full[bench.name]
            shots = config.parameters.get("shots")
            if shots:
                rows = few_shot(rows, shots, context.seed)
            names = label_names(bench)
            built[config.name] = DatasetDict({split: to_dataset(rows[split], names) for split in SPLITS})
            facts[config.name] = config_facts(rows, settings, {**extra, "benchmark": bench.name, "shots": shots})
        return BuildResult(built, facts)

    def card_section(self, facts: dict) -> str:
        from .card import render_section

        return render_section(facts)
