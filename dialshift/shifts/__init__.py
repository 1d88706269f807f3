"""Pure, seeded transformations that turn source instances into shifted ones.

``words``: tokenisation and word predicates; ``replace``: Unknown/Known Word replacement (WordNet synonym rules,
target selectors by ratio or by importance bucket); ``context``: Insufficient Context deletion and source-length
filtering; ``ranking``: response-ranking instances with seeded negatives; ``dailydialog``: the DailyDialog pipeline
that precomputes tables once and applies the shifts config by config; ``seeding``: per-instance RNGs.
"""
