"""The settings of ``dialshift evaluate`` (:class:`EvaluationSettings`) and the scoring options every evaluation path
(ranking, attention, open-world intents) checks and passes on in the same way."""

from dataclasses import dataclass, field
from pathlib import Path

from dialshift.errors import DialshiftError
from dialshift.models.adapters import AdapterOptions

#: Pairs per forward pass by device type: on a CPU small length-sorted batches pad less and stay in cache
#: (benchmarks/ranker.py --compare-cpu-paths measures it), a GPU wants large ones.
DEFAULT_BATCH_SIZE = {"cpu": 16, "cuda": 64}

@dataclass
class EvaluationSettings:
    model_dirs: list
    methods: list
    dataset: Path
    patterns: list
    out_dir: Path
    split: str = "test"
    max_instances: int | None = None
    sample_seed: int = 0
    batch_size: int | None = None  # None: DEFAULT_BATCH_SIZE of the device type
    dropout_passes: int = 5
    dropout_seed: int = 0
    ece_bins: int | None = None  # None: the task's default (15, as Lee et al.'s report script)
    replicates: int = 1000
    bootstrap_seed: int = 0
    device: str | None = None
    precision: str = "auto"  # fp32 | tf32 | bf16; auto: bf16 weights on CUDA, fp32 on CPU (dialshift.models.ranker)
    attn: str = "auto"  # eager | sdpa; auto: the library's default
    progress: bool = True
    plots: bool = True
    attention: bool = False  # --attention: per-utterance attention on attention_distribution configs (DAS ratio)
    model_type: str = "auto"  # ranker | cross-encoder | bi-encoder | causal-lm | classifier; auto: from the folder
    adapter: AdapterOptions = field(default_factory=AdapterOptions)
    extra: dict = field(default_factory=dict)


def check_scoring_options(settings: EvaluationSettings) -> None:
    """The scoring options of ``settings`` checked before any model is loaded (not after every pass is scored):
    ``--ece-bins`` by the task's rule, ``--bootstrap`` at most :data:`dialshift.arguments.MAX_REPLICATES`."""
    from dialshift.arguments import MAX_REPLICATES
    from dialshift.scoring.tasks import check_option

    if settings.ece_bins is not None:
        check_option("ece_bins", settings.ece_bins, "--ece-bins")
    if isinstance(settings.replicates, bool) or not isinstance(settings.replicates, int) \
            or not 1 <= settings.replicates <= MAX_REPLICATES:
        raise DialshiftError(f"--bootstrap = {settings.replicates!r}: must be an integer from 1 to {MAX_REPLICATES:,}")


def scoring_settings(settings: EvaluationSettings):
    from dialshift.scoring import ScoringSettings

    return ScoringSettings(settings.dataset, split=settings.split, replicates=settings.replicates,
                           seed=settings.bootstrap_seed,
                           options={} if settings.ece_bins is None else {"ece_bins": settings.ece_bins},
                           max_instances=settings.max_instances, sample_seed=settings.sample_seed)
