"""Models the trainers and evaluators use: offline backbone resolution and the cross-encoder response ranker.

* :mod:`dialshift.models.backbones` — resolve ``--model`` (default MiniLM shipped offline, ``tiny`` for tests, any path
  or Hub id) into a tokenizer and a freshly initialised ranker.
* :mod:`dialshift.models.ranker` — the ranker's input encoding, saving and loading of self-describing ranker folders.
* :mod:`dialshift.models.uncertainty` — temperature fitting and the vanilla / dropout / ensemble / temperature
  predictive distributions.
* :mod:`dialshift.models.importance` — attention-based word importance (Lee et al. App. A.5).
* :mod:`dialshift.models.open_world` — the open-world decision methods on a closed-world intent classifier;
  :mod:`dialshift.models.intent_encoder` — that classifier's logits and features;
  :mod:`dialshift.models.open_world_data` — an open-world config's splits and open-domain outlier utterances.
"""
