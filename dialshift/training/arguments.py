"""What every trainer of ``trainers/`` shares on its command line: the argument types (:mod:`dialshift.arguments`)
and the ``--output-dir`` ownership check: :func:`check_output_dir` refuses an ``--output-dir`` that is an input of
the run or holds files a trainer did not write.
"""

from pathlib import Path

from dialshift.arguments import (  # noqa: F401  (the trainers' argument types, one import)
    device,
    non_negative_float,
    non_negative_int,
    positive_float,
    positive_int,
    probability,
    seed,
)

#: Marks a folder a trainer writes into (a model folder, a run folder): a later run may write there again.
OUTPUT_MARKER = ".dialshift-output"


def _ownership(inputs, writes, legacy, flag) -> dict:
    from dialshift.models.metadata import CHECKPOINTS, MODEL_FILE

    return {"flag": flag, "writes": writes,
            "inputs": [path for path in inputs
                       if isinstance(path, Path) or (path and Path(path).expanduser().exists())],
            "legacy": (MODEL_FILE, CHECKPOINTS, *legacy)}


def check_output_dir(output_dir, inputs=(), writes=None, legacy=(), flag="--output-dir") -> Path:
    """Refuse an ``--output-dir`` that is or contains one of ``inputs`` (``--model``, ``--dataset``: fine-tuning a
    model into its own folder replaces it) or holds files no trainer wrote (a ``config.json`` or
    ``model.safetensors`` of someone else's), with one line; return its absolute path. Fine: a new or empty
    folder, one a trainer wrote (:data:`OUTPUT_MARKER`, or a model folder from before markers existed: ``legacy``
    adds names), or with ``writes`` a folder holding none of those names (:func:`dialshift.io.check_owned_folder`).
    An input given as a string that names no existing path (a Hub model id) is skipped; a ``Path`` is always checked.
    ``flag``: the option named in the error (a trainer's ``--predictions`` folder follows the same rule).
    """
    from dialshift.io import check_owned_folder

    return check_owned_folder(output_dir, OUTPUT_MARKER, **_ownership(inputs, writes, legacy, flag))


def claim_output_dir(output_dir, trainer: str, inputs=(), writes=None, legacy=(), flag="--output-dir") -> Path:
    """:func:`check_output_dir`, then create the folder and mark it as ``trainer``'s."""
    from dialshift.io import claim_owned_folder

    return claim_owned_folder(output_dir, OUTPUT_MARKER, f"written by {trainer}; it may write here again",
                              **_ownership(inputs, writes, legacy, flag))
