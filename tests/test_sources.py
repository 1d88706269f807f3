"""Source readers on tiny fixtures written in each corpus's real format, their bad-input errors, and the
``dialshift sources`` command. Tests on the real corpora are in ``test_sources_data.py``."""

import json
from pathlib import Path

import pytest

from dialshift.cli import main
from dialshift.errors import SourceError
from dialshift.sources import (
    banking77,
    chatbotdata,
    clinc150,
    hwu64,
    koradvmrs,
    massive,
    rostd,
    snips,
    sources,
    ubuntu_irc,
    xpersona_ko,
)
from dialshift.sources.base import read_csv, read_json, read_jsonl, read_lines, read_parallel, read_tsv


def write(root: Path, relative: str, text: str | bytes) -> Path:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def lines(*items: str) -> str:
    return "".join(item + "\n" for item in items)


def write_seq_label(root: Path, folder: str, pairs, extra: dict | None = None) -> None:
    write(root, f"{folder}/seq.in", lines(*(text for text, _ in pairs)))
    write(root, f"{folder}/label", lines(*(label for _, label in pairs)))
    for name, values in (extra or {}).items():
        write(root, f"{folder}/{name}", lines(*values))


# ---------------------------------------------------------------- generic format readers


def test_read_lines_names_undecodable_line(tmp_path):
    path = write(tmp_path, "f.txt", b"ok\n\xff\xfe bad\n")
    with pytest.raises(SourceError, match=r"f\.txt:2: not valid utf-8"):
        list(read_lines(path))


def test_missing_file_is_named(tmp_path):
    with pytest.raises(SourceError, match=r"nothere\.txt: file not found"):
        list(read_lines(tmp_path / "nothere.txt"))


def test_read_parallel_names_both_files_and_first_missing_line(tmp_path):
    first = write(tmp_path, "seq.in", lines("a", "b", "c"))
    second = write(tmp_path, "label", lines("x", "y"))
    with pytest.raises(SourceError) as caught:
        list(read_parallel([first, second]))
    assert caught.value.path == second and caught.value.line == 3
    assert str(first) in str(caught.value)


def test_read_tsv_counts_fields(tmp_path):
    path = write(tmp_path, "f.tsv", lines("a\tb\tc\td", "a\tb\tc"))
    with pytest.raises(SourceError, match=r"f\.tsv:2: expected 4 tab-separated fields, found 3"):
        list(read_tsv(path, 4))


def test_read_csv_quoted_newlines_and_line_numbers(tmp_path):
    path = write(tmp_path, "f.csv", 'text,category\n"two\nlines",a\nplain,b\n')
    assert list(read_csv(path, ("text", "category"))) == [(2, {"text": "two\nlines", "category": "a"}),
                                                         (4, {"text": "plain", "category": "b"})]


@pytest.mark.parametrize("body, message", [
    ('text,category\n"unterminated,a\n', "malformed CSV"),
    ("text,category\na,b,c\n", "expected 2 comma-separated fields, found 3"),
    ("txt,category\na,b\n", "expected the header"),
])
def test_read_csv_bad_rows(tmp_path, body, message):
    path = write(tmp_path, "f.csv", body)
    with pytest.raises(SourceError, match=message):
        list(read_csv(path, ("text", "category")))


def test_read_json_names_the_line_of_a_syntax_error(tmp_path):
    path = write(tmp_path, "f.json", '{\n  "a": [1,\n  2,\n')
    with pytest.raises(SourceError, match=r"f\.json:4: invalid JSON"):
        read_json(path)


def test_read_json_names_the_line_of_bad_bytes(tmp_path):
    path = write(tmp_path, "f.json", b'{\n"a":\n"\xff"}\n')
    with pytest.raises(SourceError, match=r"f\.json:3: not valid utf-8"):
        read_json(path)


def test_read_jsonl_truncated_and_empty_lines(tmp_path):
    path = write(tmp_path, "f.jsonl", '{"a": 1}\n{"a": \n')
    with pytest.raises(SourceError, match=r"f\.jsonl:2: invalid JSON"):
        list(read_jsonl(path))
    path = write(tmp_path, "g.jsonl", '{"a": 1}\n\n{"a": 2}\n')
    with pytest.raises(SourceError, match=r"g\.jsonl:2: empty line"):
        list(read_jsonl(path))


# ---------------------------------------------------------------- CLINC150


def clinc_fixture(root: Path, train_intent: str = "transfer") -> None:
    write(root, "clinc150/domains.json", json.dumps({"banking": ["transfer", "balance"], "travel": ["translate"]}))
    data = {"train": [["send money", train_intent], ["how do i say hi in french", "translate"]],
            "val": [["my balance", "balance"]], "test": [["move $5", "transfer"]],
            "oos_train": [["what is a cat", "oos"]], "oos_val": [], "oos_test": [["sing", "oos"]]}
    write(root, "clinc150/data_full.json", json.dumps(data, indent=4))


def test_clinc150_fixture(tmp_path):
    clinc_fixture(tmp_path)
    loaded = clinc150.read_variant(tmp_path, "full")
    assert list(loaded) == ["train", "validation", "test", "oos_train", "oos_validation", "oos_test"]
    first, second = loaded["train"]
    assert (first.id, first.text, first.label, first.coarse_label, first.is_ood) == (
        "clinc150-full-train-00000", "send money", "transfer", "banking", False)
    assert second.id == "clinc150-full-train-00001" and second.coarse_label == "travel"
    oos = loaded["oos_test"][0]
    assert (oos.id, oos.label, oos.is_ood, oos.coarse_label) == ("clinc150-full-oos_test-00000", "oos", True, None)
    assert sources()["clinc150_full"].counts(loaded)["intents"] == 3


def test_clinc150_unknown_intent_and_missing_variant(tmp_path):
    clinc_fixture(tmp_path, train_intent="teleport")
    with pytest.raises(SourceError, match=r"data_full\.json: train\[0\]: intent 'teleport' is not listed"):
        clinc150.read_variant(tmp_path, "full")
    with pytest.raises(SourceError, match=r"data_small\.json: file not found"):
        sources()["clinc150_small"].read(tmp_path)


def test_count_check_names_the_corpus_and_split(tmp_path):
    clinc_fixture(tmp_path)
    with pytest.raises(SourceError, match=r"data_full\.json: train utterances: found 2, the official statistics "
                                          r"say 15,000"):
        sources()["clinc150_full"].load(tmp_path)


# ---------------------------------------------------------------- jianguoz / DNNC format: HWU64, SNIPS, BANKING77


def hwu_fixture(root: Path) -> None:
    for folder in ("train", "valid", "test", "train_5", "train_10"):
        write_seq_label(root, f"hwu64/{folder}", [("wake me up at 7", "alarm_set"),
                                                  ("turn the lights off", "iot_hue_lightoff")])


def test_hwu64_fixture(tmp_path):
    hwu_fixture(tmp_path)
    loaded = hwu64.read(tmp_path)
    assert list(loaded) == ["train", "validation", "test", "train_5shot", "train_10shot"]
    record = loaded["validation"][1]
    assert (record.id, record.text, record.label, record.coarse_label) == (
        "hwu64-validation-00001", "turn the lights off", "iot_hue_lightoff", "iot")


def test_hwu64_truncated_label_file(tmp_path):
    hwu_fixture(tmp_path)
    write(tmp_path, "hwu64/test/label", lines("alarm_set"))
    with pytest.raises(SourceError) as caught:
        hwu64.read(tmp_path)
    assert caught.value.line == 2 and str(caught.value.path).endswith("test/label")
    assert "test/seq.in" in str(caught.value)


def snips_fixture(root: Path, tags: str = "O B-artist") -> None:
    for folder in ("train", "valid", "test"):
        write(root, f"snips/{folder}/seq.in", lines("play westbam "))
        write(root, f"snips/{folder}/seq.out", lines(tags + " "))
        write(root, f"snips/{folder}/label", lines("PlayMusic"))


def test_snips_fixture(tmp_path):
    snips_fixture(tmp_path)
    record = snips.read(tmp_path)["test"][0]
    assert (record.id, record.text, record.label) == ("snips-test-00000", "play westbam", "PlayMusic")
    assert record.tokens == ("play", "westbam") and record.tags == ("O", "B-artist")


def test_snips_tag_count_mismatch(tmp_path):
    snips_fixture(tmp_path, tags="O")
    with pytest.raises(SourceError, match=r"seq\.out:1: 1 slot tags for the 2 tokens"):
        snips.read(tmp_path)


def banking_original_fixture(root: Path, category: str = "card_arrival") -> None:
    write(root, "banking77/polyai_original/categories.json", json.dumps(["card_arrival", "top_up_failed"]))
    write(root, "banking77/polyai_original/train.csv",
          f'text,category\n"Where is my card,\nit is late",{category}\nTop up failed?,top_up_failed\n')
    write(root, "banking77/polyai_original/test.csv", "text,category\nHow do I locate my card?,card_arrival\n")


def test_banking77_original_fixture(tmp_path):
    banking_original_fixture(tmp_path)
    loaded = banking77.read_original(tmp_path)
    assert [r.id for r in loaded["train"]] == ["banking77-train-00000", "banking77-train-00001"]
    assert loaded["train"][0].text == "Where is my card,\nit is late"
    assert loaded["test"][0].label == "card_arrival"


def test_banking77_unknown_category_names_the_row_line(tmp_path):
    banking_original_fixture(tmp_path, category="card_lost")
    with pytest.raises(SourceError, match=r"train\.csv:2: category 'card_lost' is not in categories\.json"):
        banking77.read_original(tmp_path)


def test_banking77_dnnc_and_oos_fixture(tmp_path):
    base = "banking77/jianguoz_BANKING77"
    for folder in ("train", "valid", "test", "train_5", "train_10"):
        write_seq_label(tmp_path, f"{base}/{folder}", [("where is my card", "card_arrival")])
    assert banking77.read_dnnc(tmp_path)["train_5shot"][0].id == "banking77-dnnc-train_5shot-00000"

    base = "banking77/jianguoz_BANKING77-OOS"
    for folder in ("train", "valid", "test"):
        write_seq_label(tmp_path, f"{base}/{folder}", [("where is my card", "card_arrival")])
        write_seq_label(tmp_path, f"{base}/id-oos/{folder}", [("exchange rates?", "oos")],
                        extra={"label_original": ["exchange_rate"]})
    for folder in ("valid", "test"):
        write_seq_label(tmp_path, f"{base}/ood-oos/{folder}", [("how tall is everest", "oos")])
    loaded = banking77.read_oos(tmp_path)
    assert sorted(loaded) == sorted(["train", "validation", "test", "id_oos_train", "id_oos_validation",
                                     "id_oos_test", "ood_oos_validation", "ood_oos_test"])
    held_out = loaded["id_oos_validation"][0]
    assert (held_out.id, held_out.label, held_out.is_ood, held_out.original_label) == (
        "banking77-oos-id_oos_validation-00000", "oos", True, "exchange_rate")
    assert not loaded["train"][0].is_ood and loaded["ood_oos_test"][0].is_ood

    write_seq_label(tmp_path, f"{base}/train", [("what is a cat", "oos")])
    with pytest.raises(SourceError, match="in-scope splits must not contain 'oos'"):
        banking77.read_oos(tmp_path)


# ---------------------------------------------------------------- ROSTD


def rostd_fixture(root: Path, coarse_text: str = "Set an alarm") -> None:
    fine = lines("alarm/set_alarm\t \tSet an alarm\tE", "outOfDomain\tFILLER\tsing me a song\tFILLER")
    coarse = lines(f"alarm\t \t{coarse_text}\tE", "outOfDomain\tFILLER\tsing me a song\tFILLER")
    for name in ("OODRemovedtrain", "eval", "test"):
        write(root, f"rostd/code/data/fbrelease/unsup/{name}.tsv", fine)
        write(root, f"rostd/code/data/fbreleasecoarse/unsup/{name}.tsv", coarse)
    write(root, "rostd/data/fbrelease/OODrelease.tsv", lines("outOfDomain\tFILLER\tsing me a song\tFILLER"))


def test_rostd_fixture(tmp_path):
    rostd_fixture(tmp_path)
    loaded = rostd.read(tmp_path)
    alarm, ood = loaded["validation"]
    assert (alarm.id, alarm.text, alarm.label, alarm.coarse_label, alarm.is_ood) == (
        "rostd-validation-00000", "Set an alarm", "alarm/set_alarm", "alarm", False)
    assert (ood.label, ood.coarse_label, ood.is_ood) == ("outOfDomain", "outOfDomain", True)
    assert rostd.count(loaded)["test_ood"] == 1 and rostd.count(loaded)["intents"] == 1
    release = rostd.read_release(tmp_path)["ood"][0]
    assert (release.id, release.text, release.is_ood) == ("rostd-ood-00000", "sing me a song", True)


def test_rostd_bad_lines(tmp_path):
    rostd_fixture(tmp_path, coarse_text="Set the alarm")
    with pytest.raises(SourceError, match=r"fbreleasecoarse/unsup/OODRemovedtrain\.tsv:1: sentence differs"):
        rostd.read(tmp_path)
    write(tmp_path, "rostd/data/fbrelease/OODrelease.tsv", lines("outOfDomain\tFILLER\ttruncated"))
    with pytest.raises(SourceError, match=r"OODrelease\.tsv:1: expected 4 tab-separated fields, found 3"):
        rostd.read_release(tmp_path)


# ---------------------------------------------------------------- MASSIVE


def massive_fixture(root: Path, second_label_text: str = "weather_query") -> None:
    rows = [{"id": "1", "label": 48, "text": "wake me up at nine", "label_text": "alarm_set"},
            {"id": "7", "label": 3, "text": "is it cold", "label_text": second_label_text}]
    for split in ("train", "validation", "test"):
        write(root, f"massive/setfit_en-US/{split}.jsonl", lines(*(json.dumps(row) for row in rows)))


def test_massive_fixture(tmp_path):
    massive_fixture(tmp_path)
    record = massive.read(tmp_path)["test"][1]
    assert (record.id, record.text, record.label, record.coarse_label, record.source_id) == (
        "massive-test-00001", "is it cold", "weather_query", "weather", "7")


def test_massive_bad_records(tmp_path):
    massive_fixture(tmp_path)
    write(tmp_path, "massive/setfit_en-US/validation.jsonl", '{"id": "1", "label": 48, "text": "x"}\n')
    with pytest.raises(SourceError, match=r"validation\.jsonl:1: missing field 'label_text'"):
        massive.read(tmp_path)
    write(tmp_path, "massive/setfit_en-US/validation.jsonl",
          '{"id": "1", "label": 48, "text": "x", "label_text": "alarm_set"}\n{"id": "2", "lab\n')
    with pytest.raises(SourceError, match=r"validation\.jsonl:2: invalid JSON"):
        massive.read(tmp_path)
    massive_fixture(tmp_path)
    write(tmp_path, "massive/setfit_en-US/test.jsonl", '{"id": "9", "label": 48, "text": "x", "label_text": "x_y"}\n')
    with pytest.raises(SourceError, match=r"test\.jsonl:1: label 48 is 'x_y' here but 'alarm_set' earlier"):
        massive.read(tmp_path)


# ---------------------------------------------------------------- KorAdvMRS, XPersona-ko, ChatbotData


def koradv_case(positive_first: bool = True, labels=(1, 0)) -> str:
    candidates = [{"text": "고생많았네.", "label": labels[0]}, {"text": "회사 안 갔어?", "label": labels[1]}]
    return json.dumps({"context": ["아 너무 힘들다.", "회사 갔다가 이제 집 왔어요."],
                       "candidates": candidates if positive_first else candidates[::-1],
                       "src_dlg_id": "d1", "did": "neg1"}, ensure_ascii=False)


def test_koradvmrs_fixture(tmp_path):
    for kind in koradvmrs.TYPES:
        write(tmp_path, f"koradvmrs/dataset/{kind}.jsonl", lines(koradv_case(), koradv_case(positive_first=False)))
    loaded = koradvmrs.read(tmp_path)
    cases = loaded["test"]
    assert len(cases) == 14 and [case.type for case in cases[:3]] == ["repetition", "repetition", "negation"]
    case = cases[3]
    assert case.id == "koradvmrs-negation-00001" and case.context[0] == "아 너무 힘들다."
    assert case.candidates[case.label] == "고생많았네." and case.label == 1
    assert (case.did, case.src_dlg_id) == ("neg1", "d1")
    assert koradvmrs.count(loaded) == {"test": 14, **dict.fromkeys(koradvmrs.TYPES, 2)}


def test_koradvmrs_bad_labels_and_missing_type(tmp_path):
    for kind in koradvmrs.TYPES:
        write(tmp_path, f"koradvmrs/dataset/{kind}.jsonl", lines(koradv_case()))
    write(tmp_path, "koradvmrs/dataset/tense.jsonl", lines(koradv_case(), koradv_case(labels=(1, 1))))
    with pytest.raises(SourceError, match=r"tense\.jsonl:2: expected one candidate with label 1"):
        koradvmrs.read(tmp_path)
    (tmp_path / "koradvmrs/dataset/tense.jsonl").unlink()
    with pytest.raises(SourceError, match=r"tense\.jsonl: file not found"):
        koradvmrs.read(tmp_path)


def xpersona_fixture(root: Path, pair=("안녕! 오늘 밤 어떻게 지내니?", "나는 아주 잘 지내고 있어.")) -> None:
    dialogue = [{"persona": ["나는 두 마리의 개를 가지고 있어."], "dialogue": [list(pair), ["좋아.", "고마워."]]}]
    for name in xpersona_ko.FILES.values():
        write(root, f"korean_chitchat/xpersona_ko/{name}", json.dumps(dialogue, ensure_ascii=False))


def test_xpersona_ko_fixture(tmp_path):
    xpersona_fixture(tmp_path)
    loaded = xpersona_ko.read(tmp_path)
    dialogue = loaded["validation"][0]
    assert dialogue.id == "xpersona-ko-validation-00000"
    assert dialogue.persona == ("나는 두 마리의 개를 가지고 있어.",)
    assert dialogue.utterances == ("안녕! 오늘 밤 어떻게 지내니?", "나는 아주 잘 지내고 있어.", "좋아.", "고마워.")
    assert xpersona_ko.count(loaded)["test_pairs"] == 2


def test_xpersona_ko_bad_turn(tmp_path):
    xpersona_fixture(tmp_path, pair=("하나", "둘", "셋"))
    with pytest.raises(SourceError, match=r"dialogue 0: turn 0 should have 2 items, found 3"):
        xpersona_ko.read(tmp_path)


def test_chatbotdata_fixture_and_bad_label(tmp_path):
    write(tmp_path, chatbotdata.PATH, "Q,A,label\n12시 땡!,하루가 또 가네요.,0\n\"쉼표, 있는 질문\",답,2   \n")
    pairs = chatbotdata.read(tmp_path)["train"]
    assert [(p.id, p.question, p.answer, p.label) for p in pairs] == [
        ("chatbotdata-train-00000", "12시 땡!", "하루가 또 가네요.", 0),
        ("chatbotdata-train-00001", "쉼표, 있는 질문", "답", 2)]
    write(tmp_path, chatbotdata.PATH, "Q,A,label\n질문,답,0\n질문,답,7\n")
    with pytest.raises(SourceError, match=r"ChatbotData\.csv:3: label '7' is not one of 0, 1, 2"):
        chatbotdata.read(tmp_path)


# ---------------------------------------------------------------- Ubuntu IRC

RAW = [
    "=== alice [~a@host] has joined #ubuntu",   # 0 system
    "[03:10] <alice> can anyone open *.rar files?",  # 1
    "[03:10] <Bob> alice, try unrar",  # 2
    "[03:11]  * alice installs unrar",  # 3
    "=== carol is now known as Carol_",  # 4 system
    "[03:12] <alice> bob: thanks, works",  # 5
    "[03:12] <dave> hello",  # 6
    "[03:13] -spam:#ubuntu- buy things",  # 7
]


def ubuntu_fixture(root: Path, clusters: str = "day:4 7\nday:1 2 3 5 0\nday:6\n") -> None:
    for folder in ("train", "dev", "test"):
        write(root, f"ubuntu_irc/{folder}/day.{folder}-a.raw.txt", lines(*RAW))
        write(root, f"ubuntu_irc/{folder}/day.{folder}-a.annotation.txt",
              lines("0 0 -", "1 1 -", "1 2 -", "2 3 -", "0 5 -", "3 5 -", "6 6 -", "4 4 -", "7 7 -"))
        write(root, f"ubuntu_irc/gold.{folder}.clusters.txt", clusters)


def test_ubuntu_irc_fixture(tmp_path):
    ubuntu_fixture(tmp_path)
    loaded = ubuntu_irc.read(tmp_path)
    assert list(loaded) == ["train", "validation", "test"]
    conversations = loaded["validation"]
    assert [c.id for c in conversations] == ["ubuntu-irc-validation-day-0001"]  # the other clusters are too small
    conversation = conversations[0]
    assert (conversation.log, conversation.date, conversation.annotated_messages) == ("day.dev-a", "day", 5)
    first, second, action, thanks = conversation.messages
    assert (first.id, first.time, first.speaker, first.addressee, first.reply_to) == (
        1, "03:10", "alice", None, ())
    assert (second.speaker, second.addressee, second.text, second.reply_to) == ("Bob", "alice", "alice, try unrar",
                                                                                (1,))
    assert (action.kind, action.speaker, action.text, action.reply_to) == ("action", "alice", "installs unrar", (2,))
    assert (thanks.addressee, thanks.reply_to) == ("Bob", (3,))  # the link to system line 0 is dropped

    everything = ubuntu_irc.read_conversations(tmp_path, min_messages=1)["test"]
    assert [c.id for c in everything] == ["ubuntu-irc-test-day-0001", "ubuntu-irc-test-day-0006",
                                          "ubuntu-irc-test-day-0007"]  # log order, system line 4 dropped
    notice = everything[2].messages[0]
    assert (notice.kind, notice.speaker, notice.text, everything[2].annotated_messages) == (
        "notice", "spam", "buy things", 2)


@pytest.mark.parametrize("clusters, raw_line, message", [
    ("other:1 2 3\n", None, r"gold\.train\.clusters\.txt:1: log 'other' has no raw file"),
    ("day:1 2 99\n", None, r"gold\.train\.clusters\.txt:1: message 99 is beyond the 8 lines"),
    ("day 1 2 3\n", None, r"gold\.train\.clusters\.txt:1: expected 'LOG:id id \.\.\.'"),
    ("day:1 2 3\n", "03:10 alice: no brackets", r"day\.train-a\.raw\.txt:3: not an IRC log line"),
])
def test_ubuntu_irc_bad_input(tmp_path, clusters, raw_line, message):
    ubuntu_fixture(tmp_path, clusters)
    if raw_line is not None:
        write(tmp_path, "ubuntu_irc/train/day.train-a.raw.txt", lines(*RAW[:2], raw_line, *RAW[3:]))
    with pytest.raises(SourceError, match=message):
        ubuntu_irc.read(tmp_path)


def test_ubuntu_irc_bad_annotation(tmp_path):
    ubuntu_fixture(tmp_path)
    write(tmp_path, "ubuntu_irc/train/day.train-a.annotation.txt", lines("1 1 -", "1 2"))
    with pytest.raises(SourceError, match=r"day\.train-a\.annotation\.txt:2: expected a link 'A B -'"):
        ubuntu_irc.read(tmp_path)


# ---------------------------------------------------------------- registry and the `dialshift sources` command


def test_every_corpus_is_registered():
    names = set(sources())
    assert {"clinc150_full", "clinc150_small", "clinc150_imbalanced", "clinc150_oos_plus", "hwu64", "snips",
            "banking77", "banking77_dnnc", "banking77_oos", "rostd", "rostd_ood", "massive_en_us", "koradvmrs",
            "xpersona_ko", "chatbotdata", "ubuntu_irc"} <= names
    for info in sources().values():
        assert info.expected and info.unit and info.license and info.description


def test_sources_command_bad_data_dir(tmp_path, capsys):
    assert main(["sources", "--data-dir", str(tmp_path / "missing")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "does not exist" in err and "Traceback" not in err


def test_sources_command_unknown_name(tmp_path, capsys):
    assert main(["sources", "nope", "--data-dir", str(tmp_path)]) == 2
    assert "unknown source(s) nope" in capsys.readouterr().err


def test_sources_command_reports_each_failure_and_keeps_going(tmp_path, capsys):
    hwu_fixture(tmp_path)
    assert main(["sources", "--data-dir", str(tmp_path), "hwu64", "snips"]) == 2
    captured = capsys.readouterr()
    table = captured.out.split("\nraw corpora")[0]  # the readers' table (the corpora table follows)
    rows = {line.split()[0]: line for line in table.splitlines() if line.startswith(("hwu64", "snips"))}
    assert "train 2, validation 2" in rows["hwu64"] and "count mismatch: train 2 (official 8,954)" in rows["hwu64"]
    assert "file not found" in rows["snips"]
    error = captured.err.strip().splitlines()
    assert len(error) == 1 and "2 of 2 sources failed: hwu64, snips" in error[0]


def test_sources_command_ok_on_matching_counts(tmp_path, capsys, monkeypatch):
    rostd_fixture(tmp_path)
    info = sources()["rostd_ood"]
    monkeypatch.setitem(info.expected, "ood", 1)
    # The counts match, but the fixture's files are not the released ones: the counts table says ok for the
    # corpus, and the command still fails on the checksums (issue 36: a bad sha256 is never "all sources ok").
    assert main(["sources", "rostd_ood", "--data-dir", str(tmp_path)]) == 2
    captured = capsys.readouterr()
    out = captured.out
    assert "rostd/data/fbrelease/OODrelease.tsv" in out and "ood 1" in out and "sources ok" not in out
    assert "README says" in out  # the note explaining the README/file difference
    assert "not intact" in captured.err


def test_sources_help(capsys):
    with pytest.raises(SystemExit) as caught:
        main(["sources", "--help"])
    assert caught.value.code == 0
    assert "official statistics" in " ".join(capsys.readouterr().out.split())


def test_deeply_nested_json_is_a_source_error(tmp_path):
    """Issue 15: a file of a million '[' ended in a RecursionError traceback."""
    from dialshift.sources.base import read_json, read_jsonl

    path = tmp_path / "deep.json"
    path.write_text("[" * 1_000_000)
    with pytest.raises(SourceError, match="nested too deeply"):
        read_json(path)
    with pytest.raises(SourceError, match="nested too deeply"):
        list(read_jsonl(path))
