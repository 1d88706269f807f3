"""One implementation per metric, checked in the spirit of torchmetrics' ``MetricTester``.

For every metric of the scoring tasks, on seeded random inputs and to 1e-12:

* the evaluate module in ``metrics/<name>/`` (fed in three ``add_batch`` calls) = the core's public function;
* the core's public function = its weighted compute over the per-instance statistics (no weights, unit weights);
* the scoring task's metric (no weights and unit weights) = the core;
* the weighted compute with integer weights (counts) = the public function on the explicitly resampled copy
  (``numpy.repeat``), for 1-D weights and for each row of an ``R x N`` block of replicates;
* statistics computed batch by batch and concatenated (as the scoring pipeline reads chunks) = statistics of the
  whole input.
"""

import json
from functools import partial

import numpy as np
import pytest
from test_metrics_evaluate import ROOT, run_python

from dialshift.metrics import attention, calibration, ranking
from dialshift.metrics import open_world as ow
from dialshift.metrics import smooth_calibration as smooth
from dialshift.scoring.tasks import get_task

N = 240
TOLERANCE = 1e-12
BATCHES = (0, 70, 150, N)


def inputs(seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    logits = np.round(rng.normal(size=(N, 6)) * 2, 1)  # rounding makes ties in ranks and in confidences
    labels = rng.integers(0, 6, N)
    logits[np.arange(N), labels] += 1.0
    probabilities = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    intents = rng.integers(0, 5, N)
    attention_scores = [(rng.random(n) + 0.05).tolist() for n in rng.integers(2, 6, N)]
    masks = [rng.permutation([1] + [0] * (len(a) - 1)).tolist() for a in attention_scores]
    for row in (3, 11):  # History-starved dialogues: zero History attention (ratio +inf)
        attention_scores[row] = [score if flag else 0.0 for score, flag in zip(attention_scores[row], masks[row],
                                                                               strict=True)]
    return {
        "probabilities": probabilities,
        "logits": logits,
        "labels": labels,
        "intents": intents,
        "predicted": np.where(rng.random(N) < 0.6, intents, rng.integers(0, 5, N)),
        "scores": np.round(rng.random(N) + (intents != 4) * 0.5, 2),
        "attention": attention_scores,
        "masks": masks,
    }


def _take(data, rows):
    return [data[i] for i in rows] if isinstance(data, list) else np.asarray(data)[rows]


# Each metric: the module's name, its compute arguments, the core's public function, the per-instance statistics
# and the weighted compute (stats, weights) -> the public function's numbers.
def _calibration_case(name, public, stats, compute):
    return {"module": name, "arguments": lambda d: (d["probabilities"], d["labels"]), "public": public,
            "stats": stats, "compute": compute}


CASES = {
    "ece": _calibration_case(
        "ece", lambda p, y: {"ece": calibration.ece(p, y, n_bins=15)["ece"]},
        partial(calibration.top_label_stats, n_bins=15),
        lambda s, w: {"ece": calibration.ece_compute(s, 15, w)}),
    "smooth_ece": _calibration_case(
        "smooth_ece", lambda p, y: smooth.smooth_ece(p, y), calibration.top_label_stats,
        lambda s, w: dict(zip(("smooth_ece", "bandwidth"), smooth.smooth_ece_compute(s, w, return_bandwidth=True),
                              strict=True))),
    "debiased_l2": _calibration_case(
        "debiased_l2", lambda p, y: smooth.debiased_l2(p, y), calibration.top_label_stats,
        lambda s, w: {"debiased_l2": smooth.debiased_l2_compute(s, 15, w)}),
    "brier": _calibration_case(
        "brier", lambda p, y: {"brier": calibration.brier(p, y)["brier"]}, calibration.brier_stats,
        lambda s, w: {"brier": calibration.brier_compute(s, w)}),
    "recall_at_k": {
        "module": "recall_at_k", "arguments": lambda d: (d["logits"], d["labels"]),
        "public": lambda p, y: ranking.recall_at_k(p, y, k=[1, 2, 5]),
        "stats": lambda p, y: dict(zip(("above", "tied"), ranking.gold_rank_counts(p, y), strict=True)),
        "compute": lambda s, w: ranking.ranking_compute(s["above"], s["tied"], [1, 2, 5], weights=w)},
    "das_ratio": {
        "module": "das_ratio", "arguments": lambda d: (d["attention"], d["masks"]),
        "kwargs": {"skip_undefined": True},
        "public": lambda a, m: attention.das_ratio(a, m, skip_undefined=True),
        "stats": attention.das_stats,
        "compute": lambda s, w: {key: value for key, value in attention.das_compute(s, w).items()
                                 if key in ("das_ratio", "mean_as_distractor", "mean_as_history", "n_dialogues",
                                            "n_history_starved", "history_starved")}},
    "open_world_f1": {
        "module": "open_world_f1", "arguments": lambda d: (d["predicted"], d["intents"]), "kwargs": {"oos_label": 4},
        "public": lambda p, y: ow.open_world_f1(p, y, oos_label=4),
        "stats": lambda p, y: {"predicted": np.asarray(p), "gold": np.asarray(y)},
        "compute": lambda s, w: ow.open_world_f1(s["predicted"], s["gold"], oos_label=4, weights=w)},
    "ood_detection": {
        "module": "ood_detection", "arguments": lambda d: (d["scores"], (d["intents"] != 4).astype(int)),
        "public": ow.ood_detection,
        "stats": lambda p, r: {"scores": np.asarray(p), "in_domain": np.asarray(r)},
        "compute": lambda s, w: ow.ood_detection(s["scores"], s["in_domain"], weights=w)},
}


def assert_close(actual: dict, expected: dict, what: str):
    assert set(actual) == set(expected), what
    for key, value in expected.items():
        assert actual[key] == pytest.approx(value, abs=TOLERANCE, nan_ok=True), f"{what}: {key}"


@pytest.fixture(scope="module")
def data():
    return inputs(0)


@pytest.mark.parametrize("name", CASES)
def test_public_function_is_the_weighted_compute_of_its_statistics(name, data):
    case = CASES[name]
    arguments = case["arguments"](data)
    public = case["public"](*arguments)
    stats = case["stats"](*arguments)
    assert_close(case["compute"](stats, None), public, f"{name}: compute without weights")
    assert_close(case["compute"](stats, np.ones(N, dtype=np.int64)), public, f"{name}: unit weights")


@pytest.mark.parametrize("name", CASES)
def test_weights_are_counts_of_an_explicit_resample(name, data):
    case = CASES[name]
    arguments = case["arguments"](data)
    stats = case["stats"](*arguments)
    rng = np.random.default_rng(sum(map(ord, name)))
    block = np.stack([np.bincount(rng.integers(0, N, N), minlength=N) for _ in range(4)])
    block[0, :5] = 0  # instances left out of a replicate
    batched = case["compute"](stats, block.astype(np.float64)) if name in BATCHED else None
    for r, counts in enumerate(block):
        rows = np.repeat(np.arange(N), counts)
        expected = case["public"](*(_take(argument, rows) for argument in arguments))
        assert_close(case["compute"](stats, counts), expected, f"{name}: replicate {r} as 1-D weights")
        if batched is not None:
            assert_close({key: value[r] for key, value in batched.items()}, expected, f"{name}: row {r} of R x N")


#: the metrics whose compute takes an R x N block of replicates at once
BATCHED = ("ece", "smooth_ece", "debiased_l2", "brier", "recall_at_k", "das_ratio")


@pytest.mark.parametrize("name", CASES)
def test_statistics_accumulate_over_batches(name, data):
    case = CASES[name]
    arguments = case["arguments"](data)
    parts = [case["stats"](*(_take(argument, range(a, b)) for argument in arguments))
             for a, b in zip(BATCHES, BATCHES[1:], strict=False)]
    if isinstance(parts[0], dict):
        stats = {key: np.concatenate([part[key] for part in parts]) for key in parts[0]}
    else:
        stats = np.concatenate(parts)
    assert_close(case["compute"](stats, None), case["public"](*arguments), f"{name}: batch by batch")


def _task_stats(task_name, rows, gold, options):
    import pyarrow as pa

    task = get_task(task_name)
    table = pa.Table.from_pylist(rows, schema=task.schema())
    gold = {key: pa.array(value) for key, value in gold.items()}
    return task, task.instance_stats(table, gold, options)


def test_scoring_tasks_are_the_core_with_unit_weights(data):
    ids = [str(i) for i in range(N)]
    checks = []
    options = {"ece_bins": 15, "ks": (1, 2, 5)}
    rows = [{"id": i, "scores": s.tolist(), "probabilities": p.tolist()}
            for i, s, p in zip(ids, data["logits"], data["probabilities"], strict=True)]
    task, stats = _task_stats("response_ranking", rows, {"label": data["labels"]}, options)
    core = {**CASES["recall_at_k"]["public"](data["logits"], data["labels"]),
            **CASES["brier"]["public"](data["probabilities"], data["labels"]),
            **CASES["ece"]["public"](data["probabilities"], data["labels"]),
            **CASES["debiased_l2"]["public"](data["probabilities"], data["labels"]),
            "smooth_ece": CASES["smooth_ece"]["public"](data["probabilities"], data["labels"])["smooth_ece"]}
    checks.append((task, stats, options, core))

    options = {"includes_query": False, "skip_undefined": True}
    rows = [{"id": i, "attention_scores": a} for i, a in zip(ids, data["attention"], strict=True)]
    task, stats = _task_stats("attention_distribution", rows, {"distractor_mask": data["masks"]}, options)
    das = attention.das_ratio(data["attention"], data["masks"], skip_undefined=True)
    checks.append((task, stats, options, {"das_ratio": das["das_ratio"], "history_starved": das["history_starved"],
                                          "mean_as_distractor": das["mean_as_distractor"],
                                          "mean_as_history_distracted": das["mean_as_history"],
                                          "n_history_starved": das["n_history_starved"]}))

    options = {"oos_label": 4, "num_labels": 5, "tpr_level": 0.95}
    rows = [{"id": i, "prediction": int(p), "score": float(s)}
            for i, p, s in zip(ids, data["predicted"], data["scores"], strict=True)]
    task, stats = _task_stats("open_world_intent", rows, {"label": data["intents"]}, options)
    detection = ow.ood_detection(data["scores"], (data["intents"] != 4).astype(int))
    checks.append((task, stats, options, {**ow.open_world_f1(data["predicted"], data["intents"], oos_label=4),
                                          "auroc": detection["auroc"], "fpr@95tpr": detection["fpr@95tpr"]}))
    for task, stats, options, core in checks:
        for weights in (None, np.ones(N, dtype=np.int64)):
            result = task.metrics(stats, options, weights)
            assert_close({key: result[key] for key in core}, core, f"{task.name} with weights {weights is not None}")


MODULES_RUN = r"""
import json, pickle, sys
import numpy as np
import evaluate
cases = pickle.load(open(sys.argv[1], "rb"))
out = {}
for name, (arguments, kwargs, batches) in cases.items():
    module = evaluate.load(f"metrics/{name}")
    features = list(module._feature_names())
    for a, b in zip(batches, batches[1:]):
        module.add_batch(**{feature: argument[a:b] for feature, argument in zip(features, arguments)})
    out[name] = module.compute(**kwargs)
print(json.dumps(out))
"""


def test_evaluate_modules_equal_the_core_over_batches(data, tmp_path):
    import pickle

    cases = {}
    for case in CASES.values():
        arguments = [np.asarray(a).tolist() if not isinstance(a, list) else a for a in case["arguments"](data)]
        cases[case["module"]] = (arguments, case.get("kwargs", {}), BATCHES)
    (tmp_path / "cases.pkl").write_bytes(pickle.dumps(cases))
    script = tmp_path / "run.py"
    script.write_text(MODULES_RUN)
    results = run_python(f"import sys; sys.argv = ['', {str(tmp_path / 'cases.pkl')!r}]; "
                         f"exec(open({str(script)!r}).read())", ROOT, tmp_path)
    for name, case in CASES.items():
        expected = case["public"](*case["arguments"](data))
        module = results[case["module"]]
        assert_close({key: module[key] for key in expected}, json.loads(json.dumps(expected)), f"module {name}")


def test_a_replicate_without_instances_is_nan():
    """A config's replicate may draw none of its ids (paired on shared ids): every calibration estimate is NaN."""
    data = inputs(1)
    stats = calibration.top_label_stats(data["probabilities"], data["labels"])
    block = np.ones((2, N))
    block[1] = 0
    for compute in (partial(calibration.ece_compute, n_bins=15), smooth.smooth_ece_compute,
                    partial(smooth.debiased_l2_compute, n_bins=15)):
        values = compute(stats, weights=block)
        assert np.isfinite(values[0]) and np.isnan(values[1])


def test_smooth_ece_at_the_point_bandwidth_is_the_fft_path_at_that_bandwidth():
    """The scoring bootstrap's fast path (one matrix product per block at the point estimate's bandwidth) equals
    relplot's FFT smoothing evaluated row by row at that bandwidth, and a replicate with no instance is NaN."""
    from dialshift.metrics.smooth_calibration import _smooth_ece_at, smooth_ece_compute

    rng = np.random.default_rng(7)
    confidence = rng.uniform(0.3, 1.0, 500)
    stats = {"confidence": confidence, "correct": (rng.random(500) < confidence ** 1.5).astype(np.float64)}
    weights = np.stack([np.bincount(rng.integers(0, 500, 500), minlength=500) for _ in range(6)]).astype(np.float64)
    weights[2] = 0.0
    fast, bandwidths = smooth_ece_compute(stats, weights, return_bandwidth=True, bandwidth="point")
    _, point = smooth_ece_compute(stats, return_bandwidth=True)
    assert np.all(bandwidths == point)
    slow = _smooth_ece_at(confidence, confidence - stats["correct"], weights, np.full(6, point), {})
    keep = np.arange(6) != 2
    np.testing.assert_allclose(fast[keep], slow[keep], rtol=1e-10, atol=1e-13)
    assert np.isnan(fast[2])
    with pytest.raises(ValueError, match="bandwidth must be"):
        smooth_ece_compute(stats, weights, bandwidth="fixed")


@pytest.mark.parametrize(("n", "tied"), [(150, False), (128, False), (150, True), (600, False)])
def test_debiased_l2_block_is_each_replicate_resampled(n, tied, monkeypatch):
    """The debiased L2 error of a block of replicates (equal-mass bins found on running sums, over several chunks of
    rows) equals the error of each replicate's explicitly resampled copy, also for replicates drawing fewer
    instances than bins, ties across bin edges and a replicate drawing nothing; column-major weights (the
    bootstrap's) give the same values."""
    rng = np.random.default_rng(11)  # n: several runs of running sums, the last one partial or full; 600: 3 groups
    confidence = np.full(n, 0.75) if tied else np.round(rng.uniform(0.3, 1.0, n), 2)
    stats = {"confidence": confidence, "correct": rng.random(n) < confidence}
    block = np.stack([np.bincount(rng.integers(0, n, size), minlength=n) for size in (1, 3, 14, 15, 16, 150, 600)]
                     + [np.zeros(n, dtype=np.int64)])
    monkeypatch.setattr(smooth, "BLOCK_ELEMENTS", 3 * n)  # three rows per chunk
    values = smooth.debiased_l2_compute(stats, 15, block.astype(np.float64))
    np.testing.assert_array_equal(smooth.debiased_l2_compute(stats, 15, np.asfortranarray(block, np.float64)), values)
    for row, counts in enumerate(block[:-1]):
        rows = np.repeat(np.arange(n), counts)
        resampled = {"confidence": confidence[rows], "correct": stats["correct"][rows]}
        assert values[row] == pytest.approx(smooth.debiased_l2_compute(resampled, 15), abs=TOLERANCE), row
    assert np.isnan(values[-1])


def test_binned_ece_block_in_bin_order_shares_the_running_sums():
    """A block of replicates over instances in bin order (the bootstrap's) takes binned ECE's counts and gap sums from
    the running sums the debiased L2 error built for the same weights, and gives each row's explicit resample, as the
    sparse product does for the same instances in another order; other weights build their own running sums."""
    from dialshift.metrics import _weighted

    rng = np.random.default_rng(5)
    n = 700  # several groups of runs, the last partial
    confidence = np.sort(np.round(rng.uniform(0.5, 1.0, n), 2))  # the top label: column 0
    correct = rng.random(n) < confidence
    stats = calibration.top_label_stats(np.column_stack([confidence, 1.0 - confidence]), (~correct).astype(int))
    assert np.all(np.diff(stats["bin"]) >= 0)
    block = np.asfortranarray(np.stack([np.bincount(rng.integers(0, n, n), minlength=n) for _ in range(5)]), float)
    smooth.debiased_l2_compute(stats, 15, block)
    shared = _weighted._LAST_RUNNING[1]
    values = calibration.ece_compute(stats, 15, block)
    assert _weighted._LAST_RUNNING[1] is shared
    shuffled = rng.permutation(n)
    other = {key: value[shuffled] for key, value in stats.items()}
    np.testing.assert_allclose(values, calibration.ece_compute(other, 15, block[:, shuffled]), rtol=1e-13)
    for row, counts in enumerate(block.astype(int)):
        rows = np.repeat(np.arange(n), counts)
        assert values[row] == pytest.approx(calibration.ece_compute({k: v[rows] for k, v in stats.items()}, 15),
                                            abs=TOLERANCE)
    fresh = block[::-1].copy()
    np.testing.assert_allclose(calibration.ece_compute(stats, 15, fresh), values[::-1], rtol=1e-13)
    assert _weighted._LAST_RUNNING[1] is not shared
