"""Declared baselines on the real full build: every config of the four families scored from seeded random
predictions; each paired difference is on shared ids, against the declared baselines only. The full folder is built
from the raw corpora (about 2.5 minutes on 2 cores; skipped without them) unless ``DIALSHIFT_FULL_BUILD`` names a
folder built earlier."""

import json
import os
from pathlib import Path

import numpy as np
import pytest

from dialshift.scoring import ScoringSettings, score_directory

PREBUILT = os.environ.get("DIALSHIFT_FULL_BUILD")
FAMILIES = ("dailydialog", "distracting", "covariate", "korean")


def random_predictions(folder: Path, config, rng) -> list[dict]:
    """Seeded random predictions of one config's test split, in its task's format."""
    import pyarrow.parquet as pq

    table = pq.read_table(next((folder / config.name).glob("test-*.parquet")))
    ids = table.column("id").to_pylist()
    if config.task in ("response_ranking", "pairwise_selection"):
        width = len(table.column("candidates")[0].as_py())
        logits = rng.normal(size=(len(ids), width))
        probabilities = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
        return [{"id": i, "scores": s.tolist(), "probabilities": p.tolist()}
                for i, s, p in zip(ids, logits, probabilities, strict=True)]
    if config.task == "open_world_intent":
        labels = rng.integers(0, config.parameters["num_labels"], len(ids))
        return [{"id": i, "prediction": int(p), "score": float(s)}
                for i, p, s in zip(ids, labels, rng.random(len(ids)), strict=True)]
    extra = 1 if config.parameters.get("includes_query") else 0
    return [{"id": i, "attention_scores": (rng.random(len(mask) + extra) + 0.01).tolist()}
            for i, mask in zip(ids, table.column("distractor_mask").to_pylist(), strict=True)]


@pytest.fixture(scope="module")
def full_build(tmp_path_factory, raw_data_dir) -> Path:
    """``$DIALSHIFT_FULL_BUILD``, or every config of every family built from the raw corpora."""
    if PREBUILT:
        return Path(PREBUILT)
    from dialshift.build import build

    out = tmp_path_factory.mktemp("full-build") / "dialshift"
    build(None, raw_data_dir, out, num_proc=2, progress=False)
    return out


@pytest.fixture(scope="module")
def full_document(tmp_path_factory, full_build):
    from dialshift.hub import folder_configs

    configs = folder_configs(full_build)
    assert {config.family for config in configs.values()} >= set(FAMILIES)
    predictions = tmp_path_factory.mktemp("full-predictions")
    rng = np.random.default_rng(20)
    for name, config in sorted(configs.items()):
        rows = random_predictions(full_build, config, rng)
        (predictions / f"{name}.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    return configs, score_directory(predictions, ScoringSettings(full_build, replicates=20)), predictions


@pytest.mark.data
@pytest.mark.slow
def test_full_build_differences_follow_the_declared_baselines(full_document):
    configs, document, _ = full_document
    assert set(document["results"]) == set(configs)
    differences = document["differences"]
    for name, by_base in differences.items():
        assert set(by_base) == {b.config for b in configs[name].baselines}, name
        for base, entry in by_base.items():
            if entry["shared"] == 0:  # no shared id: no difference printed
                assert entry["metrics"] == {}, (name, base)
            else:
                assert entry["metrics"] and entry["shared"] <= min(document["results"][name]["instances"],
                                                                   document["results"][base]["instances"])
    # IC against its own control on all its instances, and against the corpus on the same ids
    for k in range(1, 6):
        entry = differences[f"ic_{k}of6"]
        assert entry["ic_0of6"]["kind"] == "control" and entry["ic_0of6"]["shared"] == 2472
        assert entry["dailydialog"]["shared"] == 2472 and entry["ic_0of6"]["metrics"]["recall@1"]["value"] is not None
    assert differences["uw_0.30"]["kw_0.30"]["shared"] == document["results"]["uw_0.30"]["instances"]
    # each distracting set against its own corpus only: ubuntu's on shared ids, DailyDialog's share none
    for name, config in configs.items():
        if config.family == "distracting" and config.shifted:
            corpus = config.parameters["corpus"]
            assert set(differences[name]) == {corpus}
            assert (differences[name][corpus]["shared"] > 0) == (corpus == "ubuntu"), name
    assert not any(name.startswith("kor_") for name in differences)
    assert set(differences["hwu12_cov_5shot"]) == {"hwu12_cov"}


@pytest.mark.data
@pytest.mark.slow
def test_full_build_report_prints_no_difference_without_shared_ids(full_document, tmp_path):
    from dialshift.scoring.report import render_markdown

    _, document, _ = full_document
    text = render_markdown({"random": document})
    assert "| ic_2of6 | ic_0of6 (control) | 2,472 |" in text and "| ic_2of6 | dailydialog (corpus) | 2,472 |" in text
    assert "- `dailydialog_distract_random_0.5` vs `dailydialog` (corpus): no instance id in common" in text
    assert "| dailydialog_distract_random_0.5 | " not in text.split("## DailyDialog: random")[1].split("Paired")[1]
    assert "ubuntu (corpus)" not in text.split("## DailyDialog: random")[1].split("##")[0]


@pytest.mark.data
@pytest.mark.slow
def test_full_build_config_scored_alone_gets_the_intervals_of_the_full_submission(full_build, full_document):
    """The bootstrap counts an id the same whatever else is scored: ``ic_2of6`` alone gets byte-identical intervals,
    and scored with its two baselines the same paired differences as in the full submission."""
    from dialshift.scoring.pipeline import score_files

    _, document, predictions = full_document
    settings = ScoringSettings(full_build, replicates=20)
    alone = score_files({"ic_2of6": predictions / "ic_2of6.jsonl"}, settings)
    assert json.dumps(alone["intervals"]["ic_2of6"]) == json.dumps(document["intervals"]["ic_2of6"])
    trio = score_files({name: predictions / f"{name}.jsonl" for name in ("ic_2of6", "ic_0of6", "dailydialog")},
                       settings)
    assert json.dumps(trio["differences"]["ic_2of6"]) == json.dumps(document["differences"]["ic_2of6"])
