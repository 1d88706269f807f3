"""The meaning-keeping Unknown Word mode (``mode="meaning"``, beyond Lee et al. 2022), for shifting users' corpora.

The paper's rules replace any word by the farthest-spelled lemma of any WordNet sense, which on a new corpus turns
``I'm glad`` into ``Iodine'mebibyte beaming``. This mode keeps the meaning; whether the synonym must also be unseen in
the training texts (an *unknown* word, as in the paper) is its ``unseen`` parameter
(:data:`~dialshift.shifts.replace.UNSEEN`; ``preferred`` by default):

* **Targets are content words only**: an alphabetic token of at least :data:`MIN_LETTERS` letters that is not a
  number, a stop word (scikit-learn's list), a pronoun, auxiliary, determiner, filler, ``like`` or a reporting verb
  (:data:`FUNCTION_WORDS` adds those the stop list lacks), a particle (:data:`PARTICLES`), a contraction piece
  (``don ' t``), a capitalised word inside a sentence (a likely name), a word inside a URL or address or glued to
  its neighbours into code (``apt-get``, ``/etc/fstab``, :func:`glued`), nor an inflection of a stop word in any part
  of speech (``did -> do``, ``saw -> see``); it has a noun, verb, adjective or adverb reading (lemminflect's
  dictionary and a WordNet sense); it is not the corpus's jargon (:func:`keyness`), and in its context not part of a
  phrasal verb, a fixed phrase, a WordNet multiword lemma spelled with its neighbours (``hard drive``, ``no matter``,
  ``ask for``: :func:`in_wordnet_phrase`), a noun compound (:func:`in_compound`) or the name a message is addressed
  to (:func:`in_phrase`).
* **The part of speech comes from the context**: a word with one reading takes it; otherwise the previous token
  decides (a subject pronoun, modal, ``do`` or ``n't`` before it: verb; a determiner or possessive: noun, when the
  word has no adjective reading), else the reading that holds at least :data:`DOMINANT_SHARE` of the word's SemCor
  occurrences; a word none of these resolves is not a target (``we dress``: verb; ``the dress``: noun).
* **The synonym is one of a clear most frequent sense of that part of speech** (SemCor counts, :data:`MIN_SENSE_COUNT`
  and :data:`SENSE_SHARE`; ``senses`` = K widens it to K senses): a single-word lemma other than the word's own,
  none a number or a lemma of a number sense, used in that sense in SemCor (:data:`MIN_SYNONYM_COUNT`) and in one of
  its own main senses (:func:`own_sense`), not a derivation of the word (:func:`derived`), inflected like the word
  (lemminflect; ``cars -> automobiles``). Of those, the ones whose own most frequent sense it is come first
  (:data:`PREFER_OWN_TOP`), then the most used in the sense (then WordNet's order), not the farthest-spelled (the
  paper's rule 4), under the ``unseen`` rule (:func:`reading_synonyms`). A verb followed by a complement (``to``, an
  object pronoun, a thing's noun phrase, an ``-ing`` form) takes only a synonym that shares a WordNet verb frame of
  that complement with it (``want to -> desire to``; not ``help to -> aid to``, ``tell us -> say us``, ``stops
  working -> halts working``: :data:`COMPLEMENT_FRAMES`).
* **The ratio counts content words**: ``n = rounding(ratio x counted words)`` targets (rounding ``ceil`` by default
  in this mode, so a short context gets one), drawn in a seeded order from the words that have a synonym in their
  context. The counted words are the content words whose reading in the context has a suitable synonym, seen in
  training or not (:func:`is_counted`): a word no synonym could ever replace does not make a ratio unreachable.

Each word's record (:func:`word_entry`: is it a content word, its synonym per reading and complement, its dominant
reading, lemmas and WordNet multiword lemmas) is
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
    "like say says said saying letting forth "  # a preposition in chat; verbs whose synonyms take other complements
    "yeah yes yep nope okay hey hello hmm uh um oh ah".split()
)
#: The previous token says the word is a verb (subject pronouns, modals, ``do`` and its negations) ...
VERB_CUES = frozenset(
    "i you we they he she it will would can could should must may might shall do does did don didn doesn won "
    "wouldn couldn shouldn please ll t "  # t: the piece of "n't" (don ' t know), always before a verb
    "dont doesnt didnt cant couldnt wouldnt shouldnt wont".split()  # the same without the apostrophe
)
#: ... or a noun (determiners and possessives), unless the word also reads as an adjective (``the good one``).
NOUN_CUES = frozenset("a an the my your his her its our their this these those some any no every each another".split())
#: A reading holding this share of a word's SemCor occurrences is taken when the context gives no cue.
DOMINANT_SHARE = 0.7
#: Characters that glue a word to its neighbour into something that is not prose (``apt-get``, ``/etc/fstab``,
#: ``ppa:team/java``, ``file.txt``, ``user@host``): such a word is never a target.
GLUE = frozenset("-/_.:@~=+\\#$%&*<>|[]{}`^")
#: A reading gives synonyms only when its most frequent sense is used this often in SemCor ...
MIN_SENSE_COUNT = 3
#: ... and holds this share of the reading's SemCor uses (``use``: 97 %, ``think``: 46 %, ``just``: 46 %;
#: ``find``: 23 %: no target). A majority (0.5) would drop ``just``, ``think``, ``way``, ``write`` and ``tell`` too,
#: but keep 86.7 % of the Ubuntu IRC test contexts at ratio 0.3 instead of 91.0 % (``benchmarks/uw_meaning.py``).
SENSE_SHARE = 0.35
#: With the contextual check (``fit``), a word whose reading's most frequent sense holds less than this share of its
#: SemCor uses is a target of last resort: drawn only when no word of a clear sense fits well enough
#: (:func:`clear_sense`; the check's ``fit_prefer``).
CLEAR_SHARE = 0.5
#: A synonym is used in the word's sense at least this share of its own SemCor uses in that part of speech.
SYNONYM_SHARE = 0.3
#: ``unseen="preferred"`` takes the most used unseen synonym when it is used at least this share as often in the sense
#: as the most used synonym (``think -> believe`` 72, not ``conceive`` 10; ``use -> employ`` 42, not ``apply`` 45).
PREFER_SHARE = 0.5
#: Among the suitable synonyms of a sense, those whose own most frequent sense (in that part of speech) it is come
#: first, then the most used in it (:func:`top_sense`).
PREFER_OWN_TOP = True
#: A verb directly followed by a complement is replaced only by a synonym sharing with it, in that sense, one of the
#: WordNet verb frames of that complement (:func:`complement_of`): ``to`` (12 "Something ----s to somebody", 27
#: "Somebody ----s to somebody", 28 "Somebody ----s to INFINITIVE": ``want to -> desire to``, not ``help to -> aid
#: to``), a personal object pronoun (9, 10, 14, 17, 18, 20, 24, 25, 30 "... ----s somebody ...": ``help me -> aid
#: me``, not ``tell us -> say us``), a determiner or object pronoun of a thing (5, 8, 11, 15, 16, 19, 21, 31 "...
#: ----s something ...": ``ask the question`` is not ``ask.v.01``, whose frames take no thing) or a verb's ``-ing``
#: form (33 "Somebody ----s VERB-ing": ``start having -> begin having``, not ``stops working -> halts working``).
COMPLEMENT_FRAMES = {"to": frozenset({12, 27, 28}), "somebody": frozenset({9, 10, 14, 17, 18, 20, 24, 25, 30}),
                     "something": frozenset({5, 8, 11, 15, 16, 19, 21, 31}), "ing": frozenset({33})}
#: The object pronouns that name a person after a verb (``her`` and ``you`` are also a possessive and a subject) ...
OBJECT_PRONOUNS = frozenset("me us him them".split())
#: ... and the words that open a thing's noun phrase or name a thing after a verb.
THING_OBJECTS = frozenset("a an the my your his its our their this these those some any every each another it".split())
#: A synonym sharing this many first letters with the word is a derivation of it, not another word.
STEM_LETTERS = 5
#: A synonym is used at least this often in that sense in SemCor (``know -> cognize`` 0, ``command -> bid`` 1).
MIN_SYNONYM_COUNT = 2
#: A word this much (log10) more frequent in the training texts than in SemCor is the corpus's jargon ...
MAX_KEYNESS = 0.75
#: ... measured only on a training split of at least this many tokens (a small one says nothing about jargon).
MIN_KEYNESS_TOKENS = 100_000
#: A verb followed by one of these is part of a phrasal verb (``try out``), except before ``to``, which is a complement
#: (:data:`COMPLEMENT_FRAMES`); none of these is a target ...
PARTICLES = frozenset("to out on up off about into over down away back around through along in".split())
#: ... and these word pairs are fixed phrases whose words keep no meaning of their own (``good luck``).
COLLOCATIONS = frozenset(tuple(pair.split()) for pair in (
    "good luck", "last night", "last week", "last year", "last time", "of course", "according to", "at least",
    "at all", "at first", "at last", "right now", "right away", "no problem", "thank you", "good morning",
    "good night", "good afternoon", "good evening", "good idea", "take care", "make sure", "in fact", "in case",
    "the following", "kind of", "sort of", "all right", "never mind", "as well", "for sure", "so far", "each other",
    "no longer", "first time", "long time", "right click", "live cd", "live mode", "single user", "no idea",
    "could use", "can use",
))


def word_entry(table, word: str) -> dict:
    """The context-free record of a lower-case word under the meaning mode: ``content`` (a content word, counted by
    the ratio), ``synonyms`` (reading -> inflected synonym or None, for each noun/verb/adjective/adverb reading),
    ``dominant`` (the reading holding :data:`DOMINANT_SHARE` of its SemCor occurrences, or None), ``forms`` (its
    dictionary lemmas other than itself: ``drives -> drive``) and ``phrases`` (WordNet's multiword lemmas holding the
    word or one of its forms, :func:`~dialshift.shifts.senses.phrase_index`; for content words only)."""
    lower = word.lower()
    stop = sense_rules.stop_words()
    lemmas = sense_rules.dictionary_lemmas(lower) if is_word(lower) else {}
    forms = sorted({lemma.lower() for group in lemmas.values() for lemma in group} - {lower})
    none = {"content": False, "synonyms": {}, "substitutable": [], "dominant": None, "forms": forms, "phrases": [],
            "complements": {}, "ambiguous": []}
    if not is_word(lower) or len(lower) < MIN_LETTERS or lower in stop or lower in FUNCTION_WORDS or lower in PARTICLES:
        return none
    if any(lemma in stop for group in lemmas.values() for lemma in group):  # did -> do, saw -> see, does -> do
        return none
    senses = table.senses(lower)
    readings = [pos for pos in sense_rules.PARTS_OF_SPEECH if pos in lemmas and any(s.pos == pos for s in senses)]
    if readings and keyness(table, lower, senses) > MAX_KEYNESS:  # the corpus's jargon: a content word, no target
        return {**none, "content": True, "synonyms": {pos: None for pos in readings}}
    found = {pos: reading_synonyms(table, lower, senses, pos) for pos in readings}
    framed = {pos: complement for pos, (_, _, complement) in found.items() if complement}
    counts = {pos: sum(sense.count for sense in senses if sense.pos == pos) for pos in readings}
    total = sum(counts.values())
    dominant = next((pos for pos in readings if total and counts[pos] >= DOMINANT_SHARE * total), None)
    substitutable = [pos for pos, (_, any_synonym, _) in found.items() if any_synonym]
    ambiguous = [pos for pos in substitutable if not clear_sense([sense.count for sense in senses if sense.pos == pos])]
    index = sense_rules.phrase_index(table.wordnet) if substitutable else {}
    phrases = sorted({phrase for form in (lower, *forms) for phrase in index.get(form, ())})
    return {"content": bool(readings), "synonyms": {pos: chosen for pos, (chosen, _, _) in found.items()},
            "substitutable": substitutable, "dominant": dominant, "forms": forms,
            "phrases": [list(phrase) for phrase in phrases], "complements": framed, "ambiguous": ambiguous}


def clear_sense(counts: Sequence[int]) -> bool:
    """Whether a reading's most frequent sense holds at least :data:`CLEAR_SHARE` of its SemCor uses (``counts``,
    most frequent first): a reading under it (``just``, ``think``, ``way``: 46 %) passes :data:`SENSE_SHARE` but is
    often meant in another sense, so the contextual check takes such a word as a target only when no clearer one is
    left (:func:`is_clear`)."""
    return bool(counts) and counts[0] >= CLEAR_SHARE * sum(counts)


def is_clear(tokens: Sequence[str], index: int, entry: dict) -> bool:
    """Whether ``tokens[index]``'s reading in its context has a clear most frequent sense (:func:`clear_sense`)."""
    return context_pos(tokens, index, entry) not in entry["ambiguous"]


def reading_synonyms(table, word: str, senses: list, pos: str) -> tuple[str | None, bool, dict]:
    """The synonym of ``word`` read as ``pos``, whether the reading has a suitable synonym at all, seen in training
    or not (the word then counts in the ratio), and for a verb the same two for each complement of
    :data:`COMPLEMENT_FRAMES` (``{"to": [synonym, any], ...}``). A reading gives synonyms only when its most frequent
    sense is clear (:data:`MIN_SENSE_COUNT`, :data:`SENSE_SHARE`); a suitable synonym is a single-word lemma of that
    sense (of its ``senses`` top senses) other than the word's own, no number, used :data:`MIN_SYNONYM_COUNT` times
    in that sense in SemCor, in one of its own main senses (:func:`own_sense`), not a derivation of the word
    (:func:`derived`) and inflected like the word; those whose own most frequent sense it is come first
    (:data:`PREFER_OWN_TOP`). The chosen one follows the table's ``unseen`` rule
    (:data:`~dialshift.shifts.replace.UNSEEN`): the most used in that sense in SemCor (then WordNet's order) of the
    unseen ones (``required``), of all (``optional``), or the most used unseen one when it is used at least
    :data:`PREFER_SHARE` as often as the most used one, else that one (``preferred``). Before a complement only the
    synonyms that share one of its verb frames with the word in that sense are suitable (:func:`complements`)."""
    counts = [sense.count for sense in senses if sense.pos == pos]
    if not counts or counts[0] < MIN_SENSE_COUNT or counts[0] < SENSE_SHARE * sum(counts):
        return None, False, {}  # no clear dominant sense: a synonym of it would often be of another sense here
    suitable = []
    for sense in sense_rules.top_senses(senses, pos, table.rules.senses):
        if table.number_sense(sense.synset):
            continue
        tags = sense_rules.penn_tags(word, pos, sense.lemma)  # the word's inflection: the first tag that gives it
        if not tags:
            continue
        tag, tags = tags[0], tags if pos == "v" else ()  # a verb's form may be two (traveled: VBD, VBN); lemminflect
        # also lists many a noun's singular as its plural (dress, help), which says nothing about this use
        own_lemma = next((lemma for lemma in sense.synset.lemmas() if lemma.name() == sense.lemma), None)
        for order, lemma in enumerate(sense.synset.lemmas()):
            name = lemma.name()
            if name.lower() in (word, sense.lemma.lower()) or not name.isalpha() or is_numeral(name):
                continue
            if derived(name.lower(), word, sense.lemma.lower()):
                continue
            used = sense_rules.lemma_count(table.wordnet, lemma)
            form = sense_rules.inflect(name, tag) if used >= MIN_SYNONYM_COUNT else None
            if form is None or form.lower() == word or any(sense_rules.inflect(name, other) != form for other in tags):
                continue  # also when the word's form is ambiguous and the synonym's is not: traveled -> went/gone
            seen = form in table.vocabulary or name in table.vocabulary  # rule 3 on the form and on its lemma
            top = top_sense(table, name, pos, sense.synset)  # its own most frequent sense first (PREFER_OWN_TOP)
            shared = complements(own_lemma, lemma) if pos == "v" else ()
            suitable.append((PREFER_OWN_TOP and not top, -used, sense.order, order, seen, form, name, shared))
    passing = [item for item in sorted(suitable) if own_sense(table, item[6], pos, -item[1])]
    framed = {complement: [choose(table, [item for item in passing if complement in item[7]]),
                           any(complement in item[7] for item in passing)]
              for complement in COMPLEMENT_FRAMES} if pos == "v" else {}
    return choose(table, passing), bool(passing), framed


def choose(table, passing: list) -> str | None:
    """The synonym the table's ``unseen`` rule takes of ``passing`` (ranked; see :func:`reading_synonyms`)."""
    unseen = next((item for item in passing if not item[4]), None)
    rule = table.rules.unseen
    if rule == "required" or rule == "preferred" and unseen is not None and unseen[1] <= PREFER_SHARE * passing[0][1]:
        chosen = unseen
    else:
        chosen = passing[0] if passing and rule != "required" else None
    return chosen[5] if chosen is not None else None


def complements(word_lemma, synonym_lemma) -> tuple[str, ...]:
    """The complements of :data:`COMPLEMENT_FRAMES` that both lemmas take in their shared sense (one of the
    complement's WordNet verb frames is in the frames of each). A reader without frames checks nothing: every
    complement but ``to`` (a verb before ``to`` is then no target, as a phrasal verb)."""
    if word_lemma is None or not hasattr(word_lemma, "frame_ids"):
        return tuple(complement for complement in COMPLEMENT_FRAMES if complement != "to")
    frames = [set(lemma.frame_ids()) if hasattr(lemma, "frame_ids") else set() for lemma in (word_lemma, synonym_lemma)]
    return tuple(complement for complement, ids in COMPLEMENT_FRAMES.items() if frames[0] & frames[1] & ids)


def own_sense(table, synonym: str, pos: str, used: int) -> bool:
    """Whether the sense shared with the word is one of the synonym's own (``used`` times in it in SemCor, at least
    :data:`SYNONYM_SHARE` of the synonym's uses in part of speech ``pos``): ``remove -> take`` (9 of 1,100 uses of
    *take*) and ``say -> tell`` read as other senses. A synonym the reader has no counts for passes."""
    total = sum(sense.count for sense in table.senses(synonym.lower()) if sense.pos == pos)
    return not total or used >= SYNONYM_SHARE * total


def top_sense(table, synonym: str, pos: str, synset) -> bool:
    """Whether ``synset`` is the synonym's own most frequent sense in part of speech ``pos`` (a reader without names
    for its synsets compares lemma lists)."""
    own = next((sense.synset for sense in table.senses(synonym.lower()) if sense.pos == pos), None)
    return own is not None and synset_key(own) == synset_key(synset)


def synset_key(synset):
    """What identifies a synset: its name (``think.v.01``), or its part of speech and lemmas for a reader without."""
    name = getattr(synset, "name", None)
    return name() if name is not None else (synset.pos(), tuple(synset.lemma_names()))


def derived(name: str, *words: str) -> bool:
    """Whether synonym ``name`` is a derivation of one of ``words`` rather than another word: it contains it or shares
    its first :data:`STEM_LETTERS` letters (``communication -> communicating``, ``regardless -> disregardless``)."""
    return any(word in name or name[:STEM_LETTERS] == word[:STEM_LETTERS] for word in words)


def keyness(table, word: str, senses: list) -> float:
    """How much more frequent ``word`` is in the training texts than in SemCor (log10 of the ratio of its shares of
    the two, SemCor's add-one smoothed; ``-inf`` when the training split has under :data:`MIN_KEYNESS_TOKENS` tokens).
    Over :data:`MAX_KEYNESS` the word is the corpus's jargon (``kernel``, ``partition``, ``apt`` in a help channel):
    its sense there is rarely WordNet's most frequent one, so it is no target."""
    import math

    vocabulary = table.vocabulary
    total = corpus_size(vocabulary)
    count = vocabulary.count(word)
    if total < MIN_KEYNESS_TOKENS or not count:
        return -math.inf
    semcor = sense_rules.semcor_size(table.wordnet)
    return math.log10((count / total) / ((sum(sense.count for sense in senses) + 1) / semcor))


def corpus_size(vocabulary) -> int:
    """The number of tokens the vocabulary counted (summed once per vocabulary)."""
    size = getattr(vocabulary, "_meaning_size", None)
    if size is None:
        size = sum(vocabulary.counts.values())
        object.__setattr__(vocabulary, "_meaning_size", size)
    return size


def in_phrase(tokens: Sequence[str], index: int, pos: str, entries: Sequence[dict | None] = ()) -> bool:
    """Whether ``tokens[index]`` read as ``pos`` is part of a phrasal verb (:data:`PARTICLES` other than ``to``:
    ``try out``; a verb before ``to`` is :func:`reading_choice`'s), of a fixed phrase (:data:`COLLOCATIONS`: ``good
    luck``), of a WordNet multiword lemma with its neighbours (:func:`in_wordnet_phrase`) or the name a message is
    addressed to (its first word, before ``:`` or ``,``): replacing it alone would break the phrase. ``entries`` are
    the turn's word records (None for a token that is no word)."""
    word = tokens[index].lower()
    previous = tokens[index - 1].lower() if index > 0 else ""
    following = tokens[index + 1].lower() if index + 1 < len(tokens) else ""
    if pos == "v" and following in PARTICLES and following != "to" or index == 0 and following in (":", ","):
        return True
    if (previous, word) in COLLOCATIONS or (word, following) in COLLOCATIONS:
        return True
    return bool(entries) and (in_wordnet_phrase(tokens, index, entries) or in_compound(tokens, index, pos, entries))


def in_compound(tokens: Sequence[str], index: int, pos: str, entries: Sequence[dict | None]) -> bool:
    """Whether ``tokens[index]``, read as a noun, stands next to a word that can only be a noun: a noun compound
    (``folder manager``, ``help forum``, ``kernel source``), whose nouns name one thing together and whose senses in
    it are rarely their most frequent ones."""
    return pos == "n" and any(0 <= k < len(tokens) and entries[k] is not None and list(entries[k]["synonyms"]) == ["n"]
                              for k in (index - 1, index + 1))


def in_wordnet_phrase(tokens: Sequence[str], index: int, entries: Sequence[dict | None]) -> bool:
    """Whether ``tokens[index]`` and its neighbours spell one of its WordNet multiword lemmas (its record's
    ``phrases``: compounds, phrasal verbs, idioms such as ``hard drive``, ``no matter``, ``high jump``, ``find
    out``), each token as written or as one of its dictionary lemmas (``hard drives``, ``made way``)."""
    def forms(k):
        entry = entries[k]
        return (tokens[k].lower(), *(entry["forms"] if entry is not None else ()))

    own = forms(index)
    for phrase in entries[index]["phrases"]:
        for j, part in enumerate(phrase):
            start = index - j
            if part not in own or start < 0 or start + len(phrase) > len(tokens):
                continue
            if all(phrase[m] in forms(start + m) for m in range(len(phrase)) if m != j):
                return True
    return False


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


def context_choice(tokens: Sequence[str], index: int, entry: dict, entries: Sequence[dict | None] = ()) -> str | None:
    """The replacement of ``tokens[index]`` in its context (cased like the word), or None when it is no target;
    ``entries``: the records of the turn's words (:func:`in_phrase`)."""
    word = tokens[index]
    if not entry["content"] or is_name_like(tokens, index):
        return None
    pos = context_pos(tokens, index, entry)
    if pos is None or in_phrase(tokens, index, pos, entries):
        return None
    synonym = reading_choice(tokens, index, entry, pos, entries)[0]
    return match_case(word, synonym) if synonym is not None else None


def complement_of(tokens: Sequence[str], index: int, entries: Sequence[dict | None] = ()) -> str | None:
    """The complement of :data:`COMPLEMENT_FRAMES` that the token after ``tokens[index]`` opens, or None."""
    if index + 1 >= len(tokens):
        return None
    following = tokens[index + 1].lower()
    if following == "to":
        return "to"
    if following in OBJECT_PRONOUNS:
        return "somebody"
    if following in THING_OBJECTS:
        return "something"
    entry = entries[index + 1] if len(entries) > index + 1 else None
    if following.endswith("ing") and entry is not None and entry["forms"]:  # an inflected -ing form: a verb's
        return "ing"
    return None


def reading_choice(tokens: Sequence[str], index: int, entry: dict, pos: str,
                   entries: Sequence[dict | None] = ()) -> tuple[str | None, bool]:
    """The synonym of ``tokens[index]`` read as ``pos`` and whether the reading has any suitable one, given the
    complement that follows a verb (:data:`COMPLEMENT_FRAMES`, :func:`complement_of`)."""
    complement = complement_of(tokens, index, entries) if pos == "v" else None
    if complement is not None:
        synonym, found = entry["complements"].get(pos, {}).get(complement, (None, False))
        return synonym, found
    return entry["synonyms"].get(pos), pos in entry["substitutable"]


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


def is_counted(tokens: Sequence[str], index: int, entry: dict, entries: Sequence[dict | None] = ()) -> bool:
    """Whether a word counts in the ratio's denominator: a content word, not a likely name, whose reading in this
    context has a synonym in WordNet (seen in training or not: a word no synonym could ever replace is not counted)."""
    if not entry["content"] or is_name_like(tokens, index):
        return False
    pos = context_pos(tokens, index, entry)
    return (pos is not None and reading_choice(tokens, index, entry, pos, entries)[1]
            and not in_phrase(tokens, index, pos, entries))
