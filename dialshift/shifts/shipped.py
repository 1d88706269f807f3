"""The shift plug-ins shipped with dialshift (``pyproject.toml`` advertises them in the ``dialshift.shifts`` group).

Each declares the parameters of its shift's parameters dataclass that a user sets from the command line (defaults
are the dataclass's; ``tests/test_shift_plugins.py`` checks they agree). A word shift's parameters are
:data:`UW_PARAMETERS` (KW adds its own): a new UW parameter is one more :class:`Parameter` there.
"""

from dialshift.shifts.context import IC_SELECTIONS
from dialshift.shifts.distraction import POSITIONS
from dialshift.shifts.plugins import Parameter, ShiftPlugin
from dialshift.shifts.replace import BASES, KW_MIN_COUNT, KW_RULES, MODES, ROUNDING, UNSEEN

#: The word rules every word shift takes (:class:`dialshift.shifts.replace.WordRules`).
WORD_RULE_PARAMETERS = (
    Parameter("content_words", bool, "only content words are targets (no stop word, contraction piece or name)",
              default=False),
    Parameter("senses", int, "synonyms from the word's N most frequent senses of its likely part of speech "
                             "(0: every sense, the paper's rule)", default=0, minimum=0),
    Parameter("inflect", bool, "a synonym takes the replaced word's inflection", default=False),
    Parameter("mode", str, "paper: Lee et al.'s rules with the options above (the published configs); meaning: a "
                           "meaning-keeping mode for your own corpus (content words only, the part of speech from "
                           "the context, the most common synonym of a clear most frequent sense, inflected; the "
                           "ratio over content words)", default="paper", choices=MODES),
    Parameter("unseen", str, "mode=meaning only: the synonym must be unseen in --train (required), is the most common "
                             "unseen one when it is half as common as the most common (unset: preferred), or is the "
                             "most common one (optional)", default=None, choices=UNSEEN),
)
#: Unknown Word's parameters (:class:`dialshift.shifts.lexical.RatioParams`).
UW_PARAMETERS = (
    Parameter("ratio", float, "share of the context's tokens replaced", minimum=0, maximum=1, open_minimum=True,
              open_maximum=True),
    Parameter("rounding", str, "how ratio x base becomes a count of target words (unset: floor, the paper's; ceil "
                               "in mode=meaning)", default=None, choices=tuple(ROUNDING)),
    Parameter("base", str, "what the ratio counts in mode=paper (tokens: the build's rule)", default="tokens",
              choices=BASES),
    *WORD_RULE_PARAMETERS,
    Parameter("fit", str, "mode=meaning only: the encoder that checks each synonym in its context (unset: minilm, "
                          "all-MiniLM-L6-v2 of the [train] extra), a folder holding a transformers encoder, or none "
                          "(no check)", default=None),
    Parameter("fit_min", float, "with fit: a synonym whose fit in its context (a cosine similarity) is under this is "
                                "no target and its word is not counted (unset: 0.25)", default=None, minimum=-1,
              maximum=1),
    Parameter("fit_prefer", float, "with fit: targets are drawn first among words of a clear sense whose synonym "
                                   "fits at least this well (unset: 0.8)", default=None, minimum=-1, maximum=1),
)
#: Known Word's parameters (:class:`dialshift.shifts.lexical.KnownParams`): UW's and the replacement rule.
KW_PARAMETERS = (
    *UW_PARAMETERS,
    Parameter("rule", str, "which known word replaces a target", default="random", choices=KW_RULES),
    Parameter("min_count", int, "a known word occurs more than this many times in --train", default=KW_MIN_COUNT,
              minimum=0),
)


def _training_texts(train):
    from dialshift.custom import training_texts

    return training_texts(train)


class UnknownWordPlugin(ShiftPlugin):
    name = "uw"
    description = "Unknown Word: replace words by WordNet synonyms unseen in --train (Lee et al. 2022)"
    resource = "vocabulary: its contexts and gold responses are the known words"
    parameters = UW_PARAMETERS
    #: The shift class (in :mod:`dialshift.shifts`) and its parameters class (in :mod:`dialshift.shifts.lexical`),
    #: named so that listing the plug-ins imports neither.
    shift_class_name, params_class_name = "UnknownWord", "RatioParams"

    @property
    def params_class(self):
        from dialshift.shifts import lexical

        return getattr(lexical, self.params_class_name)

    def make(self, parameters, train):
        import dialshift.shifts

        return getattr(dialshift.shifts, self.shift_class_name).for_corpus(_training_texts(train), **parameters)


class KnownWordPlugin(UnknownWordPlugin):
    name = "kw"
    description = "Known Word: UW's target words replaced by frequent --train words (the control of UW)"
    parameters = KW_PARAMETERS
    shift_class_name, params_class_name = "KnownWord", "KnownParams"


class InsufficientContextPlugin(ShiftPlugin):
    name = "ic"
    description = "Insufficient Context: keep the last WINDOW turns, delete the oldest DELETED of them"
    parameters = (
        Parameter("deleted", int, "turns deleted from the start of the window (less than window)", minimum=0),
        Parameter("window", int, "turns kept before deleting (shorter contexts are left out)", default=6, minimum=1),
        Parameter("selection", str, "contexts of at least / exactly WINDOW turns", default="at_least",
                  choices=IC_SELECTIONS),
    )

    @property
    def params_class(self):
        from dialshift.shifts.context import InsufficientContextParams

        return InsufficientContextParams

    def make(self, parameters, train):
        from dialshift.shifts import InsufficientContext

        return InsufficientContext(**parameters)


class SourceLengthPlugin(ShiftPlugin):
    name = "sr"
    description = "source-length selection: the contexts of exactly TURNS turns, unchanged (the control of IC)"
    parameters = (Parameter("turns", int, "the context length selected", minimum=1),)

    @property
    def params_class(self):
        from dialshift.shifts.context import SourceLengthParams

        return SourceLengthParams

    def make(self, parameters, train):
        from dialshift.shifts import SourceLength

        return SourceLength(**parameters)


class DistractingInsertionPlugin(ShiftPlugin):
    name = "distract"
    description = "Distracting insertion: utterances of other --train dialogues inserted into the History"
    resource = "pool: its contexts' turns are the distracting utterances"
    parameters = (
        Parameter("count", int, "distractions drawn per dialogue", default=2, minimum=1),
        Parameter("probability", float, "each distraction is kept with this probability", default=1.0, minimum=0,
                  maximum=1, open_minimum=True),
        Parameter("position", str, "where the distractions go in the History", default="random",
                  choices=POSITIONS),
        Parameter("min_history", int, "dialogues with fewer History turns are left out", default=1, minimum=1),
    )

    @property
    def params_class(self):
        from dialshift.shifts.distraction import DistractingInsertionParams

        return DistractingInsertionParams

    def make(self, parameters, train):
        from dialshift.shifts import DistractingInsertion, DistractionPool

        return DistractingInsertion(pool=DistractionPool((row["id"], row["context"]) for row in train), **parameters)
