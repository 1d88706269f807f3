"""The Korean family (KorAdvMRS, Han et al. 2021): rows on hand-made records, and the build on the real corpora
(marked ``data``; the whole family builds in about 2 s)."""

import shutil

import pytest
from dialshift_families.korean import KoreanFamily, KoreanOptions, declared_configs
from dialshift_families.korean.pipeline import (
    TYPES,
    Dialogue,
    adversarial_rows,
    assign_splits,
    check_adversarial_files,
    chitchat_rows,
)

from dialshift.errors import DialshiftError
from dialshift.registry import BuildContext, get_family
from dialshift.sources.koradvmrs import AdversarialCase

# --- rows on hand-made records ----------------------------------------------------------------------------------


def case(index: int, kind: str = "negation", label: int = 0) -> AdversarialCase:
    candidates = ("좋아, 같이 가자.", "안 좋아, 같이 가자.")
    return AdversarialCase(id=f"koradvmrs-{kind}-{index:05d}", type=kind, context=("주말에 등산 갈래?",),
                           candidates=candidates if label == 0 else candidates[::-1], label=label, did=f"d{index}",
                           src_dlg_id=f"s{index // 2}")


def test_adversarial_rows_keep_the_pair_and_draw_the_order_per_case():
    cases = [case(i, label=i % 2) for i in range(200)]
    rows = adversarial_rows(cases, seed=0)
    for row in rows:
        assert row["candidates"][row["label"]] == "좋아, 같이 가자."
        assert row["candidates"][1 - row["label"]] == row["adversarial"] == "안 좋아, 같이 가자."
    first = sum(row["label"] == 0 for row in rows)
    assert 70 < first < 130  # about half the cases keep the correct response first
    alone = adversarial_rows(cases[57:58], seed=0)  # an instance does not depend on the others
    assert alone[0] == rows[57]
    assert adversarial_rows(cases, seed=1) != rows


def test_unknown_type_and_bad_pair_are_one_line_errors(tmp_path):
    with pytest.raises(DialshiftError, match="unknown adversarial type 'sarcasm'"):
        adversarial_rows([case(0, kind="sarcasm")], seed=0)
    folder = tmp_path / "koradvmrs/dataset"
    folder.mkdir(parents=True)
    (folder / "negation.jsonl").write_text("")
    (folder / "irony.jsonl").write_text("")
    with pytest.raises(DialshiftError, match=r"irony.jsonl: unknown adversarial type 'irony'.*rename or remove"):
        check_adversarial_files(tmp_path, "koradvmrs/dataset")


def dialogues(count: int, turns: int = 4) -> list[Dialogue]:
    return [Dialogue(f"dlg-{n:03d}", "xpersona_ko", tuple(f"발화 {n}-{t}" for t in range(turns)))
            for n in range(count)]


def test_chitchat_splits_are_by_dialogue_and_candidates_one_to_one_or_one_to_nine():
    splits = assign_splits(dialogues(300), seed=0, fractions=(0.1, 0.1))
    ids = [{d.id for d in members} for members in splits.values()]
    assert sum(map(len, ids)) == 300 and not (ids[0] & ids[1] or ids[0] & ids[2] or ids[1] & ids[2])
    assert 10 < len(splits["test"]) < 55 and 10 < len(splits["validation"]) < 55
    train = chitchat_rows(splits["train"], "train", seed=0)
    test = chitchat_rows(splits["test"], "test", seed=0)
    assert {len(row["candidates"]) for row in train} == {2} and {len(row["candidates"]) for row in test} == {10}
    assert len(test) == 3 * len(splits["test"])  # every utterance after the first
    for row in test:
        owner = row["dialogue_id"]
        gold = row["candidates"][row["label"]]
        assert gold.startswith(f"발화 {int(owner[4:])}-") and row["context_turns"] == len(row["context"])
        negatives = [text for i, text in enumerate(row["candidates"]) if i != row["label"]]
        assert len(set(negatives)) == 9 and not any(text.startswith(f"발화 {int(owner[4:])}-") for text in negatives)


def test_bad_split_shares_are_one_line_errors():
    with pytest.raises(DialshiftError, match="--kor-split"):
        KoreanOptions(kor_split="0.5").fractions()
    with pytest.raises(DialshiftError, match="sum to less than 1"):
        assign_splits(dialogues(10), seed=0, fractions=(0.6, 0.5))


def test_configs_are_typed_and_registered():
    names = [config.name for config in declared_configs()]
    assert names == ["kor_adv", *(f"kor_adv_{kind}" for kind in TYPES), "kor_chitchat"]
    assert isinstance(get_family("korean"), KoreanFamily)
    assert get_family("korean").config("kor_adv_tense").task == "pairwise_selection"
    assert get_family("korean").config("kor_chitchat").splits == ("train", "validation", "test")


# --- the real corpora -------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def built(raw_data_dir, tmp_path_factory):
    from dialshift.cli import main

    out = tmp_path_factory.mktemp("korean") / "ds"
    assert main(["build", "--family", "korean", "--out", str(out), "--no-progress",
                 "--data-dir", str(raw_data_dir)]) == 0
    return out


@pytest.mark.data
def test_real_build_counts_validate_and_load(built):
    from datasets import load_dataset

    from dialshift.cli import main

    assert main(["validate", str(built)]) == 0
    whole = load_dataset(str(built), "kor_adv", split="test")
    assert len(whole) == 2_220
    for kind, count in TYPES.items():
        part = load_dataset(str(built), f"kor_adv_{kind}", split="test")
        assert len(part) == count == sum(t == kind for t in whole["type"])
    chitchat = load_dataset(str(built), "kor_chitchat")
    assert {len(c) for c in chitchat["train"]["candidates"]} == {2}
    assert {len(c) for c in chitchat["test"]["candidates"]} == {10}
    card = (built / "README.md").read_text(encoding="utf-8")
    assert "| kor_adv_negation | 454 | 454 |" in card and "of the paper's 500K pairs" in card


@pytest.mark.data
def test_real_rebuild_is_byte_identical(built, raw_data_dir, tmp_path):
    from dialshift.cli import main

    again = tmp_path / "again"
    assert main(["build", "--family", "korean", "--out", str(again), "--no-progress",
                 "--data-dir", str(raw_data_dir)]) == 0
    for path in sorted(built.rglob("*.parquet")):
        assert (again / path.relative_to(built)).read_bytes() == path.read_bytes(), path


@pytest.mark.data
@pytest.mark.parametrize("problem", ["malformed", "unknown_type"])
def test_bad_raw_files_are_one_line_errors(raw_data_dir, tmp_path, problem):
    data = tmp_path / "data"
    shutil.copytree(raw_data_dir / "koradvmrs", data / "koradvmrs")
    folder = data / "koradvmrs/dataset"
    if problem == "malformed":
        lines = (folder / "tense.jsonl").read_text(encoding="utf-8").splitlines()
        lines[4] = lines[4].replace('"label": 1', '"label": "yes"')
        (folder / "tense.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
        expected = r"tense.jsonl:5: .*label"
    else:
        shutil.copy(folder / "tense.jsonl", folder / "sarcasm.jsonl")
        expected = "sarcasm.jsonl: unknown adversarial type 'sarcasm'"
    family = get_family("korean")
    with pytest.raises(DialshiftError, match=expected) as error:
        family.build([family.config("kor_adv")], BuildContext(data_dir=data, options=KoreanOptions()))
    assert "\n" not in str(error.value)
