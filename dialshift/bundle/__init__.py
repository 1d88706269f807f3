"""The GPU bundle: what a bare remote GPU machine needs to run a paper's full protocol, in under 60 MiB.

A lent remote machine runs each command for at most 10 minutes, carries at most 64 MiB of files to it, starts
bare with torch, transformers, accelerate, pyarrow and scikit-learn, and brings back at most 8 files of 16 MB.
``dialshift bundle create --paper {lee,han,xing}`` assembles, from a built dataset folder (:mod:`.create`)::

    BUNDLE/bundle.json        manifest: paper, protocol, steps (with their cost estimates), sizes, dataset revision
    BUNDLE/run.sh             the runner: `bash BUNDLE/run.sh STEP [--out DIR]`
    BUNDLE/backbone/          a transformer protocol's backbone in fp16 (upcast to fp32 on arrival), config, tokenizer
    BUNDLE/data/              the configs the protocol trains and tests on
    BUNDLE/trainers/          the paper's trainer scripts (trainers/, installed as dialshift_trainers)
    BUNDLE/wheels/            wheels of what the remote lacks and of dialshift itself

``run.sh`` installs the wheels (``pip install --no-deps --no-index --target``, once per bundle) into a work folder
outside the bundle (``$DIALSHIFT_WORK``, default ``/tmp/dialshift-gpu-work``, which outlives a call while the machine
stays warm), puts it and the bundle first on ``PYTHONPATH`` and runs ``dialshift bundle run BUNDLE STEP`` from the
work folder, so nothing but the bundle's own code is imported. A step writes only small arrays (compressed ``.npz``:
logits, scores or attention scores, never weights) and a JSON description into ``--out`` (default ``$OUT``);
:mod:`dialshift.returned` checks them and ``dialshift bundle report`` computes the paper's tables from them here.

One module per paper holds its steps (:mod:`.steps` says what each provides): :mod:`.lee` (Lee et al. 2022),
:mod:`.han` (Han et al. 2021), :mod:`.xing` (Xing & Gulla 2022), each with its report module; :mod:`.ledger` renders
the ledger of the steps run (``docs/full_scale.md``) from the committed returned files.
"""

from dialshift.bundle.create import create_bundle
from dialshift.bundle.lee import H100, Protocol
from dialshift.bundle.manifest import (
                                       BUNDLE_FILE,
                                       DEFAULT_WORK,
                                       LIMIT_BYTES,
                                       WEIGHTS_FILE,
                                       content_id,
                                       read_manifest,
                                       upcast_backbone,
)
from dialshift.bundle.steps import plan, report, run_step

__all__ = ["BUNDLE_FILE", "DEFAULT_WORK", "H100", "LIMIT_BYTES", "WEIGHTS_FILE", "Protocol", "content_id",
           "create_bundle", "plan", "read_manifest", "report", "run_step", "upcast_backbone"]
