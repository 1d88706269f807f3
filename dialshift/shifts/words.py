"""Tokenisation and word predicates shared by the word-level shifts.

Tokenisation (the unit the replacement ratio counts): every maximal run of word characters (``\\w+``: letters,
digits, underscore) is a token and every other non-space character is a token of its own, the way BERT's basic
tokenizer splits text before WordPiece (Lee et al. used bert-base-cased; "words (= token)", App. A.5). So
``"I've got £ 330 ."`` is ``I ' ve got £ 330 .``: 7 tokens. A *word* (a possible replacement target) is an
alphabetic token that is not a number word. Tokens keep their character spans, so a shifted utterance is the
original text with only the replaced tokens changed.
"""

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

from rapidfuzz.distance import Levenshtein

TOKEN_RE = re.compile(r"\w+|[^\w\s]")

#: Cardinal number words (rule 1 excludes numbers as targets and as synonyms, e.g. ``2 -> two``).
NUMBER_WORDS = frozenset(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
    "seventeen eighteen nineteen twenty thirty forty fifty sixty seventy eighty ninety hundred thousand million "
    "billion trillion".split()
)


def tokenize(text: str) -> list[str]:
    return TOKEN_RE.findall(text)


def token_spans(text: str) -> list[tuple[int, int]]:
    """Character ``(start, end)`` of every token of ``text`` (parallel to :func:`tokenize`)."""
    return [match.span() for match in TOKEN_RE.finditer(text)]


#: URLs (``https://example.com/a``), web addresses (``www.ebay.com``, also spaced out as ``www . ebay.com``) and
#: e-mail addresses: their words are never replaced.
PROTECTED_RE = re.compile(r"[a-z][a-z0-9+.-]*://\S+|\bwww\s?\.\s?\S+|[\w.+-]+@[\w-]+(?:\.[\w-]+)+", re.IGNORECASE)


def protected_spans(text: str) -> list[tuple[int, int]]:
    """Character ``(start, end)`` of every URL, web or e-mail address in ``text`` (:data:`PROTECTED_RE`)."""
    return [match.span() for match in PROTECTED_RE.finditer(text)]


def substitute(text: str, spans: list[tuple[int, int]], new_tokens: dict[int, str]) -> str:
    """``text`` with the tokens at the given indices replaced; everything else (spacing included) unchanged."""
    pieces, last = [], 0
    for index in sorted(new_tokens):
        start, end = spans[index]
        pieces += [text[last:start], new_tokens[index]]
        last = end
    pieces.append(text[last:])
    return "".join(pieces)


def is_number(token: str) -> bool:
    """Digits anywhere (``2``, ``3pm``, ``1st``) or a cardinal number word (``two``, ``Hundred``)."""
    return any(char.isdigit() for char in token) or token.lower() in NUMBER_WORDS


_NUMERAL_RE = re.compile(r"\d[\d,.]*(?:st|nd|rd|th|s)?")


def is_numeral(lemma: str) -> bool:
    """A WordNet lemma that names a number: written in digits (``12``, ``1000``, ``1st``) or made of cardinal number
    words only (``twelve``, ``one_thousand``, ``twenty-one``). ``atomic_number_53`` is not one."""
    lower = lemma.lower()
    if _NUMERAL_RE.fullmatch(lower):
        return True
    parts = [part for part in re.split(r"[_\- ]", lower) if part]
    return bool(parts) and all(part in NUMBER_WORDS for part in parts)


@lru_cache(maxsize=1 << 16)
def is_word(token: str) -> bool:
    """An alphabetic token that is not a number: a possible replacement target (cached: contexts that are prefixes of
    one dialogue ask about the same tokens again and again)."""
    return token.isalpha() and not is_number(token)


#: Tokens after which a capitalised word starts a sentence (so its capital says nothing about being a name).
SENTENCE_BREAKS = frozenset('. ! ? " \u201c \u2018 ( : ; -'.split())


def is_name_like(tokens, index: int) -> bool:
    """A capitalised word inside a sentence (``Jack``, ``Sue`` in ``I told Sue``): likely a name, not the common word
    WordNet has (``sue -> litigate``). The first word of a turn or after ``. ! ? " ( : ; -`` is not name-like; neither
    is ``I``."""
    token = tokens[index]
    if not token[:1].isupper() or token == "I" or index == 0:
        return False
    return tokens[index - 1] not in SENTENCE_BREAKS


def normalized_levenshtein(a: str, b: str) -> float:
    """Yujian & Bo (2007) normalised distance ``2 d / (|a| + |b| + d)`` in [0, 1], case-insensitive."""
    a, b = a.lower(), b.lower()
    # rapidfuzz's C++ Levenshtein: 69x faster than the pure-Python dynamic programme it replaced, same values
    # (measured on 20,000 random word pairs, dialshift 0.2).
    distance = Levenshtein.distance(a, b)
    return 0.0 if distance == 0 else 2 * distance / (len(a) + len(b) + distance)


def match_case(original: str, replacement: str) -> str:
    """Carry the original's capitalisation over: ``ABC`` -> upper case, ``Abc``/``I`` -> capitalised first letter."""
    if len(original) > 1 and original.isupper():
        return replacement.upper()
    if original[:1].isupper():
        return replacement[:1].upper() + replacement[1:]
    return replacement


@dataclass(frozen=True)
class Vocabulary:
    """Token counts of a corpus (the training split); ``case_sensitive=False`` folds case before counting."""

    counts: Counter
    case_sensitive: bool = False

    @classmethod
    def from_texts(cls, texts: Iterable[str], case_sensitive: bool = False) -> "Vocabulary":
        counts = Counter(TOKEN_RE.findall("\n".join(texts)))  # one pass: a newline never joins or makes a token
        if not case_sensitive:  # fold the distinct tokens, not every occurrence
            folded = Counter()
            for token, count in counts.items():
                folded[token.lower()] += count
            counts = folded
        return cls(counts, case_sensitive)

    def key(self, word: str) -> str:
        return word if self.case_sensitive else word.lower()

    def __contains__(self, word: str) -> bool:
        return self.key(word) in self.counts

    def count(self, word: str) -> int:
        return self.counts.get(self.key(word), 0)

    def frequent_words(self, min_count: int) -> list[str]:
        """Words (see :func:`is_word`) seen more than ``min_count`` times, sorted; contraction pieces excluded."""
        return sorted(word for word, count in self.counts.items()
                      if count > min_count and is_word(word) and word.lower() not in CONTRACTION_PIECES)


#: Pieces the tokenizer cuts out of contractions (``don't`` -> ``don ' t``); never used as known words.
CONTRACTION_PIECES = frozenset("s t m d ll re ve don isn aren doesn didn couldn wouldn shouldn haven hasn wasn "
                               "weren won ain".split())
