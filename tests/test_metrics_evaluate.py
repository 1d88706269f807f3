"""The evaluate modules in metrics/<name>/: load offline from the root and from metrics/, combine, run their examples,
and return exactly what the dialshift.metrics core returns."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from dialshift.metrics.installed import metric_names

ROOT = Path(__file__).resolve().parents[1]
MODULES = metric_names()  # the installed modules (the dialshift.metrics entry points)
CARD_SECTIONS = [
    "Description",
    "How to Use",
    "Inputs",
    "Output Values",
    "Values from Popular Papers",
    "Examples",
    "Limitations and Bias",
    "Citation",
]


def run_python(code: str, cwd: Path, tmp_path: Path) -> dict:
    """Run ``code`` in a fresh interpreter with an empty HF cache, offline; it prints one JSON object last."""
    env = {
        **os.environ,
        "HF_HOME": str(tmp_path / "hf"),
        "HF_HUB_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
        "HF_EVALUATE_OFFLINE": "1",
        "PYTHONWARNINGS": "ignore",
    }
    env.pop("HF_MODULES_CACHE", None)
    completed = subprocess.run(
        [sys.executable, "-c", code], cwd=cwd, env=env, capture_output=True, text=True, timeout=300
    )
    assert completed.returncode == 0, completed.stderr[-4000:]
    return json.loads(completed.stdout.strip().splitlines()[-1])


FROM_ROOT = r"""
import json
import numpy as np
import evaluate
from dialshift import metrics as core

rng = np.random.default_rng(0)
probabilities = rng.dirichlet(np.ones(10), size=300)
labels = rng.integers(0, 10, 300)
scores = rng.normal(size=200)
in_domain = rng.integers(0, 2, 200)
intents = rng.integers(0, 5, 200)
predicted = np.where(rng.random(200) < 0.6, intents, rng.integers(0, 5, 200))
attention = [list(rng.random(n) + 0.1) for n in rng.integers(2, 7, 50)]
masks = [[1] + [0] * (len(a) - 1) for a in attention]
cases = {
    "ece": (dict(predictions=probabilities, references=labels), dict(n_bins=10, binning="equal_mass", norm="l2")),
    "smooth_ece": (dict(predictions=probabilities, references=labels), dict(calibration_test=True)),
    "debiased_l2": (dict(predictions=probabilities, references=labels), dict(n_bins=10, calibration_test=True,
                                                                             test_replicates=200)),
    "brier": (dict(predictions=probabilities, references=labels), dict(n_bins=10)),
    "recall_at_k": (dict(predictions=probabilities, references=labels), dict(k=[1, 3], ties="expected")),
    "open_world_f1": (dict(predictions=predicted, references=intents), dict(oos_label=4)),
    "ood_detection": (dict(predictions=scores, references=in_domain), dict(tpr_level=0.9)),
    "das_ratio": (dict(attention_scores=attention, distractor_mask=masks), dict()),
}
same = {}
for name, (inputs, kwargs) in cases.items():
    module = evaluate.load(f"metrics/{name}")
    result = module.compute(**inputs, **kwargs)
    expected = getattr(core, name)(*inputs.values(), **kwargs)
    same[name] = json.dumps(result, sort_keys=True) == json.dumps(expected, sort_keys=True)
    if kwargs.get("calibration_test"):  # the evaluate option of the calibration test
        same[name] = same[name] and 0 < result["calibration_p_value"] <= 1
combined = evaluate.combine(["metrics/ece", "metrics/brier", "metrics/recall_at_k"])
combined_result = combined.compute(predictions=probabilities, references=labels)
print(json.dumps({"same": same, "combined_keys": sorted(combined_result),
                  "combined_ece": combined_result["ece"], "core_ece": core.ece(probabilities, labels)["ece"]}))
"""

FROM_METRICS_DIR = r"""
import doctest
import json
import evaluate
import dialshift

results = {}
for name in %r:
    module = evaluate.load(name)
    parser = doctest.DocTestParser()
    outcome = []
    for source in (module.info.inputs_description, open(f"{name}/README.md", encoding="utf-8").read()):
        test = parser.get_doctest(source, {"evaluate": evaluate, "dialshift": dialshift}, name, None, 0)
        runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
        runner.run(test, out=lambda text: None)
        outcome.append([runner.failures, runner.tries])
    results[name] = outcome
print(json.dumps(results))
"""


def test_modules_load_from_root_match_the_core_and_combine(tmp_path):
    result = run_python(FROM_ROOT, ROOT, tmp_path)
    assert result["same"] == {name: True for name in MODULES}  # a case per installed module, each the core's
    assert {"ece", "bin_counts", "brier", "reliability", "recall@1", "recall@5", "mrr"} <= set(result["combined_keys"])
    assert result["combined_ece"] == result["core_ece"]


def test_modules_load_from_metrics_dir_and_their_examples_run(tmp_path):
    result = run_python(FROM_METRICS_DIR % (MODULES,), ROOT / "metrics", tmp_path)
    for name in MODULES:
        for (failures, tries), where in zip(result[name], ("docstring", "README.md"), strict=True):
            assert tries >= 2, f"{name}: the {where} example should call the module"
            assert failures == 0, f"{name}: {failures} of the {where} examples failed"


@pytest.mark.parametrize("name", MODULES)
def test_module_folder_is_complete(name):
    folder = ROOT / "metrics" / name
    source = (folder / f"{name}.py").read_text()
    assert "from dialshift.metrics import" in source
    for line in source.splitlines():  # evaluate's import parser needs one import per line
        assert not (line.startswith("import ") and "," in line), line
    assert "dialshift" in (folder / "requirements.txt").read_text()
    assert f'.with_name("{name}.py")' in (folder / "app.py").read_text()  # the Space's own module, not evaluate-metric
    card = (folder / "README.md").read_text()
    assert card.startswith("---\n") and "sdk: gradio" in card and "app_file: app.py" in card
    headings = [line for line in card.splitlines() if line.startswith("#")]
    for section in CARD_SECTIONS:
        assert any(section in heading for heading in headings), f"{name}/README.md lacks a '{section}' section"
    assert "PERFORMANCE_TABLE" not in card


BAD_INPUTS = r"""
import json
import warnings
import evaluate
from dialshift import metrics as core

good = [[0.5, 0.5], [0.25, 0.75]]
nan = float("nan")
cases = [
    ("ece", dict(predictions=good, references=[0, 1.5])),  # int64 features would truncate 1.5 to 1
    ("ece", dict(predictions=good, references=[0, nan])),
    ("ece", dict(predictions=good, references=[0, "1"])),
    ("ece", dict(predictions=good, references=[0, None])),
    ("ece", dict(predictions=[[0.5, "a"], [0.5, 0.5]], references=[0, 1])),
    ("ece", dict(predictions=[[0.5, 0.5], [nan, 1.0]], references=[0, 1])),
    ("ece", dict(predictions=[[0.5, 0.5], [1.0]], references=[0, 1])),
    ("brier", dict(predictions=good, references=[0, 1.5])),
    ("brier", dict(predictions=[[0.6, 0.6], [0.5, 0.5]], references=[0, 1])),
    ("recall_at_k", dict(predictions=good, references=[0, 1.5], k=[1])),
    ("recall_at_k", dict(predictions=[[0.5, "x"], [0.5, 0.5]], references=[0, 1], k=[1])),
    ("recall_at_k", dict(predictions=good, references=[0, 1], k=[1, 5])),
    ("open_world_f1", dict(predictions=[0, 1.5], references=[0, 2], oos_label=2)),
    ("open_world_f1", dict(predictions=[0, 1], references=[0, nan], oos_label=2)),
    ("open_world_f1", dict(predictions=[0, "b"], references=[0, 2], oos_label=2)),
    ("ood_detection", dict(predictions=[0.5, "x"], references=[1, 0])),
    ("ood_detection", dict(predictions=[0.5, nan], references=[1, 0])),
    ("ood_detection", dict(predictions=[0.5, 0.4], references=[1, 0.5])),
    ("ood_detection", dict(predictions=[[0.5], [0.4]], references=[1, 0])),
    ("das_ratio", dict(attention_scores=[[0.5, 1.0]], distractor_mask=[[0.5, 1]])),  # int64 would make it [0, 1]
    ("das_ratio", dict(attention_scores=[[0.5, "a"]], distractor_mask=[[1, 0]])),
    ("das_ratio", dict(attention_scores=[[0.5, nan]], distractor_mask=[[1, 0]])),
]


def outcome(function, **kwargs):
    try:
        function(**kwargs)
    except Exception as error:
        return [type(error).__name__, str(error)]
    return ["no error", ""]


results = []
for name, inputs in cases:
    module = evaluate.load(f"metrics/{name}")
    results.append([name, outcome(module.compute, **inputs), outcome(getattr(core, name), **inputs)])
# add() checks one example, add_batch() each batch; good batches still score
module = evaluate.load("metrics/ece")
single = outcome(module.add, prediction=[0.5, 0.5], reference=1.5)
module = evaluate.load("metrics/ece")
module.add_batch(predictions=good, references=[0, 1])
batch = outcome(module.add_batch, predictions=good, references=[1, 0.5])
module.add_batch(predictions=[[0.9, 0.1]], references=[0])
scored = module.compute()["ece"] == core.ece(good + [[0.9, 0.1]], [0, 1, 0])["ece"]
# no out-of-scope gold: a warning and f1_out = 0, not an error
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    f1 = evaluate.load("metrics/open_world_f1").compute(predictions=[0, 1, 1], references=[0, 1, 0], oos_label=2)
print(json.dumps({"results": results, "single": single, "batch": batch, "scored": scored, "f1": f1,
                  "warned": [str(w.message) for w in caught if "out-of-scope" in str(w.message)]}))
"""


def test_modules_refuse_bad_input_with_the_core_message(tmp_path):
    result = run_python(BAD_INPUTS, ROOT, tmp_path)
    for name, through_module, core in result["results"]:
        assert through_module[0] == "ValueError", (name, through_module)
        assert through_module == core, name  # exactly the core's one line, not evaluate's generic format error
        assert "\n" not in through_module[1]
    messages = [through_module[1] for _, through_module, _ in result["results"]]
    assert messages[0] == "references[1] = 1.5 is not an integer class id"
    assert "distractor_mask[0] must hold 0 (History) or 1 (distracting)" in messages[19]
    assert result["single"] == ["ValueError", "references[0] = 1.5 is not an integer class id"]
    assert result["batch"] == ["ValueError", "references[1] = 0.5 is not an integer class id"]
    assert result["scored"] is True
    assert result["f1"]["f1_out"] == 0.0 and result["f1"]["f1_in"] == pytest.approx(2 / 3)
    assert result["warned"], "open_world_f1 should warn that references hold no out-of-scope example"
