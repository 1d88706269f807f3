"""Packaging end to end: `python -m build` gives a wheel and an sdist holding the cards, the page template, the Spaces
and the metric modules, with no setuptools warning; the wheel installed ALONE into a fresh virtual environment (no
system or project site-packages: its declared dependencies come from pip's index at the versions of constraints.txt)
runs `dialshift --help` and `dialshift configs`, loads a metric module from another folder, builds the toy family
(a plug-in) and one DailyDialog config from the raw data, and creates a GPU bundle (`dialshift bundle create`) with no
source checkout.

The build runs isolated (setuptools from pip's index, as for any user). The fresh install takes about a minute of CPU
(measured: 40 s of user time for the core's ~60 distributions, `--no-compile`); the core needs no torch.
"""

import base64
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

from dialshift.metrics.installed import metric_names

pytest.importorskip("build")
pytestmark = [pytest.mark.wheel, pytest.mark.slow]
REPO_ROOT = Path(__file__).resolve().parent.parent
TESTS_DIR = REPO_ROOT / "tests"
SHIPPED = ["dialshift_cards/dataset_card.md", "dialshift_cards/leaderboard/app.py", "dialshift_trainers/ranker.py",
           "dialshift_cards/leaderboard/README.md", "dialshift_cards/leaderboard/requirements.txt",
           "dialshift/leaderboard/templates/index.html", "dialshift/sources/manifest.json",
           *(f"dialshift_metrics/{m}/{f}" for m in metric_names()  # every installed metric module
             for f in (f"{m}.py", "README.md", "app.py", "requirements.txt"))]
#: What setuptools prints about a packaging mistake (a data folder that is not a package, deprecated metadata).
SETUPTOOLS_WARNING = re.compile(r"Package would be ignored|SetuptoolsDeprecationWarning|SetuptoolsWarning|"
                                r"^\s*WARNING|!!", re.MULTILINE)
DATA_DIR = Path(os.environ.get("DIALSHIFT_DATA_DIR", REPO_ROOT.parent / "shared" / "data"))


def clean_environment(**extra) -> dict:
    """The environment without anything that points Python at the project (no PYTHONPATH, no virtual env)."""
    env = {key: value for key, value in os.environ.items()
           if key not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME", "PYTHONDONTWRITEBYTECODE", "PYTHONSTARTUP")}
    return {**env, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", **extra}


def clean_source_copy(source: Path) -> Path:
    """A copy of the tree (tracked and new files, not ignored ones) in ``source``, so that building it never leaves
    build outputs in the working tree."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=REPO_ROOT,
                            capture_output=True, check=True).stdout
    for name in filter(None, listed.decode().split("\0")):
        if (REPO_ROOT / name).is_file():
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO_ROOT / name, source / name)
    return source


@pytest.fixture(scope="module")
def dist(tmp_path_factory):
    out = tmp_path_factory.mktemp("dist")
    source = clean_source_copy(tmp_path_factory.mktemp("src") / "dialshift")
    result = subprocess.run([sys.executable, "-m", "build", "--outdir", str(out), str(source)], capture_output=True,
                            text=True, timeout=600, env=clean_environment())
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-3000:]
    return next(out.glob("dialshift-*.whl")), next(out.glob("dialshift-*.tar.gz")), output


def test_the_build_prints_no_setuptools_warning(dist):
    *_, output = dist
    assert not SETUPTOOLS_WARNING.findall(output), "\n".join(line for line in output.splitlines()
                                                             if SETUPTOOLS_WARNING.search(line))


def test_wheel_and_sdist_ship_the_cards_templates_and_metric_modules(dist):
    wheel, sdist, _ = dist
    names = set(zipfile.ZipFile(wheel).namelist())
    missing = [name for name in SHIPPED if name not in names]
    assert not missing, missing
    with tarfile.open(sdist) as archive:
        members = {name.split("/", 1)[1] for name in archive.getnames() if "/" in name}
    tree = {"dialshift_cards": "hub_cards", "dialshift_metrics": "metrics", "dialshift": "dialshift",
            "dialshift_trainers": "trainers"}
    missing = [name for name in SHIPPED if tree[name.split("/")[0]] + "/" + name.split("/", 1)[1] not in members]
    assert not missing, missing


@pytest.fixture(scope="module")
def fresh(dist, tmp_path_factory):
    """A virtual environment holding the wheel and its declared (core) dependencies, nothing else."""
    wheel, *_ = dist
    env_dir = tmp_path_factory.mktemp("fresh") / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env_dir)], check=True, timeout=120,
                   env=clean_environment())
    python = env_dir / "bin" / "python"
    install = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-compile",
                              "-c", str(REPO_ROOT / "constraints.txt"), str(wheel)],
                             capture_output=True, text=True, timeout=900, env=clean_environment())
    if install.returncode and "no such option: --python" in install.stderr:
        pytest.skip("pip too old for --python")
    assert install.returncode == 0, install.stderr[-3000:]
    return env_dir


def run_in(env_dir: Path, cwd: Path, *argv, **env):
    return subprocess.run([str(env_dir / "bin" / argv[0]), *argv[1:]], capture_output=True, text=True, timeout=600,
                          cwd=cwd, env=clean_environment(**env))


def test_the_fresh_environment_has_only_the_wheel_and_its_dependencies(fresh, tmp_path):
    code = ("import sys, importlib.util as u, dialshift; print(dialshift.__file__); "
            "print([p for p in sys.path if 'site-packages' in p]); print(u.find_spec('torch') is None)")
    result = run_in(fresh, tmp_path, "python", "-c", code)
    where, paths, no_torch = result.stdout.strip().splitlines()
    site = next((fresh / "lib").glob("python*/site-packages"))
    assert where.startswith(str(site)), result.stderr  # the wheel, not the checkout
    assert paths == repr([str(site)]) and no_torch == "True"  # no project site-packages, no .pth tricks, no torch


def test_the_wheel_runs_the_cli_and_a_metric_module_from_another_folder(fresh, tmp_path):
    helped = run_in(fresh, tmp_path, "dialshift", "--help")
    assert helped.returncode == 0 and "leaderboard" in helped.stdout and "build" in helped.stdout
    listed = run_in(fresh, tmp_path, "dialshift", "configs")
    assert listed.returncode == 0 and "uw_0.30" in listed.stdout and "clinc14_cov" in listed.stdout, listed.stderr
    code = ("import dialshift, evaluate; p = dialshift.metric_path('brier'); m = evaluate.load(p); "
            "print(p); print(round(m.compute(predictions=[[1.0, 0.0], [0.5, 0.5]], references=[0, 1])['brier'], 4))")
    loaded = run_in(fresh, tmp_path, "python", "-c", code)
    assert loaded.returncode == 0, loaded.stderr[-2000:]
    path, value = loaded.stdout.strip().splitlines()[-2:]
    assert path.startswith(str(fresh)) and float(value) == 0.25


def test_the_wheel_builds_the_toy_family_and_a_dailydialog_config(fresh, tmp_path):
    from conftest import install_toy_plugin

    site = install_toy_plugin(tmp_path / "plugin-site")  # an entry point to tests/toy_family.py, nothing else
    data = tmp_path / "data"
    data.mkdir()
    toy = run_in(fresh, tmp_path, "dialshift", "build", "--family", "toyfam", "--data-dir", str(data), "--out",
                 str(tmp_path / "toy"), "--no-progress", PYTHONPATH=os.pathsep.join([str(site), str(TESTS_DIR)]))
    assert toy.returncode == 0 and "toy_swap_0.5  toyfam" in toy.stdout, toy.stderr[-2000:]
    if not (DATA_DIR / "dailydialog").is_dir():
        pytest.skip(f"no raw DailyDialog under {DATA_DIR}")
    out = tmp_path / "dailydialog"
    code = ("import sys, dialshift.build as b; r = b.build(['ic_0of6'], sys.argv[1], sys.argv[2], progress=False); "
            "import datasets; print(r.built, len(datasets.load_dataset(sys.argv[2], 'ic_0of6', split='test')))")
    built = run_in(fresh, tmp_path, "python", "-c", code, str(DATA_DIR), str(out))
    assert built.returncode == 0, built.stderr[-3000:]
    names, count = built.stdout.split()
    assert names == "('ic_0of6',)" and int(count) > 0
    checked = run_in(fresh, tmp_path, "dialshift", "validate", "--partial", str(out))
    assert checked.returncode == 0, checked.stdout[-1000:] + checked.stderr[-1000:]


def test_the_wheel_creates_a_gpu_bundle_without_a_source_checkout(dist, fresh, tmp_path):
    """The trainer comes from the installed dialshift_trainers and dialshift's wheel is repacked from the installed
    files: the same files as the wheel that was installed. torch, transformers and safetensors (the train extra, too
    large to install here) come from this interpreter's site-packages, put last on the path."""
    import sysconfig

    from test_ranker import make_dataset_folder

    wheel, *_ = dist
    dataset, out = make_dataset_folder(tmp_path / "dataset"), tmp_path / "bundle"
    code = "import sys; sys.path.append(sys.argv.pop(1)); from dialshift.cli import main; sys.exit(main(sys.argv[1:]))"
    made = run_in(fresh, tmp_path, "python", "-c", code, sysconfig.get_paths()["purelib"], "bundle", "create",
                  "--dataset", str(dataset), "--out", str(out), "--model", "tiny", "--seeds", "1", "--dropout-passes",
                  "1", "--max-length", "32", "--configs", "dailydialog", "--no-wheels", "--no-progress")
    assert made.returncode == 0, made.stderr[-3000:]
    assert (out / "trainers" / "ranker.py").read_bytes() == (REPO_ROOT / "trainers" / "ranker.py").read_bytes()
    (repacked,) = (out / "wheels").glob("*.whl")
    assert repacked.name == wheel.name
    with zipfile.ZipFile(wheel) as built, zipfile.ZipFile(repacked) as copy:
        def files(archive):
            return {name: archive.read(name) for name in archive.namelist() if not name.endswith(".dist-info/RECORD")}

        assert files(copy) == files(built)
        record = copy.read(next(name for name in copy.namelist() if name.endswith(".dist-info/RECORD"))).decode()
        assert sorted(line.split(",")[0] for line in record.splitlines()) == sorted(copy.namelist())
        for line in record.splitlines():
            name, digest, size = line.split(",")
            if digest:  # every file but RECORD itself: its sha256 and size as pip checks them
                data = copy.read(name)
                expected = "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
                assert (digest, int(size)) == (expected, len(data)), name
