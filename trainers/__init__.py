"""Training scripts (``accelerate launch trainers/<name>.py``), installed as ``dialshift_trainers``
(``python -m dialshift_trainers.<name>``); importable as ``trainers.<name>`` by the tests of a checkout."""
