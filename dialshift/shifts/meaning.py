"""The meaning-keeping Unknown Word mode (``mode="meaning"``, beyond Lee et al. 2022), for shifting users' corpora.

The paper's rules replace any word by the farthest-spelled lemma of any WordNet sense, which on a new corpus turns
``I'm glad`` into ``Iodine'mebibyte beaming``. This mode keeps the meaning and stays an *unknown word* shift (every
synonym is still unseen in the training texts):

* **Targets are content words only**: an alphabetic token of at least :data:`MIN_LETTERS` letters that is not a
  number, a stop word (scikit-learn's list), a pronoun, auxiliary or determiner (:data:`FUNCTION_WORDS` adds those
  the stop list lacks), a contraction piece (``don ' t``), a capitalised word inside a sentence (a likely name), a
  word inside a URL or address or glued to its neighbours into code (``apt-get``, ``/etc/fstab``, :func:`glued`),
  nor an inflection of a stop word in any part of speech (``did -> do``, ``saw -> see``); and it has a noun, verb,
  adjective or adverb reading (lemminflect's dictionary and a WordNet sense).
* **The part of speech comes from the context**: a word with one reading takes it; otherwise the previous token
  decides (a subject pronoun, modal or ``do`` before it: verb; a determiner or possessive: noun, when the word has no
  adjective reading), else the reading that holds at least :data:`DOMINANT_SHARE` of the word's SemCor occurrences;
  a word none of these resolves is not a target (``we dress``: verb; ``the dress``: noun).
* **The synonym is one of the most frequent sense of that part of speech** (SemCor counts; ``senses`` = K widens it to
  K senses): its single-word lemmas other than the word's own, none a number or a lemma of a number sense, inflected
  like the word (lemminflect; ``cars -> automobiles``), the inflected form and its lemma both unseen in training; the
  most common one in that sense is taken (highest SemCor count of the lemma in the synset, then WordNet's order), not
  the farthest-spelled (the paper's rule 4).
* **The ratio counts content words**: ``n = rounding(ratio x counted words)`` targets (rounding ``ceil`` by default
  in this mode, so a short context gets one), drawn in a seeded order from the words that have an unseen synonym in
  their context. The counted words are the content words whose reading in the context has a synonym at all, seen in
  training or not (:func:`is_counted`): a word no synonym could ever replace does not make a ratio unreachable.

Each word's record (:func:`word_entry`: is it a content word, its synonym per reading, its dominant reading) is
context-free, so it is computed once per word and cached on disk with the rest of the table
(:mod:`dialshift.shifts.table_cache`); only the choice of reading looks at the context (:func:`context_choice`).
"""

from collections.abc import Sequence

from dialshift.shifts import senses as sense_rules
from dialshift.shifts.words import is_name_like, is_numeral, is_word, match_case

#: Words shorter than this are never targets (``go``, ``ok``, ``TV``).
MIN_LETTERS = 3
#: Pronouns, auxiliaries, determiners and spoken fillers that scikit-learn's stop list lacks.
FUNCTION_WORDS = frozenset(
    "theirs ones somebody anybody everybody yourselves oneself "
    "does did doing done having shall ought dare gonna wanna gotta let lets "
    "little such "
    "yeah yes yep nope okay hey hello hmm uh um oh ah".split()
)
#: The previous token says the word is a verb (subject pronouns, modals, ``do`` and its negations) ...
VERB_CUES = frozenset(
    "i you we they he she it will would can could should must may might shall do does did don didn doesn won "
    "wouldn couldn shouldn please ll".split()
)
#: ... or a noun (determiners and possessives), unless the word also reads as an adjective (``the good one``).
NOUN_CUES = frozenset("a an the my your his her its our their this these those some any no every each another".split())
#: A reading holding this share of a word's SemCor occurrences is taken when the context gives no cue.
DOMINANT_SHARE = 0.8
#: Characters that glue a word to its neighbour into something that is not prose (``apt-get``, ``/etc/fstab``,
#: ``ppa:team/java``, ``file.txt``, ``user@host``): such a word is never a target.
GLUE = frozenset("-/_.:@~=+\\#$%&*<>|[]{}`^")


def word_entry(table, word: str) -> dict:
    """The context-free record of a lower-case word under the meaning mode: ``content`` (a content word, counted by
    the ratio), ``synonyms`` (reading -> inflected synonym or None, for each noun/verb/adjective/adverb reading) and
    ``dominant`` (the reading holding :data:`DOMINANT_SHARE` of its SemCor occurrences, or None)."""
    lower = word.lower()
    stop = sense_rules.stop_words()
    if not is_word(lower) or len(lower) < MIN_LETTERS or lower in stop or lower in FUNCTION_WORDS:
        return {"content": False, "synonyms": {}, "substitutable": [], "dominant": None}
    lemmas = sense_rules.dictionary_lemmas(lower)
    if any(lemma in stop for group in lemmas.values() for lemma in group):  # did -> do, saw -> see, does -> do
        return {"content": False, "synonyms": {}, "substitutable": [], "dominant": None}
    senses = table.senses(lower)
    readings = [pos for pos in sense_rules.PARTS_OF_SPEECH if pos in lemmas and any(s.pos == pos for s in senses)]
    found = {pos: reading_synonyms(table, lower, senses, pos) for pos in readings}
    counts = {pos: sum(sense.count for sense in senses if sense.pos == pos) for pos in readings}
    total = sum(counts.values())
    dominant = next((pos for pos in readings if total and counts[pos] >= DOMINANT_SHARE * total), None)
    return {"content": bool(readings), "synonyms": {pos: unseen for pos, (unseen, _) in found.items()},
            "substitutable": [pos for pos, (_, any_synonym) in found.items() if any_synonym], "dominant": dominant}


def reading_synonyms(table, word: str, senses: list, pos: str) -> tuple[str | None, bool]:
    """The synonym of ``word`` read as ``pos`` (the most common unseen single-word lemma of its top sense(s) in that
    part of speech, inflected like the word; None when there is none) and whether the sense has any single-word
    inflectable synonym at all, seen in training or not (the word then counts in the ratio)."""
    chosen, substitutable = [], False
    for sense in sense_rules.top_senses(senses, pos, table.rules.senses):
        if table.number_sense(sense.synset):
            continue
        tag = sense_rules.penn_tag(word, pos, sense.lemma)
        if tag is None:
            continue
        for order, lemma in enumerate(sense.synset.lemmas()):
            name = lemma.name()
            if name.lower() in (word, sense.lemma.lower()) or not name.isalpha() or is_numeral(name):
                continue
            form = sense_rules.inflect(name, tag)
            if form is None or form.lower() == word:
                continue
            substitutable = True
            if form in table.vocabulary or name in table.vocabulary:  # rule 3 on the form and on its lemma
                continue
            chosen.append((-sense_rules.lemma_count(table.wordnet, lemma), sense.order, order, form))
    return (min(chosen)[-1] if chosen else None), substitutable


def context_pos(tokens: Sequence[str], index: int, entry: dict) -> str | None:
    """The reading of ``tokens[index]`` in its context (see the module docstring), or None when unresolved."""
    readings = list(entry["synonyms"])
    if len(readings) == 1:
        return readings[0]
    previous = tokens[index - 1].lower() if index > 0 else ""
    if previous in VERB_CUES and "v" in readings:
        return "v"
    if previous in NOUN_CUES and "n" in readings and "a" not in readings:
        return "n"
    return entry["dominant"]


def context_choice(tokens: Sequence[str], index: int, entry: dict) -> str | None:
    """The replacement of ``tokens[index]`` in its context (cased like the word), or None when it is no target."""
    word = tokens[index]
    if not entry["content"] or is_name_like(tokens, index):
        return None
    pos = context_pos(tokens, index, entry)
    synonym = entry["synonyms"].get(pos) if pos is not None else None
    return match_case(word, synonym) if synonym is not None else None


def glued(text: str, span: tuple[int, int]) -> bool:
    """Whether the token at ``span`` of ``text`` is glued to a neighbour by :data:`GLUE` (``apt`` in ``apt-get``; a
    sentence's final full stop or a colon before a space does not glue)."""
    start, end = span
    before = text[start - 1] if start > 0 else " "
    after = text[end] if end < len(text) else " "
    beyond = text[end + 1] if end + 1 < len(text) else " "
    if before in GLUE and (start < 2 or not text[start - 2].isspace() or before not in ".:"):
        return True
    return after in GLUE and (after not in ".:" or not beyond.isspace() and beyond not in "\"').!?,")


def is_counted(tokens: Sequence[str], index: int, entry: dict) -> bool:
    """Whether a word counts in the ratio's denominator: a content word, not a likely name, whose reading in this
    context has a synonym in WordNet (seen in training or not: a word no synonym could ever replace is not counted)."""
    if not entry["content"] or is_name_like(tokens, index):
        return False
    return context_pos(tokens, index, entry) in entry["substitutable"]
