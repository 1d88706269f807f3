"""A corpus nobody tuned for, end to end: 2-4-turn contexts (strings and lists) shifted by every public shift through
``shift_dataset``, skips counted by reason, a folder under the user's own config names, hand-made predictions scored
by ``dialshift score``, and ``results.md`` and the curves under those names; ``dialshift shift`` does the same."""

import json

import numpy as np
import pytest
from datasets import Dataset
from test_shift_api import WORDNET  # noqa: I001  (the fake WordNet)

from dialshift.cli import main as cli
from dialshift.custom import custom_config, write_custom_folder
from dialshift.errors import DialshiftError
from dialshift.hub import folder_configs
from dialshift.shifts import (
    DistractingInsertion,
    ImportantWord,
    InsufficientContext,
    KnownWord,
    SourceLength,
    TokenizedContext,
    UnknownWord,
    shift_dataset,
)
from dialshift.shifts.replace import SynonymTable
from dialshift.shifts.words import Vocabulary

TURNS = [["the car is big .", "yes , a big red car ."],
         ["see the house ?", "the house is big .", "a red house ."],
         ["the big car is red , the house is big .", "yes .", "the car ?", "a big house ."],
         ["it ?", "yes ."]]
CANDIDATES = ["a good answer .", "another one .", "the third ."]


def corpus(as_strings: bool) -> Dataset:
    rows = []
    for k in range(12):
        turns = TURNS[k % len(TURNS)]
        rows.append({"id": f"d{k}", "context": " __eou__ ".join(turns) if as_strings else turns,
                     "candidates": CANDIDATES, "label": k % 3})
    return Dataset.from_list(rows)


def every_shift():
    synonyms = SynonymTable(WORDNET, Vocabulary.from_texts(["the is a it ? yes , ."] * 20))
    scores = {tuple(turns): [[float(len(token)) for token in tokens] for tokens in TokenizedContext.of(turns).tokens]
              for turns in TURNS}
    return {"my_uw": UnknownWord(ratio=0.2, synonyms=synonyms),
            "my_kw": KnownWord(ratio=0.2, synonyms=synonyms, min_count=10),
            "my_imp": ImportantWord(bucket=2, num_buckets=2, synonyms=synonyms, scores=scores),
            "my_ic": InsufficientContext(deleted=1, window=3),
            "my_sr": SourceLength(turns=3),
            "my_distract": DistractingInsertion(sentences=["why should i help you ?", "i have my right ."])}


def predictions(folder, data: Dataset, seed: int) -> None:
    rng = np.random.default_rng(seed)
    lines = []
    for row in data:
        logits = rng.normal(size=len(row["candidates"]))
        logits[row["label"]] += 1.0
        probabilities = np.exp(logits) / np.exp(logits).sum()
        lines.append(json.dumps({"id": row["id"], "probabilities": probabilities.tolist()}))
    (folder / f"{data.info.config_name or 'x'}.jsonl").write_text("\n".join(lines) + "\n")


@pytest.mark.parametrize("as_strings", [False, True])
def test_every_shift_on_a_new_corpus_scored_under_its_own_names(tmp_path, as_strings):
    source = corpus(as_strings)
    separator = "__eou__" if as_strings else None
    shifted, reports = {}, {}
    for name, shift in every_shift().items():
        shifted[name], reports[name] = shift_dataset(source, shift, seed=1, turn_separator=separator,
                                                     return_report=True)
    assert reports["my_ic"].skipped == {"too_few_turns": 6} and reports["my_ic"].shifted == 6
    assert reports["my_sr"].skipped == {"wrong_length": 9}
    assert reports["my_uw"].skipped == {"too_few_tokens": 3}
    assert reports["my_imp"].skipped.get("empty_bucket", 0) > 0 and reports["my_imp"].shifted > 0
    assert all(report.rows == 12 and report.shifted + sum(report.skipped.values()) == 12
               for report in reports.values())
    base = shift_dataset(source, InsufficientContext(deleted=0, window=1), turn_separator=separator)  # as turns
    base = base.remove_columns(["replacements", "deleted_turns", "truncated_turns", "inserted_mask", "shift"])
    base = base.map(lambda row, k: {"context": list(source[k]["context"].split(" __eou__ ")) if as_strings
                                    else source[k]["context"]}, with_indices=True)
    configs = [custom_config("my_corpus", task="response_ranking", description="a corpus nobody tuned for")]
    configs += [custom_config(name, task="response_ranking", description=f"my {name[3:]} shift", shift=shift,
                              baseline="my_corpus", report=reports[name])
                for name, shift in every_shift().items()]
    folder = write_custom_folder(tmp_path / "mine", {"my_corpus": base, **shifted}, configs)
    stored = folder_configs(folder)
    assert set(stored) == {"my_corpus", *every_shift()}
    assert stored["my_uw"].family == "custom" and stored["my_uw"].parameters["ratio"] == 0.2
    assert stored["my_uw"].parameters["skipped"] == {"too_few_tokens": 3}
    assert stored["my_ic"].baselines[0].config == "my_corpus"
    runs = tmp_path / "predictions"
    runs.mkdir()
    for seed, (name, data) in enumerate({"my_corpus": base, **shifted}.items()):
        data.info.config_name = name
        predictions(runs, data, seed)
    assert cli(["score", str(runs), "--dataset", str(folder), "--out", str(tmp_path / "results"),
                "--bootstrap", "50", "--no-progress"]) == 0
    results = json.loads((tmp_path / "results" / "results.json").read_text())
    assert set(results["results"]) == {"my_corpus", *every_shift()}
    assert results["results"]["my_ic"]["instances"] == 6
    assert "my_corpus" in results["differences"]["my_uw"]
    report = (tmp_path / "results" / "results.md").read_text()
    assert "UnknownWord (my uw shift)" in report and "my_ic" in report
    plots = {path.name for path in (tmp_path / "results" / "plots").iterdir()}
    assert {f"shift_custom_{shift.name}.png" for shift in every_shift().values()} <= plots


def test_folder_refuses_repeated_ids_and_unwritten_baselines(tmp_path):
    data = Dataset.from_list([{"id": "a", "context": ["x"], "candidates": CANDIDATES, "label": 0}] * 2)
    config = custom_config("mine", task="response_ranking", description="d")
    with pytest.raises(DialshiftError, match="'mine' split 'test': ids repeat"):
        write_custom_folder(tmp_path / "f", {"mine": data}, [config])
    shifted = custom_config("my_ic", task="response_ranking", description="d", shift=SourceLength(turns=1),
                            baseline="absent")
    with pytest.raises(DialshiftError, match="baseline 'absent' is not written with it"):
        write_custom_folder(tmp_path / "f", {"my_ic": data.select([0])}, [shifted])
    with pytest.raises(DialshiftError, match="no scoring task 'ranking'"):
        custom_config("x", task="ranking", description="d")


def test_shift_command_writes_named_configs_that_score(tmp_path, capsys):
    rows = [{"id": f"t{k}", "context": " || ".join(TURNS[k % 4]), "candidates": CANDIDATES, "label": k % 3}
            for k in range(8)]
    (tmp_path / "test.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    out = tmp_path / "mine"
    assert cli(["shift", str(tmp_path / "test.jsonl"), "--shift", "ic", "--param", "deleted=1", "--param",
                "window=3", "--name", "ddpp_ic", "--source-name", "ddpp", "--turn-separator", "||",
                "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "4 shifted rows from 8 rows; 4 not shifted, left out (too_few_turns 4)" in printed
    assert set(folder_configs(out)) == {"ddpp", "ddpp_ic"}
    runs = tmp_path / "predictions"
    runs.mkdir()
    for name, ids in (("ddpp", [row["id"] for row in rows]), ("ddpp_ic", ["t1", "t2", "t5", "t6"])):
        (runs / f"{name}.jsonl").write_text("".join(json.dumps({"id": i, "probabilities": [0.5, 0.3, 0.2]}) + "\n"
                                                    for i in ids))
    assert cli(["score", str(runs), "--dataset", str(out), "--bootstrap", "20", "--no-progress", "--no-plots"]) == 0
    assert "ddpp_ic" in (tmp_path / "results.md").read_text()
    assert cli(["shift", str(tmp_path / "test.jsonl"), "--shift", "ic", "--name", "x", "--source-name", "y",
                "--out", str(out)]) == 2
    assert "--param NAME=VALUE" in capsys.readouterr().err
    assert cli(["shift", str(tmp_path / "test.jsonl"), "--shift", "ic", "--param", "deleted=1", "--param",
                "window=xx", "--name", "x", "--source-name", "y", "--out", str(tmp_path / "other")]) == 2
    assert "parameter window='xx': expected a whole number" in capsys.readouterr().err


def test_score_a_subset_scores_only_and_rounded_probabilities(tmp_path, capsys):
    rows = [{"id": f"t{k}", "context": TURNS[k % 4], "candidates": CANDIDATES, "label": k % 3} for k in range(40)]
    folder = write_custom_folder(tmp_path / "mine", {"mine": Dataset.from_list(rows)},
                                 [custom_config("mine", task="response_ranking", description="mine")])
    logits = np.random.default_rng(0).normal(size=(40, 3))
    probabilities = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)

    def score(name, lines, *flags):
        runs = tmp_path / name
        runs.mkdir()
        (runs / "mine.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
        code = cli(["score", str(runs), "--dataset", str(folder), "--bootstrap", "20", "--no-progress", "--no-plots",
                    *flags])
        return code, (json.loads((runs / "results.json").read_text()) if code == 0 else capsys.readouterr().err)

    code, full = score("full", [{"id": f"t{k}", "probabilities": probabilities[k].tolist()} for k in range(40)])
    assert code == 0 and full["options"]["mine"]["probabilities"] == "given"
    code, softmaxed = score("scores", [{"id": f"t{k}", "scores": logits[k].tolist()} for k in range(40)])
    assert code == 0 and softmaxed["options"]["mine"]["probabilities"] == "softmax(scores)"
    assert softmaxed["results"]["mine"]["ece"] == pytest.approx(full["results"]["mine"]["ece"])
    rounded = [{"id": f"t{k}", "probabilities": np.round(probabilities[k], 3).tolist()} for k in range(40)]
    assert any(abs(sum(line["probabilities"]) - 1) > 1e-4 for line in rounded)
    code, error = score("rounded", rounded)
    assert code == 2 and "sums to" in error and "tolerance 0.0001" in error
    code, tolerant = score("tolerant", rounded, "--sum-tolerance", "0.005")
    assert code == 0 and "renormalised" in tolerant["options"]["mine"]
    assert tolerant["results"]["mine"]["brier"] == pytest.approx(full["results"]["mine"]["brier"], abs=1e-3)
    subset = ["t1", "t5", "t7", "t30"]
    (tmp_path / "ids.txt").write_text("\n".join(subset) + "\n")
    code, part = score("subset", [{"id": i, "probabilities": probabilities[int(i[1:])].tolist()} for i in subset],
                       "--ids", str(tmp_path / "ids.txt"))
    assert code == 0 and part["results"]["mine"]["instances"] == 4 and part["scoring"]["subset"]["ids"] == 4
    assert "**a subset**: only the 4 ids" in (tmp_path / "subset" / "results.md").read_text()


@pytest.mark.wordnet
@pytest.mark.parametrize("params", [["ratio=0.3"], ["ratio=0.3", "mode=meaning", "fit=none"]])
def test_shift_command_runs_the_word_shift_with_its_ratio_alone(tmp_path, monkeypatch, capsys, params):
    """``--shift uw --param ratio=0.3`` (the README's line): rounding, unseen and fit are optional parameters."""
    monkeypatch.setenv("DIALSHIFT_CACHE_DIR", str(tmp_path / "cache"))
    rows = [{"id": f"t{k}", "context": ["I want to buy a new car because mine is broken", "can you help me today"],
             "candidates": CANDIDATES, "label": 0} for k in range(3)]
    for name in ("test", "train"):
        (tmp_path / f"{name}.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    given = [item for param in params for item in ("--param", param)]
    assert cli(["shift", str(tmp_path / "test.jsonl"), "--train", str(tmp_path / "train.jsonl"), "--shift", "uw",
                *given, "--name", "my_uw", "--source-name", "my_test", "--out", str(tmp_path / "out")]) == 0
    assert "3 shifted rows from 3 rows" in capsys.readouterr().out
    assert set(folder_configs(tmp_path / "out")) == {"my_test", "my_uw"}
