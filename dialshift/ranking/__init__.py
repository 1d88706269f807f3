"""Evaluation of response rankers across the DailyDialog shift configs (``dialshift evaluate``).

* :mod:`dialshift.ranking.data` — read configs of a Hub dataset folder, expand patterns, seeded subsampling;
* :mod:`dialshift.ranking.inference` — rankers run over (context, candidate) pairs: batched, length-sorted, once each;
* :mod:`dialshift.ranking.evaluation` — the pipeline: predictions JSONL, ``results.json``, ``results.md``, plots.
"""
