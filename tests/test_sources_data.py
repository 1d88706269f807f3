"""Every source reader on the real corpora in ../shared/data: official counts, ids and the `dialshift sources` table.

Skipped when the raw data directory cannot be found (``--data-dir`` / ``$DIALSHIFT_DATA_DIR`` / ``../shared/data``).
"""

import pytest

from dialshift.cli import main
from dialshift.data_dir import resolve_data_dir
from dialshift.errors import DialshiftError
from dialshift.sources import sources

pytestmark = pytest.mark.data


@pytest.fixture(scope="module")
def data_dir():
    try:
        return resolve_data_dir()
    except DialshiftError:
        pytest.skip("raw data directory not found")


@pytest.fixture(scope="module")
def loaded(data_dir):
    """Every registered source, loaded once (``load`` also checks the official counts)."""
    return {name: info.load(data_dir) for name, info in sources().items()}


def test_every_source_reproduces_its_official_counts(loaded):
    for name, info in sources().items():
        assert info.counts(loaded[name]) == {**info.counts(loaded[name]), **info.expected}, name
        assert not info.count_mismatches(loaded[name]), name


@pytest.mark.parametrize("name, counts", [
    ("clinc150_full", {"train": 15_000, "validation": 3_000, "test": 4_500, "oos_train": 100, "oos_validation": 100,
                       "oos_test": 1_000, "intents": 150}),
    ("hwu64", {"train": 8_954, "validation": 1_076, "test": 1_076, "train_5shot": 320, "train_10shot": 640}),
    ("snips", {"train": 13_084, "validation": 700, "test": 700, "intents": 7}),
    ("banking77", {"train": 10_003, "test": 3_080, "intents": 77}),
    ("banking77_dnnc", {"train": 8_622, "validation": 1_540, "test": 3_080}),
    ("massive_en_us", {"train": 11_514, "validation": 2_033, "test": 2_974, "intents": 60}),
    ("rostd", {"train_id": 30_521, "validation_id": 4_181, "validation_ood": 1_500, "test_id": 8_621,
               "test_ood": 3_090}),
    ("rostd_ood", {"ood": 4_590}),
    ("koradvmrs", {"test": 2_220, "negation": 454}),
    ("xpersona_ko", {"validation": 299, "test": 300}),
    ("chatbotdata", {"train": 11_823}),
    ("ubuntu_irc", {"train": 4_284, "validation": 175, "test": 293}),
])
def test_brief_counts(loaded, name, counts):
    found = sources()[name].counts(loaded[name])
    assert {key: found[key] for key in counts} == counts


def test_ids_are_unique_and_reproducible(loaded, data_dir):
    for name, splits in loaded.items():
        ids = [record.id for records in splits.values() for record in records]
        assert len(ids) == len(set(ids)), name
    assert sources()["snips"].read(data_dir) == loaded["snips"]


def test_record_details(loaded):
    clinc = loaded["clinc150_full"]
    assert all(r.is_ood and r.label == "oos" for r in clinc["oos_test"])
    assert {r.coarse_label for r in clinc["train"]} >= {"banking", "travel"} and len(
        {r.coarse_label for r in clinc["train"]}) == 10
    rostd = loaded["rostd"]["test"]
    assert {r.label for r in rostd if r.coarse_label == "alarm"} >= {"alarm/set_alarm"}
    assert all(r.is_ood == (r.label == "outOfDomain") for r in rostd)
    case = loaded["koradvmrs"]["test"][0]
    assert case.type == "repetition" and len(case.candidates) == 2 and "우산" in case.context[0]
    held_out = loaded["banking77_oos"]["id_oos_train"]
    assert all(r.label == "oos" and r.original_label for r in held_out)
    assert len({r.original_label for split in ("id_oos_train", "id_oos_validation", "id_oos_test")
                for r in loaded["banking77_oos"][split]}) == 27


def test_ubuntu_conversations(loaded):
    conversations = loaded["ubuntu_irc"]["validation"]
    first = conversations[0]
    assert first.id == "ubuntu-irc-validation-2004-11-15_03-1002"
    assert first.messages[1].speaker == "Hikaru79" and first.messages[1].addressee == "yohannes"
    assert first.messages[1].reply_to == (1002,)
    for conversation in conversations:
        ids = [m.id for m in conversation.messages]
        assert ids == sorted(ids) and conversation.annotated_messages >= 3
        assert all(parent in ids for m in conversation.messages for parent in m.reply_to)
    order = [(c.log, c.messages[0].id) for c in loaded["ubuntu_irc"]["train"]]
    assert order == sorted(order)
    short = sum(len(c.messages) < 3 for split in loaded["ubuntu_irc"].values() for c in split)
    assert short == 8  # 7 train + 1 test clusters reach 3 only with their system lines (see the module docstring)


def test_sources_table_on_real_data(data_dir, capsys):
    assert main(["sources", "--data-dir", str(data_dir)]) == 0
    out = capsys.readouterr().out
    table = out.split("\n\nnotes:")[0].splitlines()
    start, end = table[1].index("records per split"), table[1].index("status")
    rows, counts, name = {}, {}, None
    for line in table[3:]:  # the rows after the header; wrapped counts continue on indented lines
        if not line.startswith(" "):
            name = line.split()[0]
            rows[name], counts[name] = line, ""
        counts[name] += " " + line[start:end].strip()
    assert "train 15,000, validation 3,000, test 4,500, oos_train 100," in counts["clinc150_full"]
    assert "test 2,220, repetition 400" in counts["koradvmrs"]
    assert "train 4,284, validation 175, test 293" in counts["ubuntu_irc"]
    for name in sources():
        assert rows[name].endswith("ok"), rows[name]
    assert f"all {len(sources())} sources ok" in out
