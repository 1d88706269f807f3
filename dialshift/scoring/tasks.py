"""The scoring tasks: how each task's predictions are read, joined with gold, reduced and scored.

A task turns a chunk of prediction lines plus the matching gold rows into compact *per-instance statistics*
(:meth:`ScoringTask.instance_stats`), and computes its metric set from those statistics with optional integer
bootstrap weights (:meth:`ScoringTask.metrics`; ``weights[i]`` = how many times instance ``i`` is drawn). Nothing
larger than the statistics is kept, so a 1e7 x 10 predictions file is scored in bounded memory, and the paired
bootstrap of :mod:`dialshift.scoring.bootstrap` only re-weights them. Each task's metrics are those of the numpy core
:mod:`dialshift.metrics` (the statistics come from the core's own rank, top-label and binning rules, and
``tests/test_scoring.py`` checks every task against the core's public functions).

A task also owns its metrics' metadata (:attr:`ScoringTask.metric_info`: label, direction, range, as torchmetrics'
``higher_is_better``) and its headline metrics; reports, plots, the leaderboard's sorting and the Hub export read them.
A new task subclasses :class:`ScoringTask`, sets its class attributes and is advertised through the ``dialshift.tasks``
entry-point group under its name, as the tasks below are in ``pyproject.toml``; :func:`installed_tasks` finds them. A
:class:`~dialshift.configs.BenchmarkConfig` names its task by :attr:`ScoringTask.name`.
"""

import re
import warnings
from dataclasses import dataclass

import numpy as np

from dialshift.configs import BenchmarkConfig
from dialshift.errors import DialshiftError


def _pa():
    import pyarrow as pa

    return pa


@dataclass(frozen=True)
class MetricInfo:
    """What a metric is: ``label`` (a format string: ``{0}``.. are the groups of the pattern it was found under, and
    the task options are named, e.g. ``"R@{0}/{candidates}"``), ``higher_is_better`` (None: a descriptive quantity,
    neither, never ranked) and ``range`` (``(low, high)``, None for an unbounded side)."""

    label: str
    higher_is_better: bool | None
    range: tuple = (0.0, 1.0)

    @property
    def direction(self) -> str:
        return {True: "higher is better", False: "lower is better"}.get(self.higher_is_better, "")

    @property
    def arrow(self) -> str:
        return {True: "↑", False: "↓"}.get(self.higher_is_better, "")


class ScoringTask:
    """Base class of a scoring task; see the module docstring. Subclasses set:

    * ``name``: the task name a config's ``task`` field gives;
    * ``fields``: ``{prediction field: pyarrow type}`` read from each prediction line besides ``id``;
    * ``gold_columns``: the dataset columns joined by ``id`` (string columns arrive dictionary-encoded);
    * ``defaults``: metric options and their defaults (a config's ``parameters`` of the same name override them,
      and ``dialshift score --option NAME=VALUE`` overrides both);
    * ``description``: a sentence for ``results.md`` stating the prediction format and the metric definitions;
    * ``inputs`` / ``outputs``: one line each for ``dialshift score --help``'s table (prediction fields; metrics);
    * ``metric_info``: ``{metric name pattern (a regular expression, matched whole, first match wins): MetricInfo}``;
    * ``hub_task_type``: the Hub task type of its model-index entries (https://huggingface.co/tasks);
    * ``strata``: the gold columns (types or classes) the ``lite`` split is stratified by (:mod:`dialshift.lite`).
    """

    name: str = ""
    fields: dict = {}
    gold_columns: tuple = ()
    defaults: dict = {}
    description: str = ""
    inputs: str = ""
    outputs: str = ""
    metric_info: dict = {}
    hub_task_type: str = "text-classification"
    strata: tuple = ()

    def check_instance(self, row: dict) -> tuple[str, str] | None:
        """``(field, problem)`` when the gold row ``row`` cannot be scored by this task, else None (checked before a
        config is written: ``dialshift shift``, :func:`dialshift.custom.write_custom_folder`). The base class wants
        every gold column present and not null; subclasses add their own checks."""
        from dialshift.scoring.gold import LENGTH

        for column in self.gold_columns:
            if LENGTH.fullmatch(column):  # the length of a list column, checked by the task
                continue
            if row.get(column) is None:
                return column, "missing or null (a gold column of the task)"
        return None

    def info(self, metric: str, options: dict | None = None) -> MetricInfo:
        """The metadata of ``metric``, its label formatted with the options; an undeclared metric gets its name as
        label and no direction (it is shown, never ranked)."""
        for pattern, info in self.metric_info.items():
            match = re.fullmatch(pattern, metric)
            if match:
                label = info.label.format(*match.groups(), **{"candidates": "K", **(options or {})})
                return MetricInfo(label, info.higher_is_better, info.range)
        return MetricInfo(metric, None, (None, None))

    def label(self, metric: str, options: dict | None = None) -> str:
        return self.info(metric, options).label

    # --- options -------------------------------------------------------------------------------------------------

    def resolve_options(self, config: BenchmarkConfig, given: dict | None = None) -> dict:
        """The config's metric options: the task defaults, the config's parameters, then ``given`` (``--option``).

        A name no registered task knows (a typo such as ``ece_bin``) and a value outside its option's range
        (:data:`OPTION_RULES`) are refused with one line; names another task knows are left to that task.
        """
        given = dict(given or {})
        known = sorted({name for task in installed_tasks().values() for name in task.defaults})
        unknown = [name for name in given if name not in known]
        if unknown:
            raise DialshiftError(f"--option {unknown[0]!r}: no scoring task has this option; the options are "
                                 f"{', '.join(known)}")
        options = dict(self.defaults)
        options.update({key: value for key, value in config.parameters.items() if key in self.defaults})
        options.update({key: value for key, value in given.items() if key in self.defaults})
        for name in self.defaults:
            origin = f"--option {name}" if name in given else f"config {config.name!r} parameter {name!r}"
            options[name] = check_option(name, options[name], origin)
        return options

    def schema(self):
        pa = _pa()
        return pa.schema([("id", pa.string()), *self.fields.items()])

    # --- per chunk -----------------------------------------------------------------------------------------------

    def instance_stats(self, table, gold: dict, options: dict) -> dict:
        """Per-instance statistics (``{name: array of len(table)}``) of a chunk ``table`` of prediction lines and
        the gold ``{column: pyarrow array}`` rows aligned with it. ``options`` may be completed (e.g. with the
        candidate count found). Raise ``ValueError`` (naming ``field[row]``) for bad predictions."""
        raise NotImplementedError

    # --- metrics -------------------------------------------------------------------------------------------------

    #: Whether :meth:`metrics` accepts a 2-D ``weights`` matrix (one bootstrap replicate per row) and returns one
    #: array of replicate values per metric: the bootstrap then scores a block of replicates in one call.
    batched: bool = False

    def metrics(self, stats: dict, options: dict, weights=None) -> dict:
        """``{metric: value}`` from the statistics, each instance counted ``weights[i]`` times (once if None); for a
        :attr:`batched` task, ``weights`` may be ``R x N`` and each value an array of ``R``."""
        raise NotImplementedError

    def headline(self, options: dict) -> tuple:
        """The metrics shown in tables and drawn as curves, in order."""
        raise NotImplementedError

    def calibration_test(self, stats: dict, options: dict, replicates: int = 1000, seed: int = 0,
                         bandwidth=None) -> dict | None:
        """The p-value of "the model is calibrated" (:func:`dialshift.metrics.calibration_test.consistency_test`) for
        tasks with calibrated probabilities, with the biases at calibration of the calibration metrics
        (``bandwidth``: the point estimate's smooth-ECE bandwidth, found again if None); None otherwise."""
        return None

    def reliability(self, stats: dict, options: dict) -> dict | None:
        """Reliability-diagram bins (``bin_edges``, ``bin_counts``, ``bin_confidence``, ``bin_accuracy``, ``ece``)
        for tasks with calibrated probabilities; None otherwise."""
        return None


# ----------------------------------------------------------------------------------------------- validation

#: The largest ECE bin count accepted (a reliability diagram with more bins than instances says nothing).
MAX_BINS = 10_000
#: The largest magnitude accepted for a score or an attention value: far from float64's 1.8e308, so sums and means
#: of a dialogue's values cannot overflow to inf (equal 1e308 scores would average to inf and divide to 0 or NaN).
MAX_MAGNITUDE = 1e100


def _integer(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _check_ks(value):
    values = [value] if _integer(value) else value
    if not isinstance(values, (list, tuple)) or not values or not all(_integer(k) and 1 <= k <= 10_000
                                                                      for k in values):
        raise ValueError("must be a positive integer or a list of them, e.g. [1, 2, 5]")
    return tuple(sorted(set(values)))


def _bounded_int(low, high):
    def check(value):
        if not _integer(value) or not low <= value <= high:
            raise ValueError(f"must be an integer from {low} to {high:,}")
        return value
    return check


def _optional_int(low):
    def check(value):
        if value is not None and (not _integer(value) or value < low):
            raise ValueError(f"must be an integer of at least {low}")
        return value
    return check


def _level(value):
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < 1:
        raise ValueError("must be a number strictly between 0 and 1, e.g. 0.95")
    return float(value)


def _flag(value):
    if not isinstance(value, bool):
        raise ValueError("must be true or false")
    return value


#: ``{option: check}``: each check returns the value (normalised) or raises ``ValueError`` stating the rule.
def _tolerance(value) -> float:
    """A probability-sum tolerance: a number in [0, 0.1]."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 0.1:
        raise ValueError("expected a number from 0 to 0.1 (e.g. 0.005 for probabilities rounded to 3 decimals)")
    return float(value)


def probabilities_of(table, scores, options: dict) -> np.ndarray:
    """The ``probabilities`` of a block, or softmax(``scores``) when no line gives probabilities (stated in the
    options as ``probabilities: softmax(scores)``); with ``sum_tolerance`` above the default, rows summing to 1
    within it are renormalised (stated as ``renormalised``)."""
    from dialshift.metrics._checks import SUM_TOLERANCE, check_probabilities

    probabilities = _matrix(table, "probabilities", required=False)
    if probabilities is None:
        if scores is None:
            raise ValueError("probabilities[0] is missing (give `probabilities`, or `scores` to apply softmax to)")
        from scipy.special import softmax

        if options.setdefault("probabilities", "softmax(scores)") != "softmax(scores)":
            raise ValueError("this block gives only scores but earlier lines gave probabilities")
        return softmax(scores, axis=1)
    if options.setdefault("probabilities", "given") != "given":
        raise ValueError("this block gives probabilities but earlier lines gave only scores")
    tolerance = float(options.get("sum_tolerance", SUM_TOLERANCE))
    if tolerance > SUM_TOLERANCE:
        check_probabilities(probabilities, "probabilities", tolerance=tolerance)
        options["renormalised"] = f"rows summing to 1 within {tolerance:g} divided by their sum"
        probabilities = probabilities / probabilities.sum(axis=1, keepdims=True)
    return probabilities


OPTION_RULES = {
    "ece_bins": _bounded_int(1, MAX_BINS),
    "ks": _check_ks,
    "tpr_level": _level,
    "oos_label": _optional_int(0),
    "num_labels": _optional_int(2),
    "includes_query": _flag,
    "skip_undefined": _flag,
    "sum_tolerance": _tolerance,
}


def check_option(name: str, value, origin: str):
    """``value`` checked against :data:`OPTION_RULES` (unchanged for an option without a rule); one-line error."""
    rule = OPTION_RULES.get(name)
    if rule is None:
        return value
    try:
        return rule(value)
    except ValueError as error:
        from dialshift.scoring.jsonl import clip

        raise DialshiftError(f"{origin} = {clip(value, 40)}: {error}") from None


def _bad_value(value: float, field: str, bound: float = MAX_MAGNITUDE) -> ValueError:
    what = "a value too large" if np.isfinite(value) else "NaN or inf"
    return ValueError(f"{field} holds {what} (every value must be a finite number of magnitude at most {bound:g})")


def _check_finite(values, field: str, bound: float = MAX_MAGNITUDE) -> None:
    """Refuse NaN, inf and magnitudes over ``bound`` in a vector or ``N x K`` matrix, naming ``field[row]``."""
    values = np.asarray(values, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        bad = ~(np.abs(values) <= bound)
    if bad.any():
        row, *column = np.argwhere(bad)[0]
        raise _bad_value(values[row][tuple(column)] if column else values[row], f"{field}[{row}]", bound)


def _check_finite_lists(column, field: str) -> None:
    """:func:`_check_finite` for a list column of varying lengths (``field[row]`` names the line)."""
    import pyarrow.compute as pc

    values = column.flatten().to_numpy(zero_copy_only=False).astype(np.float64)
    with np.errstate(invalid="ignore"):
        bad = np.flatnonzero(~(np.abs(values) <= MAX_MAGNITUDE))
    if len(bad):
        row = int(pc.list_parent_indices(column).to_numpy()[bad[0]])
        raise _bad_value(values[bad[0]], f"{field}[{row}]")


def _candidate_counts(gold: dict, n: int, default: int | None = None):
    """Each instance's candidate count: the gold ``candidates`` lengths, else ``default`` (None: unknown)."""
    if CANDIDATE_COUNT in gold:
        return gold[CANDIDATE_COUNT].to_numpy(zero_copy_only=False)
    return None if default is None else np.full(n, default)


def _check_widths(width: int, gold: dict, field: str, default: int | None = None) -> None:
    """Refuse a prediction vector whose length is not the instance's candidate count (the gold ``candidates``)."""
    counts = _candidate_counts(gold, 1, default)
    if counts is None:
        return
    bad = np.flatnonzero(counts != width)
    if len(bad):
        row = int(bad[0])
        raise ValueError(f"{field}[{row}] has {width} values but the instance has {int(counts[row])} candidates in "
                         "the dataset (one value per candidate, in the dataset's order)")


#: The gold column holding each instance's candidate count (the length of its ``candidates`` list), when the
#: config's files have a ``candidates`` column (see :func:`dialshift.scoring.gold.load_gold`).
CANDIDATE_COUNT = "len(candidates)"
#: The response count of a pairwise instance whose files carry no ``candidates`` lists.
PAIR = 2


def _label_problem(row: dict, count: int | None) -> tuple[str, str] | None:
    """A gold ``label`` that is not a whole number in ``0 .. count - 1`` (``count`` None: any index >= 0)."""
    label = row.get("label")
    if isinstance(label, bool) or not isinstance(label, int):
        return "label", f"{label!r} is not a whole number (the index of the gold answer)"
    if label < 0 or (count is not None and label >= count):
        within = f"0 .. {count - 1}" if count is not None else "0 or more"
        return "label", f"{label} is not an index of the {count} candidates ({within})" if count is not None \
            else f"{label} is not {within}"
    return None


def _candidates_problem(row: dict, exactly: int | None = None) -> tuple[str, str] | None:
    """``candidates`` (when the row has them) not a list of at least two non-empty strings (``exactly`` of them)."""
    if "candidates" not in row:
        return None
    candidates = row["candidates"]
    if not isinstance(candidates, list) or len(candidates) < 2:
        return "candidates", f"{candidates!r} is not a list of at least two responses"
    if exactly is not None and len(candidates) != exactly:
        return "candidates", f"{len(candidates)} responses; the task takes {exactly}"
    for number, text in enumerate(candidates):
        if not isinstance(text, str) or not text.strip():
            return "candidates", f"response {number} is {text!r}, not a non-empty string"
    return None


def _check_perplexity_inputs(table) -> None:
    """``log_likelihood`` and ``tokens``: on every line or on none; log-likelihoods finite and <= 0, tokens >= 1."""
    present = [name for name in ("log_likelihood", "tokens") if name in table.column_names
               and table.column(name).null_count < table.num_rows]
    if not present:
        return
    for name in ("log_likelihood", "tokens"):
        column = table.column(name).combine_chunks()
        if column.null_count:
            row = int(np.flatnonzero(column.is_null().to_numpy(zero_copy_only=False))[0])
            raise ValueError(f"{name}[{row}] is missing (give log_likelihood and tokens on every line or on none)")
    log_likelihood = table.column("log_likelihood").to_numpy().astype(np.float64)
    tokens = table.column("tokens").to_numpy()
    _check_finite(log_likelihood, "log_likelihood")
    for name, bad, rule in (("log_likelihood", log_likelihood > 0, "a log-likelihood is at most 0"),
                            ("tokens", tokens < 1, "the response has at least 1 token")):
        if bad.any():
            row = int(np.flatnonzero(bad)[0])
            value = log_likelihood[row] if name == "log_likelihood" else tokens[row]
            raise ValueError(f"{name}[{row}] = {value} is out of range ({rule})")


# ----------------------------------------------------------------------------------------------- helpers


def _matrix(table, field: str, required: bool = True):
    """An ``N x K`` float64 matrix from a list column; None when every row is null and not ``required``."""
    import pyarrow.compute as pc

    column = table.column(field).combine_chunks()
    nulls = column.null_count
    if nulls == len(column) and not required:
        return None
    if nulls:
        row = int(np.flatnonzero(column.is_null().to_numpy(zero_copy_only=False))[0])
        raise ValueError(f"{field}[{row}] is missing (every line needs a {field!r} list)")
    lengths = pc.list_value_length(column).to_numpy()
    if len(lengths) and (lengths != lengths[0]).any():
        row = int(np.flatnonzero(lengths != lengths[0])[0])
        raise ValueError(f"{field}[{row}] has {lengths[row]} values but {field}[0] has {lengths[0]}")
    values = column.flatten()
    if values.null_count:
        raise ValueError(f"{field} holds a null value (every value must be a number)")
    width = int(lengths[0]) if len(lengths) else 0
    return values.to_numpy(zero_copy_only=False).astype(np.float64, copy=False).reshape(len(column), width)


def _vector(table, field: str, dtype=np.float64):
    column = table.column(field).combine_chunks()
    if column.null_count:
        row = int(np.flatnonzero(column.is_null().to_numpy(zero_copy_only=False))[0])
        raise ValueError(f"{field}[{row}] is missing")
    return column.to_numpy(zero_copy_only=False).astype(dtype, copy=False)


def _gold_ints(gold: dict, column: str) -> np.ndarray:
    array = gold[column]
    if array.null_count:
        raise ValueError(f"gold column {column!r} has a missing value")
    return array.to_numpy(zero_copy_only=False).astype(np.int64)


def _dictionary_codes(gold: dict, column: str):
    """``(codes, categories)`` of a dictionary-encoded gold string column."""
    array = gold[column]
    return array.indices.to_numpy(zero_copy_only=False).astype(np.int32), array.dictionary.to_pylist()


def _calibration_stats(probabilities, labels, n_bins: int) -> dict:
    """The core's per-instance top-label statistics (confidence, correct, bin) of a probability matrix."""
    from dialshift.metrics.calibration import top_label_stats

    return top_label_stats(probabilities, labels, n_bins)  # validates the probabilities and labels


#: The calibration metrics of a task with probabilities (all lower is better, in [0, 1]).
CALIBRATION_INFO = {"ece": MetricInfo("ECE", False), "smooth_ece": MetricInfo("smECE", False),
                    "debiased_l2": MetricInfo("L2-CE (debiased)", False)}


#: The auxiliary replicate quantity of the calibration metrics (``options["_auxiliary"]``): the debiased squared L2
#: error before clipping, on which the debiased L2 error's interval is computed (:mod:`dialshift.scoring.calibration`).
SQUARED_L2 = "debiased_l2^2"
#: The point estimate's smooth-ECE bandwidth (an auxiliary point quantity): its bootstrap replicates use it.
BANDWIDTH = "smooth_ece_bandwidth"


def _calibration_metrics(stats: dict, n_bins: int, weights=None, auxiliary: bool = False) -> dict:
    """The calibration metrics of a task's top-label statistics, from the core's weighted computes: binned ECE,
    smooth ECE and the debiased L2 calibration error (over ``n_bins`` equal-mass bins); with ``auxiliary`` also
    :data:`SQUARED_L2`."""
    from dialshift.metrics.calibration import ece_compute
    from dialshift.metrics.smooth_calibration import debiased_l2_compute, smooth_ece_compute

    squared = debiased_l2_compute(stats, n_bins, weights, squared=True)
    with np.errstate(invalid="ignore"):
        root = np.sqrt(np.maximum(squared, 0.0))  # debiased_l2_compute's own last step: the same value
    # replicates at the point estimate's bandwidth: stats["bandwidth"] where the scoring found it already
    if weights is None and auxiliary:
        smooth, bandwidth = smooth_ece_compute(stats, return_bandwidth=True)
    else:
        smooth, bandwidth = smooth_ece_compute(stats, weights, bandwidth=stats.get("bandwidth", "point")), None
    result = {"ece": ece_compute(stats, n_bins, weights), "smooth_ece": smooth,
              "debiased_l2": float(root) if np.ndim(root) == 0 else root}
    if auxiliary:
        result[SQUARED_L2] = squared
        if bandwidth is not None:
            result[BANDWIDTH] = bandwidth
    return result


def _calibration_test(stats: dict, options: dict, replicates: int, seed: int, bandwidth=None):
    """The consistency-resampling test of calibration (:mod:`dialshift.metrics.calibration_test`) of a task's
    top-label statistics, or None without them; ``bandwidth``: the point estimate's smooth-ECE bandwidth, if known."""
    from dialshift.metrics.calibration_test import consistency_test
    from dialshift.metrics.smooth_calibration import smooth_ece_null_mean

    if "confidence" not in stats:
        return None
    test = consistency_test(stats, int(options["ece_bins"]), replicates, seed)
    test["null_means"] = {"ece": test["null_mean"], "smooth_ece": smooth_ece_null_mean(stats, bandwidth)}
    return test


def _reliability(stats: dict, n_bins: int) -> dict:
    """Reliability-diagram bins of the core (an empty bin's means are None) and the ECE."""
    from dialshift.metrics.calibration import reliability_bins, top_label_state

    bins = reliability_bins(top_label_state(stats, n_bins), n_bins)
    for key in ("bin_confidence", "bin_accuracy"):
        bins[key] = [None if np.isnan(value) else value for value in bins[key]]
    from dialshift.metrics.calibration import ece_compute

    return {**bins, "ece": ece_compute(stats, n_bins)}


# ----------------------------------------------------------------------------------------------- the tasks


class ResponseRanking(ScoringTask):
    """Response ranking over K candidates (Lee et al. 2022): R@k/K and MRR of the gold candidate, Brier score, ECE."""

    name = "response_ranking"
    inputs = "id, probabilities (K values) and/or scores (K logits)"
    outputs = "R@k/K, MRR, Brier, ECE, smECE, L2-CE"
    hub_task_type = "text-ranking"
    metric_info = {
        r"recall@(\d+)": MetricInfo("R@{0}/{candidates}", True),
        "mrr": MetricInfo("MRR", True),
        "brier": MetricInfo("Brier", False, (0.0, 2.0)),
        **CALIBRATION_INFO,
    }
    gold_columns = ("label", CANDIDATE_COUNT)
    #: ``ece_bins`` 15: the defaults of ``uncertainty-calibration``'s ``get_ece`` (15 equal-width, right-closed,
    #: top-label bins), which the report script of Lee et al. called; ``ks``: the recall cut-offs (those <= K).
    defaults = {"ece_bins": 15, "ks": (1, 2, 5), "sum_tolerance": 1e-4}

    def check_instance(self, row):
        candidates = _candidates_problem(row)
        if candidates:
            return candidates
        count = len(row["candidates"]) if "candidates" in row else None
        return super().check_instance(row) or _label_problem(row, count)
    description = (
        "Predictions: one line per instance with `id`, `probabilities` (K values summing to 1 within "
        "{sum_tolerance:g}; above 1e-4 they are renormalised) and optionally `scores` (K logits; ranking uses them "
        "when present, else the probabilities); a file with `scores` only is scored with softmax(scores) as its "
        "probabilities (stated in results.json's options). R@k/K = share of instances "
        "whose gold candidate ranks in the top k of K (ties counted against the gold one); MRR = mean reciprocal "
        "rank; Brier = mean over instances of the sum over candidates of (p - onehot)^2 (range [0, 2]); "
        "ECE = top-label expected calibration error over {ece_bins} equal-width right-closed bins (the defaults of "
        "`uncertainty-calibration`'s `get_ece`, as used by Lee et al.) "
        "(the binned plug-in statistic, biased upward on finite samples: its interval allows for that bias, and "
        "docs/metrics.md measures its coverage of the true calibration error); smooth ECE = "
        "Blasiok and Nakkiran's kernel-smoothed ECE with automatic bandwidth (relplot's smECE); debiased L2 = Kumar "
        "et al.'s debiased L2 calibration error over {ece_bins} equal-mass bins (uncertainty-calibration's "
        "get_calibration_error(debias=True)), both top-label."
    )

    @property
    def fields(self):
        pa = _pa()
        return {"scores": pa.list_(pa.float64()), "probabilities": pa.list_(pa.float64())}

    def instance_stats(self, table, gold, options):
        from dialshift.metrics.calibration import brier_stats
        from dialshift.metrics.ranking import gold_rank_counts

        scores = _matrix(table, "scores", required=False)
        probabilities = probabilities_of(table, scores, options)
        labels = _gold_ints(gold, "label")
        width = probabilities.shape[1]
        _check_widths(width, gold, "probabilities")
        if options.setdefault("candidates", width) != width:
            raise ValueError(f"probabilities[0] has {width} values but earlier lines have {options['candidates']}")
        if scores is not None and scores.shape != probabilities.shape:
            raise ValueError(f"scores[0] has {scores.shape[1]} values but probabilities[0] has {width}")
        if scores is not None:
            _check_finite(scores, "scores")
        calibration = _calibration_stats(probabilities, labels, int(options["ece_bins"]))
        above, tied = gold_rank_counts(probabilities if scores is None else scores, labels)
        return {"above": above.astype(np.int32), "tied": tied.astype(np.int32),
                "brier": brier_stats(probabilities, labels), **calibration}

    def ks(self, options) -> list[int]:
        candidates = int(options.get("candidates", max(options["ks"])))
        return [int(k) for k in options["ks"] if int(k) <= candidates]

    batched = True

    def metrics(self, stats, options, weights=None):
        from dialshift.metrics.calibration import brier_compute
        from dialshift.metrics.ranking import ranking_compute

        # pessimistic ties: every candidate tied with the gold one ranks above it
        result = ranking_compute(stats["above"], stats["tied"], self.ks(options), "pessimistic", weights)
        result["brier"] = brier_compute(stats["brier"], weights)
        result.update(_calibration_metrics(stats, int(options["ece_bins"]), weights,
                                           options.get("_auxiliary", False)))
        return result

    def headline(self, options):
        return ("recall@1", "mrr", "brier", "ece", "smooth_ece", "debiased_l2")

    def reliability(self, stats, options):
        return _reliability(stats, int(options["ece_bins"]))

    def calibration_test(self, stats, options, replicates=1000, seed=0, bandwidth=None):
        return _calibration_test(stats, options, replicates, seed, bandwidth)


class PairwiseSelection(ScoringTask):
    """Pairwise (adversarial) response selection: accuracy overall and per adversarial ``type``."""

    name = "pairwise_selection"
    inputs = "id, scores or prediction, probabilities (optional)"
    outputs = "accuracy, accuracy per type, ECE, smECE, L2-CE"
    hub_task_type = "text-ranking"
    metric_info = {
        "accuracy": MetricInfo("Acc", True),
        "accuracy/(.+)": MetricInfo("Acc {0}", True),
        **CALIBRATION_INFO,
    }
    gold_columns = ("label", "type", CANDIDATE_COUNT)
    strata = ("type",)
    #: ``ece_bins``: as for response ranking, when the predictions carry probabilities.
    defaults = {"ece_bins": 15}

    def check_instance(self, row):
        problem = super().check_instance(row) or _candidates_problem(row, PAIR) or _label_problem(row, PAIR)
        if problem is None and (not isinstance(row["type"], str) or not row["type"].strip()):
            problem = "type", f"{row['type']!r} is not a non-empty string (the adversarial type)"
        return problem
    description = (
        "Predictions: one line per instance with `id` and either `scores` (one score per response; the highest is "
        "the choice, a tie counts as wrong) or `prediction` (the index of the chosen response), and optionally "
        "`probabilities` (one per response, summing to 1). Accuracy = share of instances whose choice is the gold "
        "response; `accuracy/<type>` the same within each gold `type`; with probabilities, ECE = top-label "
        "expected calibration error over {ece_bins} equal-width right-closed bins "
        "(the binned plug-in statistic, biased upward on finite samples: its interval allows for that bias, and "
        "docs/metrics.md measures its coverage of the true calibration error); smooth ECE = "
        "Blasiok and Nakkiran's kernel-smoothed ECE with automatic bandwidth (relplot's smECE); debiased L2 = Kumar "
        "et al.'s debiased L2 calibration error over {ece_bins} equal-mass bins (uncertainty-calibration's "
        "get_calibration_error(debias=True)), both top-label."
    )

    @property
    def fields(self):
        pa = _pa()
        return {"scores": pa.list_(pa.float64()), "prediction": pa.int64(), "probabilities": pa.list_(pa.float64())}

    def instance_stats(self, table, gold, options):
        from dialshift.metrics.ranking import gold_rank_counts

        labels = _gold_ints(gold, "label")
        codes, categories = _dictionary_codes(gold, "type")
        options.setdefault("types", categories)
        scores = _matrix(table, "scores", required=False)
        if scores is not None:
            _check_widths(scores.shape[1], gold, "scores", PAIR)
            _check_finite(scores, "scores")
            above, tied = gold_rank_counts(scores, labels)
            hit = (above == 0) & (tied == 1)
        else:
            prediction = _vector(table, "prediction", np.int64)
            counts = _candidate_counts(gold, len(prediction), PAIR)
            bad = np.flatnonzero((prediction < 0) | (prediction >= counts))
            if len(bad):
                row = int(bad[0])
                raise ValueError(f"prediction[{row}] = {prediction[row]} is not a response index of the instance "
                                 f"(0 .. {int(counts[row]) - 1})")
            hit = prediction == labels
        stats = {"hit": hit, "type": codes}
        probabilities = _matrix(table, "probabilities", required=False)
        if probabilities is not None:
            _check_widths(probabilities.shape[1], gold, "probabilities", PAIR)
            options["calibrated"] = True
            stats.update(_calibration_stats(probabilities, labels, int(options["ece_bins"])))
        return stats

    batched = True

    def metrics(self, stats, options, weights=None):
        from dialshift.metrics._weighted import weighted_mean

        result = {"accuracy": weighted_mean(stats["hit"], weights)}
        for code, name in enumerate(options["types"]):
            inside = stats["type"] == code
            result[f"accuracy/{name}"] = weighted_mean(stats["hit"][inside],
                                                       None if weights is None else weights[..., inside])
        if "confidence" in stats:
            result.update(_calibration_metrics(stats, int(options["ece_bins"]), weights,
                                               options.get("_auxiliary", False)))
        return result

    def reliability(self, stats, options):
        return _reliability(stats, int(options["ece_bins"])) if "confidence" in stats else None

    def calibration_test(self, stats, options, replicates=1000, seed=0, bandwidth=None):
        return _calibration_test(stats, options, replicates, seed, bandwidth)

    def headline(self, options):
        calibration = ("ece", "smooth_ece", "debiased_l2") if options.get("calibrated") else ()
        return ("accuracy", *calibration, *(f"accuracy/{name}" for name in options.get("types", ())))


class OpenWorldIntent(ScoringTask):
    """Open-world intent classification: F1 over all / known / out-of-scope classes, accuracy, OOD detection."""

    name = "open_world_intent"
    inputs = "id, prediction (label id), score (in-domain)"
    outputs = "F1_All/In/Out, Acc, AUROC, FPR@95TPR"
    metric_info = {
        "f1_all": MetricInfo("F1_All", True),
        "f1_in": MetricInfo("F1_In", True),
        "f1_out": MetricInfo("F1_Out", True),
        "accuracy": MetricInfo("Acc", True),
        "auroc": MetricInfo("AUROC", True),
        r"fpr@(\d+)tpr": MetricInfo("FPR@{0}TPR", False),
    }
    gold_columns = ("label",)
    strata = ("label",)
    #: ``oos_label``: the id of the out-of-scope class (a config's ``parameters`` give it); ``num_labels``: the number
    #: of label ids (known intents plus out-of-scope; predictions outside 0 .. num_labels - 1 are refused);
    #: ``tpr_level`` of FPR@TPR.
    defaults = {"oos_label": None, "num_labels": None, "tpr_level": 0.95}

    def check_instance(self, row):
        return super().check_instance(row) or _label_problem(row, None)
    description = (
        "Predictions: one line per instance with `id`, `prediction` (the predicted label id; the out-of-scope id "
        "for a rejection) and `score` (an in-domain score, higher = more in-domain). F1_All/F1_In/F1_Out = macro F1 "
        "over all K+1 classes / the K known classes / the out-of-scope class (Shu et al. 2017); Acc = accuracy; "
        "AUROC and FPR@95TPR of the in-domain score, in-domain positive (Hendrycks and Gimpel 2017)."
    )

    @property
    def fields(self):
        pa = _pa()
        return {"prediction": pa.int64(), "score": pa.float64()}

    def instance_stats(self, table, gold, options):
        if options.get("oos_label") is None:
            raise ValueError("the config declares no oos_label parameter (pass --option oos_label=ID)")
        prediction = _vector(table, "prediction", np.int64)
        score = _vector(table, "score")
        _check_finite(score, "score")
        negative = np.flatnonzero(prediction < 0)
        if len(negative):
            raise ValueError(f"prediction[{negative[0]}] = {prediction[negative[0]]} is not a label id (ids start "
                             "at 0)")
        if options.get("num_labels") is not None:
            bad = np.flatnonzero((prediction < 0) | (prediction >= int(options["num_labels"])))
            if len(bad):
                raise ValueError(f"prediction[{bad[0]}] = {prediction[bad[0]]} is not a label id of this config "
                                 f"(0 .. {int(options['num_labels']) - 1})")
        return {"gold": _gold_ints(gold, "label"), "prediction": prediction, "score": score}

    def metrics(self, stats, options, weights=None):
        from dialshift.metrics import ood_detection, open_world_f1
        from dialshift.metrics._checks import UndefinedMetricWarning

        # The known classes follow the core's rule in the point estimate and in every replicate alike: the ids other
        # than the out-of-scope one that occur among the (drawn) gold labels and predictions.
        oos = int(options["oos_label"])
        key = f"fpr@{round(float(options['tpr_level']) * 100):d}tpr"
        with warnings.catch_warnings():
            if weights is not None:  # a replicate without out-of-scope examples is expected, and its F1_Out is 0
                warnings.simplefilter("ignore", UndefinedMetricWarning)
            result = open_world_f1(stats["prediction"], stats["gold"], oos_label=oos, weights=weights)
        try:
            detection = ood_detection(stats["score"], (stats["gold"] != oos).astype(np.int64),
                                      tpr_level=float(options["tpr_level"]), weights=weights)
        except ValueError:  # no out-of-scope (or no in-domain) example: undefined
            detection = {"auroc": float("nan"), key: float("nan")}
        return {**result, "auroc": detection["auroc"], key: detection[key]}

    def headline(self, options):
        return ("f1_all", "f1_in", "f1_out", "accuracy", "auroc", f"fpr@{round(float(options['tpr_level']) * 100)}tpr")


class AttentionDistribution(ScoringTask):
    """Context attention distribution under distracting insertions (Xing and Gulla 2022): the DAS ratio."""

    name = "attention_distribution"
    inputs = "id, attention_scores (per utterance)"
    outputs = "DAS ratio, AS distractor / History, PPL"
    hub_task_type = "text-generation"
    #: Lower is better for the DAS ratios, the distractors' AS and perplexity (Xing and Gulla §5); the History's AS is
    #: "not the lower the better" (§5.2): descriptive, not ranked.
    metric_info = {
        "das_ratio": MetricInfo("DAS ratio", False, (0.0, None)),
        "das_ratio_of_means": MetricInfo("DAS (ratio of means)", False, (0.0, None)),
        "mean_as_distractor": MetricInfo("AS distractor", False, (0.0, None)),
        "mean_as_history": MetricInfo("AS History", None, (0.0, None)),
        "mean_as_history_distracted": MetricInfo("AS History (distracted)", None, (0.0, None)),
        "as_first_history": MetricInfo("AS first History", None, (0.0, None)),
        "as_last_history": MetricInfo("AS last History", None, (0.0, None)),
        "n_undefined": MetricInfo("undefined", None, (0.0, None)),
        "history_starved": MetricInfo("History-starved", False, (0.0, 1.0)),
        "n_history_starved": MetricInfo("History-starved (n)", None, (0.0, None)),
        "perplexity": MetricInfo("PPL", False, (1.0, None)),
    }
    gold_columns = ("distractor_mask",)
    #: ``includes_query``: each line's ``attention_scores`` ends with the Query's AS (ignored); ``skip_undefined``:
    #: dialogues without a distracting or without a History utterance are left out of the ratio and counted
    #: (``n_undefined``) instead of failing the config. A dialogue whose History gets zero attention is never left
    #: out silently: it is counted in ``history_starved`` (a headline) whatever ``skip_undefined`` says.
    defaults = {"includes_query": False, "skip_undefined": True}

    def check_instance(self, row):
        problem = super().check_instance(row)
        if problem:
            return problem
        mask = row["distractor_mask"]
        if not isinstance(mask, list) or any(flag not in (0, 1) or isinstance(flag, bool) for flag in mask):
            return "distractor_mask", f"{mask!r} is not a list of 0/1 flags (1 = a distracting utterance)"
        context = row.get("context")
        if isinstance(context, list) and len(mask) != len(context):
            return "distractor_mask", f"{len(mask)} flags for a context of {len(context)} turns; one flag per turn"
        return None
    description = (
        "Predictions: one line per dialogue with `id` and `attention_scores` (the attention score AS of each "
        "context utterance, eq. 7 of Xing and Gulla 2022), optionally `log_likelihood` and `tokens` of the gold "
        "response. DAS ratio = mean over dialogues of (mean AS of the distracting utterances) / (mean AS of the "
        "History utterances), from the gold `distractor_mask` (eq. 8; lower is better); `das_ratio_of_means` = "
        "(mean distractor AS) / (mean History AS), robust to the few dialogues whose History gets almost no "
        "attention; `history_starved` = share of the distracted dialogues whose History gets zero attention (or so "
        "little that the ratio overflows): their ratio is +inf, the worst case, so they are left out of both ratios "
        "and reported here instead (lower is better; read the ratios together with it); dialogues without a "
        "distracting or without a History utterance are counted in `n_undefined` (a config with no distraction "
        "reports the History AS only); `as_first_history` / `as_last_history` = mean AS of the first / last original "
        "History utterance over the dialogues of the ratio (Tables 5-6); perplexity = exp(-sum log_likelihood / "
        "sum tokens) when given."
    )

    @property
    def fields(self):
        pa = _pa()
        return {"attention_scores": pa.list_(pa.float64()), "log_likelihood": pa.float64(), "tokens": pa.int64()}

    def instance_stats(self, table, gold, options):
        from dialshift.metrics.attention import das_kinds, das_stats

        column = table.column("attention_scores").combine_chunks()
        if column.null_count:
            row = int(np.flatnonzero(column.is_null().to_numpy(zero_copy_only=False))[0])
            raise ValueError(f"attention_scores[{row}] is missing")
        _check_finite_lists(column, "attention_scores")
        _check_perplexity_inputs(table)
        stats = das_stats(column.to_pylist(), gold["distractor_mask"].to_pylist(),
                          includes_query=bool(options["includes_query"]))  # validates every dialogue (row named)
        rated, starved = das_kinds(stats)
        if not options.get("skip_undefined", True) and not (rated | starved).all() and \
                np.isfinite(stats["distractor"]).any():
            row = int(np.flatnonzero(~(rated | starved))[0])
            raise ValueError(f"dialogue {row}: its DAS ratio is undefined "
                             "(pass --option skip_undefined=true to leave it out)")
        for field, kind in (("log_likelihood", np.float64), ("tokens", np.float64)):
            values = table.column(field).to_numpy(zero_copy_only=False) if field in table.column_names else None
            if values is not None and not np.isnan(np.asarray(values, dtype=np.float64)).all():
                stats[field] = np.asarray(values, dtype=kind)
                options["perplexity"] = True
        return stats

    def metrics(self, stats, options, weights=None):
        from dialshift.metrics._weighted import masked_mean
        from dialshift.metrics.attention import das_compute, das_kinds

        result = {"mean_as_history": masked_mean(stats["history"], np.isfinite(stats["history"]), weights)}
        if np.isfinite(stats["distractor"]).any():
            das = das_compute(stats, weights)
            result["das_ratio"] = das["das_ratio"]
            result["history_starved"] = das["history_starved"]
            result["mean_as_distractor"] = das["mean_as_distractor"]
            result["mean_as_history_distracted"] = das["mean_as_history"]
            result["das_ratio_of_means"] = das["das_ratio_of_means"]
            rated = das_kinds(stats)[0]  # the dialogues of the ratio
            for key in ("first_history", "last_history"):
                result[f"as_{key}"] = masked_mean(stats[key], rated, weights)
            result["n_history_starved"] = das["n_history_starved"]
            result["n_undefined"] = das["n_undefined"]
        if "log_likelihood" in stats and "tokens" in stats:
            counts = np.ones(len(stats["history"])) if weights is None else weights
            tokens = float(np.dot(counts, stats["tokens"]))
            result["perplexity"] = float(np.exp(-np.dot(counts, stats["log_likelihood"]) / tokens)) if tokens else \
                float("nan")
        return result

    def headline(self, options):
        return ("das_ratio", "history_starved", "das_ratio_of_means", "mean_as_distractor", "mean_as_history",
                *(("perplexity",) if options.get("perplexity") else ()))


# ----------------------------------------------------------------------------------------------- registry

_TASKS: dict | None = None


def _load_tasks() -> dict:
    from dialshift.registry import TASK_ENTRY_POINT_GROUP, load_plugins

    found = {}
    for entry, task in load_plugins(TASK_ENTRY_POINT_GROUP, ScoringTask, "task"):
        if task.name != entry.name:
            raise DialshiftError(f"task plug-in {entry.name!r} ({entry.value}) is named {task.name!r}; name its entry "
                                 "point after the task")
        if task.name in found and type(found[task.name]) is not type(task):
            raise DialshiftError(f"two task plug-ins are named {task.name!r}")
        found[task.name] = task
    return found


def installed_tasks() -> dict:
    """Every installed scoring task by name (found through the ``dialshift.tasks`` entry points on first use)."""
    global _TASKS
    if _TASKS is None:
        _TASKS = _load_tasks()
    return dict(sorted(_TASKS.items()))


def get_task(name: str) -> ScoringTask:
    """The installed scoring task ``name``, or a one-line error listing the known ones."""
    known = installed_tasks()
    if name not in known:
        raise DialshiftError(f"no scoring task {name!r}; known tasks: {', '.join(known) or 'none'}")
    return known[name]


def reset_tasks() -> None:
    """Forget the discovered tasks (tests that install a plug-in call this)."""
    global _TASKS
    _TASKS = None
