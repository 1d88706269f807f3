"""Word senses for the sense-preserving Unknown Word rules (beyond Lee et al. 2022): content words, a word's most
frequent senses of its likely part of speech, and re-inflection.

* **Content word**: not in scikit-learn's English stop-word list (``ENGLISH_STOP_WORDS``, 318 words, the Glasgow
  IR list) nor a contraction piece (``don ' t`` -> ``don``, ``t``; :data:`~dialshift.shifts.words.CONTRACTION_PIECES`),
  and its lemma (lemminflect's dictionary: ``did -> do``, ``got -> get``) is neither.
* **Senses** of a word: its WordNet synsets, each with the word's own lemma in it and that lemma's SemCor frequency
  (``cntlist.rev``, NLTK's ``Lemma.count()``). They are ranked by frequency, ties by WordNet's order (its sense
  numbers follow the same frequencies). The **likely part of speech** is that of the top-ranked sense among the parts
  of speech lemminflect's dictionary gives the word (``oh``, ``hi``, ``yeah`` have none: no likely part of speech,
  so no synonym); adjective satellites count as adjectives. :func:`top_senses` keeps the first ``k`` senses of that
  part of speech. The content-word test checks the word's lemma in its likely part of speech.
* **Re-inflection**: the word's Penn tag is the first tag of its part of speech under which lemminflect inflects the
  word's lemma back to the word (``cars`` = ``car`` + NNS); a synonym lemma is inflected with the same tag
  (``automobile`` + NNS = ``automobiles``). A word equal to its lemma takes the base tag (NN, VB, JJ, RB: the synonym
  lemma as it is); a word whose tag is not found, or a synonym lemminflect gives no form for, has no inflected
  synonym (:func:`inflect` returns None and the caller skips it).

Everything here is context-free (no tagger): a word gets the same likely part of speech in every sentence.
"""

import weakref
from dataclasses import dataclass
from functools import cache

from dialshift.shifts.words import CONTRACTION_PIECES

#: WordNet part of speech -> lemminflect's universal tag and the Penn tags tried for re-inflection, base tag first.
PARTS_OF_SPEECH = {
    "n": ("NOUN", ("NN", "NNS")),
    "v": ("VERB", ("VB", "VBP", "VBZ", "VBG", "VBD", "VBN")),
    "a": ("ADJ", ("JJ", "JJR", "JJS")),
    "r": ("ADV", ("RB", "RBR", "RBS")),
}
_WORDNET_POS = {upos: pos for pos, (upos, _) in PARTS_OF_SPEECH.items()}


@cache
def stop_words() -> frozenset:
    """scikit-learn's English stop words plus the contraction pieces the tokenizer cuts out (lower case)."""
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    return frozenset(ENGLISH_STOP_WORDS) | CONTRACTION_PIECES


@cache
def dictionary_lemmas(word: str) -> dict[str, tuple[str, ...]]:
    """lemminflect's dictionary lemmas of a lower-case word by WordNet part of speech (``{}`` when it has none)."""
    from lemminflect import getAllLemmas

    return {_WORDNET_POS[upos]: lemmas for upos, lemmas in getAllLemmas(word).items() if upos in _WORDNET_POS}


def is_content_word(word: str, pos: str | None = None) -> bool:
    """Not a stop word or contraction piece, and not an inflection of a stop word: the word's lemma in part of speech
    ``pos`` (its likely one, :func:`likely_pos`; every part of speech lemminflect knows when None) is no stop word
    either (``did -> do``, ``got -> get``; with ``pos = "n"``, ``evening`` is not ``even``)."""
    lower = word.lower()
    stop = stop_words()
    if lower in stop:
        return False
    lemmas = dictionary_lemmas(lower)
    chosen = [lemmas.get(pos, ())] if pos is not None else lemmas.values()
    return not any(lemma in stop for group in chosen for lemma in group)


@dataclass(frozen=True)
class Sense:
    """One sense of a word: the synset, its part of speech (``n v a r``), the word's lemma in it, that lemma's
    SemCor frequency and the synset's position among the word's synsets (WordNet's order)."""

    synset: object
    pos: str
    lemma: str
    count: int
    order: int


_COUNTS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def lemma_count(wordnet, lemma) -> int:
    """A lemma's SemCor frequency: NLTK's ``Lemma.count()``, read from ``cntlist.rev`` once into a dict per reader
    (``count()`` binary-searches the file on every call, 50x slower over a corpus's words)."""
    counts = _semcor_counts(wordnet)
    return counts.get(lemma.key(), 0) if counts is not None else lemma.count()


#: The number of sense-tagged occurrences in SemCor when a reader has no ``cntlist.rev`` to sum (WordNet 3.0's).
SEMCOR_TAGGED = 258_691


def semcor_size(wordnet) -> int:
    """The sense-tagged occurrences counted in ``wordnet``'s ``cntlist.rev`` (the sum of every lemma's count)."""
    counts = _semcor_counts(wordnet)
    if not counts:
        return SEMCOR_TAGGED
    total = counts.get(_TOTAL)
    if total is None:
        total = counts[_TOTAL] = sum(counts.values())
    return total


_TOTAL = "\0total"  # no lemma key holds a NUL


def _semcor_counts(wordnet) -> dict | None:
    """``cntlist.rev`` as a dict (lemma key -> count), read once per reader; None for a reader without the file."""
    try:
        counts = _COUNTS[wordnet]
    except (KeyError, TypeError):
        counts = None
        if hasattr(wordnet, "open"):
            try:
                with wordnet.open("cntlist.rev") as lines:
                    counts = {}
                    for line in lines:
                        key, _, count = line.split()
                        counts[key] = int(count)
            except OSError:
                counts = None
        try:
            _COUNTS[wordnet] = counts
        except TypeError:
            pass
    return counts


def word_senses(wordnet, word: str) -> list[Sense]:
    """Every WordNet sense of ``word`` (NLTK's morphological look-up), most frequent first (ties: WordNet's order)."""
    lower = word.lower()
    bases = {lower} | {lemma for lemmas in dictionary_lemmas(lower).values() for lemma in lemmas}
    senses = []
    for order, synset in enumerate(wordnet.synsets(lower)):
        pos = "a" if synset.pos() == "s" else synset.pos()
        own = [lemma for lemma in synset.lemmas() if lemma.name().lower() in bases]
        if not own:  # a base form only WordNet's morphology knows (e.g. an exception list entry)
            own = [lemma for lemma in synset.lemmas() if wordnet.morphy(lower, synset.pos()) == lemma.name().lower()]
        counts = [lemma_count(wordnet, lemma) for lemma in own]
        best = max(range(len(own)), key=counts.__getitem__, default=None)
        senses.append(Sense(synset, pos, own[best].name() if own else lower, counts[best] if own else 0, order))
    return sorted(senses, key=lambda sense: (-sense.count, sense.order))


def likely_pos(senses: list[Sense], word: str) -> str | None:
    """The part of speech of the most frequent sense among those lemminflect's dictionary allows for ``word``."""
    allowed = dictionary_lemmas(word.lower()).keys()
    return next((sense.pos for sense in senses if sense.pos in allowed), None)


def top_senses(senses: list[Sense], pos: str | None, k: int) -> list[Sense]:
    """The ``k`` most frequent of ``senses`` (ranked by :func:`word_senses`) in part of speech ``pos``."""
    return [sense for sense in senses if sense.pos == pos][:k]


@cache  # lemminflect deep-copies its tables on every call; a corpus asks the same few again
def penn_tag(word: str, pos: str, lemma: str) -> str | None:
    """The first Penn tag of ``pos`` under which lemminflect inflects ``lemma`` to ``word`` (case-insensitive)."""
    from lemminflect import getInflection

    lower, base = word.lower(), lemma.lower()
    if lower == base:
        return PARTS_OF_SPEECH[pos][1][0]
    for tag in PARTS_OF_SPEECH[pos][1]:
        if lower in (form.lower() for form in getInflection(base, tag)):
            return tag
    return None


@cache
def penn_tags(word: str, pos: str, lemma: str) -> tuple[str, ...]:
    """Every Penn tag of ``pos`` under which lemminflect inflects ``lemma`` to ``word`` (``traveled``: VBD and VBN)."""
    from lemminflect import getInflection

    lower, base = word.lower(), lemma.lower()
    return tuple(tag for tag in PARTS_OF_SPEECH[pos][1]
                 if lower == base and tag == PARTS_OF_SPEECH[pos][1][0]
                 or lower in (form.lower() for form in getInflection(base, tag)))


@cache
def inflect(lemma: str, tag: str | None) -> str | None:
    """``lemma`` inflected with Penn ``tag`` by lemminflect (its rules cover words outside its dictionary); the lemma
    itself for a base tag (NN, VB, JJ, RB); None when there is no tag or no form."""
    from lemminflect import getInflection

    if tag is None:
        return None
    if tag in ("NN", "VB", "JJ", "RB"):
        return lemma
    forms = getInflection(lemma, tag)
    return forms[0] if forms else None


#: The longest WordNet multiword lemma, in tokens, that :func:`phrase_index` keeps (``no_matter``: 2,
#: ``by_the_way``: 3); longer ones are rare in chat and only cost look-ups.
MAX_PHRASE_TOKENS = 3
_PHRASES: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def phrase_index(wordnet) -> dict[str, tuple[tuple[str, ...], ...]]:
    """WordNet's multiword lemmas (compounds, phrasal verbs, idioms: ``hard_drive``, ``no_matter``, ``make_way``) of
    2 to :data:`MAX_PHRASE_TOKENS` tokens, cut like the text (:func:`~dialshift.shifts.words.tokenize`, lower case),
    indexed by each of their alphabetic tokens; read once per reader. A reader without ``all_lemma_names`` has
    none."""
    try:
        return _PHRASES[wordnet]
    except (KeyError, TypeError):
        pass
    from dialshift.shifts.words import tokenize

    index: dict[str, set] = {}
    names = getattr(wordnet, "all_lemma_names", None)
    for name in names() if names is not None else ():
        if "_" not in name:
            continue
        tokens = tuple(tokenize(name.replace("_", " ").lower()))
        if 2 <= len(tokens) <= MAX_PHRASE_TOKENS:
            for token in set(tokens):
                if token.isalpha():
                    index.setdefault(token, set()).add(tokens)
    found = {token: tuple(sorted(phrases)) for token, phrases in index.items()}
    try:
        _PHRASES[wordnet] = found
    except TypeError:
        pass
    return found
