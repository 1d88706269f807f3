"""Packaging: `python -m build` gives a wheel and an sdist holding the cards, the page template, the Space and the
metric modules; the wheel installed into a fresh virtual environment runs `dialshift --help`, `dialshift configs`
and `evaluate.load` of a metric module from another folder.

The fresh environment gets the wheel alone (`--no-deps`); its dependencies come from the project's environment
through a path file (not its site folder, so the editable install there stays inactive), which keeps this test at
seconds and offline. The build runs without isolation in the project's environment (`--skip-dependency-check`:
setuptools builds wheels itself, the `wheel` package is not needed). About 30 s on the 2-core machine.
"""

import shutil
import site
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

pytest.importorskip("build")
REPO_ROOT = Path(__file__).resolve().parent.parent
SHIPPED = ["dialshift_cards/dataset_card.md", "dialshift_cards/leaderboard/app.py",
           "dialshift_cards/leaderboard/README.md", "dialshift_cards/leaderboard/requirements.txt",
           "dialshift/leaderboard/templates/index.html",
           *(f"dialshift_metrics/{m}/{f}" for m in ("ece", "brier", "recall_at_k", "open_world_f1", "ood_detection",
                                                    "das_ratio")
             for f in (f"{m}.py", "README.md", "app.py", "requirements.txt"))]


@pytest.fixture(scope="module")
def dist(tmp_path_factory):
    out = tmp_path_factory.mktemp("dist")
    source = tmp_path_factory.mktemp("src") / "dialshift"
    # a clean copy of the tracked tree, so build outputs never land in the working tree
    files = subprocess.run(["git", "ls-files", "-z"], cwd=REPO_ROOT, capture_output=True, check=True).stdout
    for name in filter(None, files.decode().split("\0")):
        if (REPO_ROOT / name).is_file():
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO_ROOT / name, source / name)
    command = [sys.executable, "-m", "build", "--no-isolation", "--skip-dependency-check", "--outdir", str(out)]
    result = subprocess.run([*command, str(source)], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    wheel = next(out.glob("dialshift-*.whl"))
    sdist = next(out.glob("dialshift-*.tar.gz"))
    return wheel, sdist


def test_wheel_and_sdist_ship_the_cards_templates_and_metric_modules(dist):
    wheel, sdist = dist
    names = set(zipfile.ZipFile(wheel).namelist())
    missing = [name for name in SHIPPED if name not in names]
    assert not missing, missing
    with tarfile.open(sdist) as archive:
        members = {name.split("/", 1)[1] for name in archive.getnames() if "/" in name}
    tree = {"dialshift_cards": "hub_cards", "dialshift_metrics": "metrics", "dialshift": "dialshift"}
    missing = [name for name in SHIPPED if tree[name.split("/")[0]] + "/" + name.split("/", 1)[1] not in members]
    assert not missing, missing


def test_the_wheel_installs_and_runs_in_a_fresh_environment(dist, tmp_path):
    wheel, _ = dist
    env_dir = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env_dir)], check=True, timeout=120)
    python = env_dir / "bin" / "python"
    fresh_site = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                     capture_output=True, text=True, check=True).stdout.strip())
    (fresh_site / "project-deps.pth").write_text("\n".join(site.getsitepackages()) + "\n")
    install = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps",
                              "--no-index", "-q", str(wheel)], capture_output=True, text=True, timeout=300)
    if install.returncode and "no such option: --python" in install.stderr:
        pytest.skip("pip too old for --python")
    assert install.returncode == 0, install.stderr[-2000:]
    work = tmp_path / "elsewhere"
    work.mkdir()
    run = lambda *argv: subprocess.run(argv, capture_output=True, text=True, timeout=300, cwd=work)  # noqa: E731
    where = run(str(python), "-c", "import dialshift; print(dialshift.__file__)")
    assert where.stdout.startswith(str(fresh_site)), where.stdout + where.stderr  # the wheel, not the checkout
    helped = run(str(env_dir / "bin" / "dialshift"), "--help")
    assert helped.returncode == 0 and "leaderboard" in helped.stdout and "build" in helped.stdout
    listed = run(str(env_dir / "bin" / "dialshift"), "configs")
    assert listed.returncode == 0 and "uw_0.30" in listed.stdout and "clinc14_cov" in listed.stdout, listed.stderr
    code = ("import dialshift, evaluate; p = dialshift.metric_path('brier'); m = evaluate.load(p); "
            "print(p); print(round(m.compute(predictions=[[1.0, 0.0], [0.5, 0.5]], references=[0, 1])['brier'], 4))")
    loaded = run(str(python), "-c", code)
    assert loaded.returncode == 0, loaded.stderr[-2000:]
    path, value = loaded.stdout.strip().splitlines()[-2:]
    assert path.startswith(str(fresh_site)) and float(value) == 0.25
