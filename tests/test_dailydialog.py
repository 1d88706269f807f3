"""DailyDialog reader (fixtures and the real release) and the family build (real data, marked ``data``)."""

import subprocess
import sys
from pathlib import Path

import pytest
from dialshift_families.dailydialog import DailyDialogOptions

from dialshift.errors import DialshiftError, SourceError
from dialshift.registry import BuildContext, get_family
from dialshift.sources.dailydialog import SOURCE, _repair, read_split


def config(name):
    return get_family("dailydialog").config(name)


def build(names, data_dir, num_proc=1, **options):
    """Build configs by name as ``dialshift build`` does (requested patterns = the names)."""
    context = BuildContext(data_dir=data_dir, num_proc=num_proc, progress=False,
                           options=DailyDialogOptions(**options), requested=tuple(names))
    return get_family("dailydialog").build([config(name) for name in names], context)

# --- reader on fixtures -----------------------------------------------------------------------------------------


def write_split(root: Path, split: str, text: list[str], acts: list[str], emotions: list[str] | None = None) -> Path:
    folder = root / "dailydialog" / split
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"dialogues_{split}.txt").write_text("".join(line + "\n" for line in text), encoding="utf-8")
    (folder / f"dialogues_act_{split}.txt").write_text("".join(line + "\n" for line in acts), encoding="utf-8")
    emotions = emotions if emotions is not None else [" ".join("0" for _ in line.split()) for line in acts]
    (folder / f"dialogues_emotion_{split}.txt").write_text("".join(line + "\n" for line in emotions),
                                                           encoding="utf-8")
    return folder


def test_reader_splits_utterances_and_labels(tmp_path):
    text = ["Hi , Tom . __eou__ Hello ! __eou__", "How are you ? __eou__ Fine . __eou__ Good . __eou__"]
    write_split(tmp_path, "test", text, ["1 1 ", "2 1 1 "], ["4 0 ", "0 0 6 "])
    dialogues = read_split(tmp_path, "test")
    assert [d.id for d in dialogues] == ["dd-test-00000", "dd-test-00001"]
    assert dialogues[1].turns == ("How are you ?", "Fine .", "Good .")
    assert dialogues[1].acts == (2, 1, 1) and dialogues[1].emotions == (0, 0, 6) and dialogues[0].repaired == ""


@pytest.mark.parametrize("text, acts, message, line", [
    (["Hi . __eou__ Yo . __eou__", "Hi . __eou__ Yo ."], ["1 1", "1 1"], "does not end with __eou__", 2),
    (["Hi . __eou__ __eou__ Yo . __eou__"], ["1 1 1"], "empty utterance", 1),
    (["Hi . __eou__ Yo . __eou__"], ["1 1 1"], "3 labels for 2 utterances", 1),
    (["Hi . __eou__ Yo . __eou__"], ["1 x"], "labels must be integers", 1),
    (["Hi . __eou__ Yo . __eou__"], ["1 7"], "label 7 is not one of", 1),
])
def test_corrupt_lines_name_file_and_line(tmp_path, text, acts, message, line):
    write_split(tmp_path, "test", text, acts)
    with pytest.raises(SourceError, match=message) as error:
        read_split(tmp_path, "test")
    assert error.value.line == line and "\n" not in str(error.value)


def test_missing_or_short_files_are_named(tmp_path):
    folder = write_split(tmp_path, "test", ["Hi . __eou__ Yo . __eou__"] * 2, ["1 1"])
    with pytest.raises(SourceError, match="dialogues_act_test.txt"):
        read_split(tmp_path, "test")
    (folder / "dialogues_emotion_test.txt").unlink()
    with pytest.raises(SourceError, match="dialogues_emotion_test.txt"):
        read_split(tmp_path, "test")


def test_official_counts_are_checked(tmp_path):
    for split in ("train", "validation", "test"):
        write_split(tmp_path, split, ["Hi . __eou__ Yo . __eou__"], ["1 1"])
    with pytest.raises(SourceError, match="11,118"):
        SOURCE.load(tmp_path)


def test_known_defect_is_repaired_only_where_the_text_matches(tmp_path):
    turns = ["Sam , can we stop ?", "Do you ?", "Yes .", "What happened ?", "I left it at my parent's house , ok .",
             "I've been using Jim's old bike .", "Let's go then ."]
    repaired, note = _repair("train", 7852, tmp_path, turns)
    assert len(repaired) == 6
    assert repaired[4] == "I left it at my parent's house , ok . I've been using Jim's old bike ."
    assert "7,852" in note
    assert _repair("train", 7851, tmp_path, turns) == (turns, "")
    with pytest.raises(SourceError, match="known defect"):
        _repair("train", 7852, tmp_path, turns[:4] + ["Something else .", "More ."])


# --- the real release -------------------------------------------------------------------------------------------


@pytest.mark.data
def test_real_release_counts_and_defect(raw_data_dir):
    dialogues = SOURCE.load(raw_data_dir)
    assert {split: len(items) for split, items in dialogues.items()} == {"train": 11118, "validation": 1000,
                                                                         "test": 1000}
    assert sum(len(d.turns) for d in dialogues["test"]) == 7740
    defect = dialogues["train"][7851]
    assert len(defect.turns) == len(defect.acts) == 11 and defect.repaired
    assert [d.id for d in dialogues["train"] if d.repaired] == ["dd-train-07851"]


# --- the family on real data ------------------------------------------------------------------------------------

CONFIGS = ["dailydialog", "uw_0.30", "kw_0.30", "uw_0.50", "ic_0of6", "ic_5of6", "sr_6", "sr_1"]


@pytest.fixture(scope="module")
def built(raw_data_dir):
    pytest.importorskip("nltk")
    if not Path("/usr/share/wordnet/data.noun").is_file():
        pytest.skip("wordnet-base not installed")
    return build(CONFIGS, raw_data_dir, num_proc=2).datasets


@pytest.mark.data
@pytest.mark.wordnet
@pytest.mark.slow
def test_real_build_counts(built):
    assert {split: len(data) for split, data in built["dailydialog"].items()} == {"train": 76052, "validation": 7069,
                                                                             "test": 6740}
    assert len(built["ic_0of6"]["test"]) == len(built["ic_5of6"]["test"]) == 2472
    assert len(built["sr_6"]["test"]) == 534 and len(built["sr_1"]["test"]) == 1000
    assert len(built["uw_0.30"]["test"]) == len(built["kw_0.30"]["test"]) > len(built["uw_0.50"]["test"]) > 1500
    assert list(built["uw_0.30"]) == ["test"]
    ic = built["ic_5of6"]["test"][0]
    assert ic["context_turns"] == 1 and len(ic["deleted_turns"]) == 5


@pytest.mark.data
@pytest.mark.wordnet
@pytest.mark.slow
def test_property_uw_replacements_are_unknown_wordnet_synonyms(built, raw_data_dir):
    from dialshift.shifts.words import is_numeral, tokenize
    from dialshift.wordnet import load_wordnet

    train = {token.lower() for d in SOURCE.load(raw_data_dir)["train"] for turn in d.turns for token in tokenize(turn)}
    wordnet = load_wordnet()
    source = {row["id"]: row for row in built["dailydialog"]["test"]}
    lemmas_of = {}
    checked = 0
    for name in ("uw_0.30", "uw_0.50"):
        for row in built[name]["test"]:
            original = source[row["id"]]
            assert (row["candidates"], row["label"]) == (original["candidates"], original["label"])
            for item in row["replacements"]:
                replacement = item["replacement"]
                assert replacement.lower() not in train
                word = item["original"].lower()
                if word not in lemmas_of:
                    # a synonym from a sense that is not a number sense (I -> ane and dozen -> xii would leak)
                    lemmas_of[word] = {lemma.lower() for s in wordnet.synsets(word)
                                       if not any(is_numeral(name) for name in s.lemma_names())
                                       for lemma in s.lemma_names()}
                assert replacement.lower() in lemmas_of[word]
                assert tokenize(original["context"][item["turn"]])[item["index"]] == item["original"]
                assert tokenize(row["context"][item["turn"]])[item["index"]] == replacement
                checked += 1
    assert checked > 100_000


@pytest.mark.data
@pytest.mark.wordnet
@pytest.mark.slow
def test_rebuild_is_byte_identical_whatever_num_proc(built, raw_data_dir, tmp_path):
    from dialshift.hub import write_hub_folder

    names = ["dailydialog", "uw_0.30", "kw_0.30", "ic_5of6"]
    again = build(names, raw_data_dir, num_proc=1).datasets
    write_hub_folder(tmp_path / "a", {name: built[name] for name in names}, [], progress=False)
    write_hub_folder(tmp_path / "b", again, [], progress=False)
    files = sorted(path.relative_to(tmp_path / "a") for path in (tmp_path / "a").rglob("*.parquet"))
    assert len(files) == 6
    for file in files:
        assert (tmp_path / "a" / file).read_bytes() == (tmp_path / "b" / file).read_bytes(), file


@pytest.mark.data
@pytest.mark.wordnet
@pytest.mark.slow
def test_real_shift_does_not_change_when_other_instances_are_removed(built, raw_data_dir):
    from dialshift_families.dailydialog.pipeline import DailyDialogShifts

    from dialshift.wordnet import load_wordnet

    dialogues = SOURCE.load(raw_data_dir)
    dialogues["test"] = dialogues["test"][::3]
    subset = DailyDialogShifts(dialogues, load_wordnet()).rows(config("uw_0.30"))
    full = {row["id"]: row for row in built["uw_0.30"]["test"]}
    assert len(subset) > 1500
    for row in subset:
        assert row["replacements"] == full[row["id"]]["replacements"]
        assert row["context"] == full[row["id"]]["context"]


@pytest.mark.data
@pytest.mark.wordnet
@pytest.mark.slow
def test_importance_configs_with_a_fake_scorer(raw_data_dir):
    family = get_family("dailydialog")

    def scorer(contexts):  # importance = position in the context (later tokens matter more)
        return [[[float(t * 1000 + i) for i in range(len(turn))] for t, turn in enumerate(context)]
                for context in contexts]

    names = [f"uw_imp_{b}" for b in range(1, 6)]
    result = build(names, raw_data_dir, importance_scorer=scorer)
    built = result.datasets
    counts = {len(built[name]["test"]) for name in names}
    assert len(counts) == 1 and counts.pop() > 4000
    means = [sum(len(r) for r in built[name]["test"]["replacements"]) / len(built[name]["test"]) for name in names]
    assert all(1 <= mean <= 20 for mean in means)
    assert "custom scorer" in family.card_section(result.facts)


@pytest.mark.data
@pytest.mark.wordnet
@pytest.mark.slow
def test_ic_rows_record_every_removed_turn(built):
    source = {row["id"]: row for row in built["dailydialog"]["test"]}
    longer = 0
    for name in ("ic_0of6", "ic_5of6"):
        for row in built[name]["test"]:
            original = source[row["id"]]["context"]
            assert row["truncated_turns"] + row["deleted_turns"] + row["context"] == original
            longer += bool(row["truncated_turns"])
    assert longer > 2 * 1500  # most IC instances come from contexts longer than the 6-turn window


@pytest.mark.data
@pytest.mark.slow
def test_train_overlap_is_flagged_counted_and_droppable(built, raw_data_dir):
    from dialshift_families.dailydialog.pipeline import fold

    train = {fold(dialogue) for dialogue in SOURCE.load(raw_data_dir)["train"]}
    test = {dialogue.id: fold(dialogue) in train for dialogue in SOURCE.load(raw_data_dir)["test"]}
    rows = built["dailydialog"]["test"]
    assert rows["in_train"] == [test[dialogue] for dialogue in rows["dialogue_id"]]
    assert sum(test.values()) > 80 and sum(rows["in_train"]) > 400
    assert built["uw_0.30"]["test"]["in_train"].count(True) > 0
    dropped = build(["ic_0of6"], raw_data_dir, dd_drop_train_overlap=True)
    kept = built["ic_0of6"]["test"]
    assert len(dropped.datasets["ic_0of6"]["test"]) == kept["in_train"].count(False)
    assert dropped.facts["ic_0of6"]["settings"]["drop_train_overlap"] is True


@pytest.mark.data
@pytest.mark.wordnet
@pytest.mark.slow
@pytest.mark.parametrize("name", ["dailydialog", "ic_2of6", "sr_3", "uw_0.30", "kw_0.10"])
def test_every_single_config_selection_builds(name, raw_data_dir, tmp_path, capsys):
    """Issue 9: `dialshift build --config source` crashed (WordNet not loaded for the rule comparison)."""
    from dialshift.cli import main

    assert main(["build", "--config", name, "--out", str(tmp_path / "out"), "--data-dir", str(raw_data_dir),
                 "--no-progress"]) == 0
    assert "1 config(s) built" in capsys.readouterr().out
    card = (tmp_path / "out" / "README.md").read_text()
    if name == "dailydialog":
        assert "test dialogues occur verbatim in train" in card


# --- bad input --------------------------------------------------------------------------------------------------


def test_importance_configs_need_a_model(capsys):
    family = get_family("dailydialog")
    configs = [config(name) for name in ("dailydialog", "uw_imp_1", "uw_imp_2")]

    def context(requested=None):
        return BuildContext(data_dir=Path("."), options=DailyDialogOptions(), requested=requested)

    assert family._selected(configs, context()) == configs[:1]
    assert "skipping uw_imp_1, uw_imp_2" in capsys.readouterr().out
    with pytest.raises(DialshiftError, match="--importance-model"):
        family._selected(configs, context(("dailydialog", "uw_imp_*")))
    # 'uw_*' also matches uw_0.05 ... uw_0.50: a note, not an error
    assert family._selected([config("uw_0.05"), config("uw_imp_1")], context(("uw_*",))) == [config("uw_0.05")]


@pytest.mark.data
def test_missing_split_is_a_one_line_error(raw_data_dir, tmp_path):
    for split in ("train", "validation"):
        (tmp_path / "dailydialog").mkdir(exist_ok=True)
        (tmp_path / "dailydialog" / split).symlink_to(raw_data_dir / "dailydialog" / split)
    with pytest.raises(SourceError) as error:
        build(["ic_0of6"], tmp_path)
    assert "dialogues_test.txt" in str(error.value) and "\n" not in str(error.value)


@pytest.mark.data
def test_missing_wordnet_is_a_one_line_error(raw_data_dir, tmp_path, monkeypatch):
    monkeypatch.setenv("DIALSHIFT_WORDNET_DIR", str(tmp_path / "no-wordnet"))
    monkeypatch.setenv("DIALSHIFT_CACHE_DIR", str(tmp_path / "cache"))
    with pytest.raises(DialshiftError, match="apt-get install") as error:
        build(["uw_0.10"], raw_data_dir)
    assert "\n" not in str(error.value)


def test_cli_explicit_importance_config_without_model_is_a_one_line_error(tmp_path):
    (tmp_path / "data").mkdir()
    result = subprocess.run([sys.executable, "-m", "dialshift", "build", "--family", "dailydialog", "--config",
                             "uw_imp_*", "--out", str(tmp_path / "out"), "--data-dir", str(tmp_path / "data")],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 2
    assert "--importance-model" in result.stderr and len(result.stderr.strip().splitlines()) == 1


# --- the sense-preserving UW rules (beyond the paper) -----------------------------------------------------------

def test_uw_rule_options_resolve_the_preset_and_its_overrides():
    from dialshift.shifts.replace import UW_RULES, WordRules

    assert DailyDialogOptions().word_rules() == UW_RULES["paper"]
    assert DailyDialogOptions(uw_rules="sense").word_rules() == UW_RULES["sense"]
    assert DailyDialogOptions(uw_rules="sense", uw_senses="2", uw_inflect="off").word_rules() == WordRules(
        content_words=True, senses=2, inflect=False)
    assert DailyDialogOptions(uw_content_words="on").shift_options(0).word_rules == WordRules(content_words=True)
    assert DailyDialogOptions(uw_rules="sense", uw_senses="all").word_rules().senses == 0
    for bad, message in ((dict(uw_senses="x"), "--uw-senses must be"), (dict(uw_senses="0"), "--uw-senses must be"),
                         (dict(uw_inflect="yes"), "--uw-inflect must be on or off"),
                         (dict(uw_rules="lee"), "--uw-rules 'lee' is not one of")):
        with pytest.raises(DialshiftError, match=message):
            DailyDialogOptions(**bad)


@pytest.fixture(scope="module")
def built_sense(raw_data_dir):
    pytest.importorskip("nltk")
    if not Path("/usr/share/wordnet/data.noun").is_file():
        pytest.skip("wordnet-base not installed")
    return build(["uw_0.10", "kw_0.10"], raw_data_dir, uw_rules="sense")


@pytest.mark.data
@pytest.mark.wordnet
@pytest.mark.slow
def test_sense_rules_never_replace_stop_words_or_contraction_pieces(built_sense):
    from dialshift.shifts.senses import stop_words
    from dialshift.shifts.words import CONTRACTION_PIECES

    uw, kw = built_sense.datasets["uw_0.10"]["test"], built_sense.datasets["kw_0.10"]["test"]
    replaced = [item for row in uw["replacements"] for item in row]
    assert len(uw) > 1000 and len(replaced) > 5000
    originals = {item["original"].lower() for item in replaced}
    assert not originals & stop_words() and not originals & CONTRACTION_PIECES
    assert {"did", "got", "does", "going"}.isdisjoint(originals)  # inflections of stop words
    # KW replaces the same content-word targets
    assert [[(r["turn"], r["index"], r["original"]) for r in row] for row in kw["replacements"]] == \
        [[(r["turn"], r["index"], r["original"]) for r in row] for row in uw["replacements"]]
    # re-inflection: a plural noun target gets a plural synonym (lemminflect's tag of the original)
    from lemminflect import getLemma

    from dialshift.shifts.senses import dictionary_lemmas

    plural = [item for item in replaced if list(dictionary_lemmas(item["original"].lower())) == ["n"]
              and dictionary_lemmas(item["original"].lower())["n"][0] != item["original"].lower()]
    assert len(plural) > 100
    inflected = [getLemma(item["replacement"].lower(), upos="NOUN")[0] != item["replacement"].lower()
                 for item in plural]
    assert sum(inflected) > 0.9 * len(plural)
    fact = built_sense.facts["uw_0.10"]
    assert fact["word_rules"]["preset"] == "sense" and fact["alternative_rules"]["rules"] == "paper"
    assert fact["alternative_rules"]["count"] > len(uw)


@pytest.mark.data
@pytest.mark.wordnet
@pytest.mark.slow
def test_the_card_states_the_word_rules_and_both_table_1_counts(built_sense):
    from dialshift_families.dailydialog.card import render_section

    card = render_section(built_sense.facts)
    assert "the sense-preserving rules (`--uw-rules sense`, beyond the paper)" in card
    uw = built_sense.facts["uw_0.10"]
    row = next(line for line in card.splitlines() if line.startswith("| 0.10 | 6,229 |"))
    assert f"{uw['alternative_rules']['count']:,}" in row and f"{uw['splits']['test']['rows']:,}" in row
    assert "hand-checked audit" in card and "docs/uw_audit.md" in card


def _audit_tables(text: str) -> dict[str, list[tuple[str, str, str, str]]]:
    """The items of docs/uw_audit.md per section: (id, turn:index, original -> replacement, verdict)."""
    tables, current = {}, None
    for line in text.splitlines():
        if line.startswith("## "):
            current = tables.setdefault(line[3:].split(":")[0], [])
        elif current is not None and line.startswith("| ") and line.split("|")[1].strip().isdigit():
            cells = [cell.strip() for cell in line.split("|")[1:-1]]
            current.append((cells[1], cells[2], cells[3].strip("`"), cells[-2]))
    return tables


@pytest.mark.data
@pytest.mark.wordnet
@pytest.mark.slow
def test_uw_audit_samples_are_the_documented_ones(raw_data_dir):
    """docs/uw_audit.md lists exactly what sample_replacements draws from a fresh build, and the card's audit numbers
    are the doc's verdict counts."""
    from dialshift_families.dailydialog.card import UW_AUDIT, UW_AUDIT_SEED, UW_AUDIT_SIZE

    from dialshift.shifts.lexical import sample_replacements

    if not Path("/usr/share/wordnet/data.noun").is_file():
        pytest.skip("wordnet-base not installed")
    tables = _audit_tables((Path(__file__).parents[1] / "docs" / "uw_audit.md").read_text(encoding="utf-8"))
    titles = {("paper", "uw_0.30"): "Paper's rules, `uw_0.30`",
              ("sense", "uw_0.30"): "Sense-preserving rules, `uw_0.30`",
              ("sense", "uw_0.10"): "Sense-preserving rules, `uw_0.10` (supplementary)"}
    assert set(titles) == set(UW_AUDIT)
    for (rules, name), title in titles.items():
        rows = build([name], raw_data_dir, uw_rules=rules).datasets[name]["test"]
        drawn = [(item["id"], f"{item['turn']}:{item['index']}", f"{item['original']} -> {item['replacement']}")
                 for item in sample_replacements(rows, UW_AUDIT_SIZE, UW_AUDIT_SEED)]
        assert [item[:3] for item in tables[title]] == drawn, title
        assert sum(item[3] == "yes" for item in tables[title]) == UW_AUDIT[(rules, name)], title


@pytest.mark.data
@pytest.mark.wordnet
@pytest.mark.slow
def test_rows_regenerate_from_their_shift_column(built, raw_data_dir):
    """A seeded sample of rows of every shifted config, rebuilt from the row's ``shift`` column alone (with the
    training vocabulary's synonym table) through the public Shift API, from the unshifted row of the same id."""
    import random

    from dialshift.shifts import InstanceRandom, shift_from_description
    from dialshift.shifts.replace import SynonymTable
    from dialshift.shifts.words import Vocabulary
    from dialshift.wordnet import load_wordnet

    train = [turn for dialogue in SOURCE.load(raw_data_dir)["train"] for turn in dialogue.turns]
    synonyms = SynonymTable(load_wordnet(), Vocabulary.from_texts(train))
    unshifted = {row["id"]: row for row in built["dailydialog"]["test"]}
    assert all(row["shift"] is None for row in unshifted.values())
    for name in CONFIGS[1:]:
        rows = built[name]["test"]
        for index in random.Random(name).sample(range(len(rows)), 20):
            row = rows[index]
            description = row["shift"]
            resources = {"synonyms": synonyms} if description["name"] in ("uw", "kw") else {}
            shift = shift_from_description(description, **resources)
            again = shift.apply(unshifted[row["id"]]["context"], InstanceRandom(description["seed"], row["id"]))
            assert list(again.context) == row["context"], (name, row["id"])
            assert [dict(item._asdict()) for item in again.replacements] == row["replacements"]


@pytest.mark.data
@pytest.mark.wordnet
@pytest.mark.slow
def test_readme_path_reproduces_published_uw(built):
    """The README's path (vocabulary from the training contexts and gold responses, shift_dataset, seed 0) on the
    dailydialog config gives the published uw_0.30 rows exactly."""
    from dialshift.custom import training_texts
    from dialshift.shifts import UnknownWord, shift_dataset

    unknown = UnknownWord.for_corpus(training_texts(built["dailydialog"]["train"]), ratio=0.3)
    shifted = shift_dataset(built["dailydialog"]["test"], unknown, seed=0)
    published = built["uw_0.30"]["test"]
    assert shifted["id"] == published["id"]
    assert shifted["context"] == published["context"] and shifted["replacements"] == published["replacements"]
    assert shifted["shift"] == published["shift"]
