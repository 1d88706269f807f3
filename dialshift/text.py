"""The lower-cased word tokenizer shared by the distracting-insertion shift (:mod:`dialshift.shifts.distraction`,
which compares and counts utterances by it) and the seq2seq models' word vocabulary (:mod:`dialshift.models.seq2seq`).
"""

import re

_TOKEN = re.compile(r"[a-z0-9]+(?:'[a-z]+)?|[^\sa-z0-9]")


def tokenize(text: str) -> list[str]:
    """Lower-cased word and punctuation tokens (``"Can't stop!"`` -> ``["can't", "stop", "!"]``)."""
    return _TOKEN.findall(text.lower().replace("\u2019", "'"))
