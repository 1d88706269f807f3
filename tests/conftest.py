"""Shared test set-up: offline Hugging Face caches per session, a headless matplotlib, the raw-data fixture."""

import os
import tempfile
from pathlib import Path

import pytest

_SESSION_HOME = tempfile.mkdtemp(prefix="dialshift-tests-hf-")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ["HF_HOME"] = _SESSION_HOME
os.environ.setdefault("MPLBACKEND", "Agg")

REPO_ROOT = Path(__file__).resolve().parent.parent
SHARED_DATA = REPO_ROOT.parent / "shared" / "data"


@pytest.fixture(scope="session")
def raw_data_dir() -> Path:
    """The real raw corpora (``$DIALSHIFT_DATA_DIR`` or ``../shared/data``); skips the test when absent."""
    path = Path(os.environ.get("DIALSHIFT_DATA_DIR", SHARED_DATA))
    if not path.is_dir():
        pytest.skip(f"raw data not found at {path}")
    return path
