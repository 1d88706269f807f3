"""Training scripts (``accelerate launch trainers/<name>.py``), importable as ``trainers.<name>`` by tests."""
