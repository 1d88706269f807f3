"""The distracting-test family and the DistractingInsertion shift (Xing and Gulla 2022, §3.3-§3.4, §4.4)."""

import csv
from collections import Counter

import numpy as np
import pytest
from conftest import one_line_error
from scipy import stats

from dialshift.errors import DialshiftError
from dialshift.shifts.base import InstanceRandom
from dialshift.shifts.distraction import (
    DistractingInsertion,
    DistractionPool,
    frequent_sentences,
    normalise,
    rare_sentences,
    word_counts,
)

CONTEXT = ("h0", "h1", "h2", "h3", "query")
SENTENCES = ("why should i help you ?", "i have my right .")


def pool_of(n_dialogues=50, per_dialogue=4):
    return DistractionPool([(f"d{d}", [f"d{d}-u{u}" for u in range(per_dialogue)]) for d in range(n_dialogues)])


# ----------------------------------------------------------------------------------------------- the shift


@pytest.mark.parametrize(("position", "slot"), [("begin", 0), ("middle", 2), ("end", 4)])
def test_fixed_positions_insert_one_block(position, slot):
    result = DistractingInsertion(sentences=SENTENCES, position=position).apply(CONTEXT, InstanceRandom(0, "x"))
    history = list(CONTEXT[:-1])
    history[slot:slot] = SENTENCES
    assert result.context == (*history, "query")
    assert result.inserted_mask == tuple(int(text in SENTENCES) for text in result.context)
    assert result.context[-1] == "query" and result.inserted_mask[-1] == 0


def test_middle_of_odd_history_and_min_history():
    shift = DistractingInsertion(sentences=SENTENCES, position="middle", min_history=2)
    assert shift.apply(("a", "b", "c", "q"), InstanceRandom(0, "x")).context == ("a", *SENTENCES, "b", "c", "q")
    assert shift.apply(("a", "q"), InstanceRandom(0, "x")).reason == "too_few_turns"
    assert DistractingInsertion(sentences=SENTENCES).apply(("q",), InstanceRandom(0, "x")).reason == "too_few_turns"


def test_random_insertion_probability_and_uniform_slots():
    """Each of the two distractions is kept with p, independently; each lands on a uniform History slot."""
    pool = pool_of()
    for probability in (0.5, 0.7, 1.0):
        shift = DistractingInsertion(pool=pool, probability=probability)
        kept = Counter()
        first_slots = Counter()
        n = 3000
        for i in range(n):
            result = shift.apply(("a", "b", "c", "q"), InstanceRandom(7, f"i{i}"))
            count = sum(result.inserted_mask) if result else 0
            assert result or result.reason == "nothing_inserted"
            kept[count] += 1
            if count == 1:
                first_slots[result.inserted_mask.index(1)] += 1
        expected = [(1 - probability) ** 2, 2 * probability * (1 - probability), probability ** 2]
        observed = [kept[k] for k in range(3)]
        if probability == 1.0:
            assert observed == [0, 0, n]
            continue
        assert stats.chisquare(observed, np.array(expected) * n).pvalue > 1e-3
        # a single kept distraction goes to one of the 4 slots of a 3-utterance History with equal chance
        slots = [first_slots[s] for s in range(4)]
        assert stats.chisquare(slots).pvalue > 1e-3


def test_random_distractions_never_from_the_same_dialogue():
    pool = pool_of(n_dialogues=3, per_dialogue=3)
    shift = DistractingInsertion(pool=pool, dialogue_id=lambda instance: instance.split("#")[0])
    sources = Counter()
    for i in range(600):
        dialogue = f"d{i % 3}"
        context = (f"{dialogue}-u0", f"{dialogue}-u1", "q")
        result = shift.apply(context, InstanceRandom(1, f"{dialogue}#{i}"))
        for text, flag in zip(result.context, result.inserted_mask, strict=True):
            if flag:
                assert not text.startswith(dialogue + "-")
                sources[text.split("-")[0]] += 1
    assert set(sources) == {"d0", "d1", "d2"}
    # an utterance equal to one of the context's is never drawn, whatever dialogue it comes from
    shared = DistractionPool([("a", ["same", "other"]), ("b", ["same"])])
    for i in range(200):
        result = DistractingInsertion(pool=shared).apply(("same", "q"), InstanceRandom(0, f"z{i}"))
        assert [t for t, f in zip(result.context, result.inserted_mask, strict=True) if f] == ["other", "other"]


def test_same_inputs_same_result_and_streams_differ():
    pool = pool_of()
    one = DistractingInsertion(pool=pool, probability=0.7)
    again = DistractingInsertion(pool=pool, probability=0.7)
    other = DistractingInsertion(pool=pool, probability=0.7, stream="another_draw")
    draws = [(s.apply(CONTEXT, InstanceRandom(0, f"i{i}")) for s in (one, again, other)) for i in range(30)]
    results = [tuple(d) for d in draws]
    assert all(a == b for a, b, _ in results)
    assert any(a != c for a, _, c in results)


def test_bad_parameters_are_one_line_errors():
    with pytest.raises(DialshiftError, match="exactly one of pool"):
        DistractingInsertion()
    with pytest.raises(DialshiftError, match="inserting probability"):
        DistractingInsertion(sentences=SENTENCES, probability=0.0)
    with pytest.raises(DialshiftError, match="unknown insertion position"):
        DistractingInsertion(sentences=SENTENCES, position="start")
    with pytest.raises(DialshiftError, match="pool is empty"):
        DistractionPool([("a", [])])


def test_sentence_rules_skip_candidates_found_in_the_corpus():
    counts = word_counts(["why should i help you ? i have my right . would lunch lunch",
                          "what do you want from me ? i do not know what to say ."] * 3 + ["violin"])
    corpus = {normalise("Why should I help you?")}
    chosen = frequent_sentences(counts, corpus, top=100)
    assert chosen.sentences == ("what do you want from me ?", "i do not know what to say .")
    assert "occurs in the corpus" in chosen.rejected[0]
    # lunch is seen 6 times: not rare at max_count 5; violin (1x) is the first rare candidate
    rare = rare_sentences(counts, set(), max_count=5)
    assert rare.sentences == ("would you have violin ?", "i should have violin .")
    assert rare.word_counts["violin"] == 1
    with pytest.raises(DialshiftError, match="no candidate noun"):
        rare_sentences(Counter(), set())


# ----------------------------------------------------------------------------------------------- Lowe CSV


def write_lowe(folder, train_rows=None, header=("Context", "Utterance", "Label")):
    """A tiny Lowe-format corpus: train.csv, valid.csv, test.csv."""
    folder.mkdir(parents=True, exist_ok=True)
    words = "why should i help you ? i have my right . would lunch".split()
    if train_rows is None:
        train_rows = []
        for d in range(30):
            turns = [f"topic {d} question {t} __eou__ more {d} {t} __eou__" for t in range(3)]
            lunch = " lunch" if d == 0 else ""  # seen once: the rare word
            train_rows.append([" __eot__ ".join(turns), f"answer {d} {' '.join(words[d % 11:11])}{lunch}", "1"])
            train_rows.append([turns[0], "a wrong answer", "0"])
    with open(folder / "train.csv", "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        writer.writerows(train_rows)
    for name in ("valid.csv", "test.csv"):
        with open(folder / name, "w", newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow(["Context", "Ground Truth Utterance", *(f"Distractor_{i}" for i in range(2))])
            for d in range(12):
                turns = [f"{name} dialogue {d} turn {t} __eou__" for t in range(2 + d % 4)]
                writer.writerow([" __eot__ ".join(turns), f"reply {d} __eou__", "x", "y"])
    return folder / "train.csv"


def build(train_csv, names, **options):
    from dialshift_families.distracting import DistractingFamily, DistractingOptions

    from dialshift.registry import BuildContext

    family = DistractingFamily()
    configs = [family.config(name) for name in names]
    context = BuildContext(data_dir=train_csv.parent, progress=False,
                           options=DistractingOptions(ubuntu_csv=str(train_csv), **options))
    return family.build(configs, context)


UBUNTU = ["ubuntu", "ubuntu_distract_random_0.5", "ubuntu_distract_random_1.0", "ubuntu_distract_frequent_middle",
          "ubuntu_distract_rare_end"]


def test_lowe_csv_builds_every_ubuntu_config_with_masks(tmp_path):
    result = build(write_lowe(tmp_path / "lowe"), UBUNTU)
    base = result.datasets["ubuntu"]
    assert {split: len(part) for split, part in base.items()} == {"train": 30, "validation": 12, "test": 12}
    first = base["train"][0]
    assert first["context"] == ["topic 0 question 0 more 0 0", "topic 0 question 1 more 0 1",
                                "topic 0 question 2 more 0 2"]
    assert first["distractor_mask"] == [0, 0]
    assert result.facts["ubuntu"]["processing"]["train"]["negative_rows_skipped"] == 30
    for name in UBUNTU[1:]:
        for row in result.datasets[name]["test"]:
            mask = row["distractor_mask"]
            assert len(mask) == len(row["context"]) - 1
            assert [text for text, flag in zip(row["context"], mask, strict=False) if flag] == row["distractors"]
            assert 1 <= sum(mask) <= 2 and sum(mask) < len(mask)
    rare = result.datasets["ubuntu_distract_rare_end"]["test"][0]
    assert rare["context"][-3:-1] == ["would you have lunch ?", "i should have lunch ."]
    assert result.facts["ubuntu_distract_frequent_middle"]["sentences"] == list(SENTENCES)
    # rows of random sets keep their unshifted id, response and original utterances, in order
    unshifted = {row["id"]: row for row in base["test"]}
    for row in result.datasets["ubuntu_distract_random_0.5"]["test"]:
        original = [t for t, f in zip(row["context"][:-1], row["distractor_mask"], strict=True) if not f]
        assert original == unshifted[row["id"]]["context"][:-1] and row["response"] == unshifted[row["id"]]["response"]


def test_rebuild_is_byte_identical_and_redraw_changes_random_sets(tmp_path):
    train_csv = write_lowe(tmp_path / "lowe")
    names = ["ubuntu_distract_random_0.7", "ubuntu_distract_frequent_begin"]
    one, two = build(train_csv, names), build(train_csv, names)
    redrawn = build(train_csv, names, redraw_seed=3)
    for name in names:
        assert one.datasets[name]["test"].data.equals(two.datasets[name]["test"].data)
    assert not one.datasets[names[0]]["test"].data.equals(redrawn.datasets[names[0]]["test"].data)
    assert one.datasets[names[1]]["test"].data.equals(redrawn.datasets[names[1]]["test"].data)


def test_lowe_csv_bad_input_is_a_one_line_error(tmp_path):
    missing = write_lowe(tmp_path / "missing", header=("Context", "Response", "Label"))
    with pytest.raises(DialshiftError, match=r"train\.csv:1: missing column\(s\) Utterance") as error:
        build(missing, ["ubuntu"])
    assert "\n" not in str(error.value)
    empty = write_lowe(tmp_path / "empty", train_rows=[["topic __eou__ __eot__ x __eou__", "ok", "1"],
                                                       ["", "an answer", "1"]])
    with pytest.raises(DialshiftError, match=r"train\.csv:3: empty conversation"):
        build(empty, ["ubuntu"])
    (tmp_path / "alone").mkdir()
    alone = tmp_path / "alone" / "train.csv"
    alone.write_text("Context,Utterance,Label\n")
    with pytest.raises(DialshiftError, match="valid.csv: not found"):
        build(alone, ["ubuntu"])


def test_cli_build_validate_and_load_dataset(tmp_path):
    from datasets import load_dataset

    from dialshift.cli import main

    train_csv = write_lowe(tmp_path / "lowe")
    out = tmp_path / "out"
    assert main(["build", "--family", "distracting", "--config", "ubuntu*", "--ubuntu-csv", str(train_csv),
                 "--redraw-seed", "2", "--out", str(out), "--no-progress"]) == 0
    assert main(["validate", "--partial", str(out)]) == 0  # the dailydialog_distract_* configs are not built
    loaded = load_dataset(str(out), "ubuntu_distract_rare_begin", split="test")
    assert len(loaded) and loaded[0]["distractor_mask"][:2] == [1, 1]
    card = (out / "README.md").read_text()
    assert "would you have lunch ?" in card and "redraw seed in this folder: 2" in card


def test_a_build_from_the_ubuntu_csv_needs_no_raw_data_folder(tmp_path, no_raw_data, capsys):
    """The Ubuntu configs from --ubuntu-csv read no raw corpus, so no data folder is looked up; a config that reads
    one still says how to fetch the corpora."""
    from dialshift.cli import main

    train_csv = write_lowe(tmp_path / "lowe")
    assert main(["build", "--family", "distracting", "--config", "ubuntu_distract_rare_end", "--ubuntu-csv",
                 str(train_csv), "--out", str(tmp_path / "out"), "--no-progress"]) == 0
    capsys.readouterr()
    assert main(["build", "--family", "distracting", "--config", "dailydialog_distract_rare_end", "--out",
                 str(tmp_path / "out"), "--no-progress"]) == 2
    assert "no raw data directory found; fetch the raw corpora with `dialshift download`" in one_line_error(capsys)


# ----------------------------------------------------------------------------------------------- real data


@pytest.mark.data
@pytest.mark.slow
def test_ubuntu_irc_sentences_are_absent_and_positions_hold(raw_data_dir):
    from dialshift_families.distracting import DistractingFamily, DistractingOptions, Resources, corpora

    from dialshift.registry import BuildContext

    corpus = corpora.ubuntu_irc(raw_data_dir, 10)
    assert {split: corpus.counts[split]["conversations"] for split in corpus.counts} == {
        "train": 4284, "validation": 175, "test": 293}
    resources = Resources(corpus, DistractingOptions())
    every = {normalise(text) for split in corpus.dialogues.values() for _, utterances in split for text in utterances}
    for kind in ("frequent", "rare"):
        assert not {normalise(s) for s in resources.sentences[kind].sentences} & every
    assert not any("http://" in text or "https://" in text for _, u in corpus.dialogues["test"] for text in u)
    family = DistractingFamily()
    config = family.config("ubuntu_distract_frequent_end")
    rows = family.build([config], BuildContext(data_dir=raw_data_dir, progress=False, options=DistractingOptions()))
    test = rows.datasets[config.name]["test"]
    assert all(row["distractor_mask"][-2:] == [1, 1] for row in test.select(range(50)))


def test_rows_regenerate_from_their_shift_column(tmp_path):
    """A sample of rows of every shifted config, rebuilt from the row's ``shift`` column alone (with the family's
    pool or fixed sentences) through the public Shift API, from the unshifted row of the same id."""
    from dialshift_families.distracting import corpora

    from dialshift.shifts import DistractionPool, shift_from_description

    train_csv = write_lowe(tmp_path / "lowe")
    result = build(train_csv, UBUNTU)
    unshifted = {row["id"]: row for row in result.datasets["ubuntu"]["test"]}
    assert all(row["shift"] is None for row in unshifted.values())
    pool = DistractionPool(corpora.lowe_csv(str(train_csv), 10).dialogues["train"])
    checked = 0
    for name in UBUNTU[1:]:
        sentences = result.facts[name].get("sentences")
        for row in list(result.datasets[name]["test"])[:5]:
            description = row["shift"]
            resources = {"sentences": sentences} if sentences else {"pool": pool}
            shift = shift_from_description(description, stream=description["key"], **resources)
            again = shift.apply(unshifted[row["id"]]["context"], InstanceRandom(description["seed"], row["id"]))
            assert list(again.context) == row["context"]
            checked += 1
    assert checked >= 15
