"""The outside researcher's path: the built wheel with its ``[train]`` extra, installed by the README's install lines
into a bare virtual environment outside the clone, runs every command and Python block of the README in a folder of
its own (tests/readme_blocks.py: what is skipped or shortened is marked in the README, with the reason).

The README's quick start downloads DailyDialog from a local mirror (an http.server serving the real files of
``$DIALSHIFT_DATA_DIR``; the release's zip archives are not on this machine, so their members are put in place first
and ``dialshift download`` fetches and checks the rest), builds two configs, trains a tiny ranker for a few steps,
evaluates and scores it. About four minutes of CPU, most of it installing torch and transformers.
"""

import functools
import http.server
import json
import shlex
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from readme_blocks import environment, readme_blocks, run_block
from test_wheel import clean_source_copy

pytest.importorskip("build")
pytestmark = [pytest.mark.wheel, pytest.mark.slow, pytest.mark.data]
REPO_ROOT = Path(__file__).resolve().parent.parent
RAW_BASE = "https://raw.githubusercontent.com/"


def build_wheel(out: Path) -> Path:
    """``python -m build --wheel`` of a clean copy of the tree (tracked and new files, not ignored ones)."""
    source = clean_source_copy(out / "src")
    result = subprocess.run([sys.executable, "-m", "build", "--wheel", "--outdir", str(out / "dist"), str(source)],
                            capture_output=True, text=True, timeout=600, env=environment(Path(sys.executable).parent))
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    return next((out / "dist").glob("dialshift-*.whl"))


def install_as_the_readme_says(python: Path, wheel: Path, lines: list[str]) -> None:
    """The README's install lines with this pip (``--python`` the fresh environment), the built wheel in place of the
    git URL and no ``--index-url`` (this machine's pip finds the CPU torch in its own find-links)."""
    for line in lines:
        argv = shlex.split(line)
        assert argv[:2] == ["pip", "install"], line
        if "--index-url" in argv:
            at = argv.index("--index-url")
            del argv[at: at + 2]
        argv = [str(REPO_ROOT / "constraints.txt") if arg == "constraints.txt" else
                f"{wheel}[train]" if arg.startswith("dialshift[train] @ ") else arg for arg in argv[2:]]
        result = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-compile",
                                 *argv], capture_output=True, text=True, timeout=900,
                                env=environment(Path(sys.executable).parent))
        assert result.returncode == 0, f"{line}\n{result.stderr[-3000:]}"


def mirror_and_seed(raw: Path, data: Path, mirror: Path) -> None:
    """Lay out DailyDialog's files as its source repository serves them (``mirror``), and put the members of the
    release's archives, which this machine lacks, into ``data``: ``dialshift download`` fetches and checks the rest."""
    manifest = json.loads((REPO_ROOT / "dialshift" / "sources" / "manifest.json").read_text())["corpora"]
    for item in manifest["dailydialog"]["files"]:
        if "url" in item:
            target = mirror / item["url"][len(RAW_BASE):]
        else:
            target = data / "dailydialog" / item["path"]
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(raw / "dailydialog" / item["path"], target)


class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture
def mirror_server(tmp_path):
    folder = tmp_path / "mirror"
    folder.mkdir()
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(folder)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield folder, f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def user_corpus(folder: Path) -> None:
    """The JSON-lines files the README's shift example reads (``my_train.jsonl``, ``my_test.jsonl``)."""
    candidates = ["Fine , thanks .", "It is late .", "No idea ."]
    dialogues = {"my_train": [["The car is red .", "Is it fast ?"], ["We went home .", "Good ."]],
                 "my_test": [["Is the house big ?", "Yes , a very big house ."], ["The automobile is big ."],
                             ["Hello .", "Is the car big today ?", "Yes , the house is big ."]]}
    for name, rows in dialogues.items():
        lines = [json.dumps({"id": f"{name}-{i}", "context": turns, "candidates": candidates, "label": i % 3})
                 for i, turns in enumerate(rows)]
        (folder / f"{name}.jsonl").write_text("\n".join(lines) + "\n")


def test_the_wheel_with_train_runs_every_readme_command(raw_data_dir, tmp_path, mirror_server):
    if not Path("/usr/share/wordnet/data.noun").is_file():
        pytest.skip("the README's uw_0.30 needs Debian's wordnet-base")
    started = time.perf_counter()
    blocks = readme_blocks()
    wheel = build_wheel(tmp_path / "wheel")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    (install,) = [block for block in blocks if block.install]
    install_as_the_readme_says(python, wheel, install.commands())
    installed = time.perf_counter()

    work, data = tmp_path / "work", tmp_path / "data"
    work.mkdir()
    mirror_and_seed(raw_data_dir, data, mirror_server[0])
    user_corpus(work)
    env = environment(venv / "bin", DIALSHIFT_DATA_DIR=str(data), DIALSHIFT_DOWNLOAD_MIRROR=mirror_server[1],
                      DIALSHIFT_CACHE_DIR=str(tmp_path / "cache"), HF_HOME=str(tmp_path / "hf"),
                      OMP_NUM_THREADS="1")
    where = subprocess.run([str(python), "-c", "import dialshift, torch; print(dialshift.__file__, torch.__version__)"],
                           cwd=work, env=env, capture_output=True, text=True, check=True).stdout.split()
    assert where[0].startswith(str(venv)) and where[1].endswith("+cpu"), where  # the wheel, the CPU torch
    ran, skipped = [], []
    for block in blocks:
        if block.skip is not None or block.install:
            skipped.append(f"README.md:{block.line}: {block.skip or 'installed above'}")
            continue
        ran += run_block(block, work, env, str(python))
    print(f"wheel test: install {installed - started:.0f} s, README blocks {time.perf_counter() - installed:.0f} s; "
          f"{len(ran)} commands run; skipped: {skipped}")
    assert (data / "dailydialog" / "dialogues_act.txt").is_file()  # downloaded from the mirror
    evaluated = json.loads((work / "results" / "vanilla" / "results.json").read_text())
    rescored = json.loads((work / "results" / "rescored" / "results.json").read_text())
    assert evaluated["configs"].keys() == {"dailydialog", "uw_0.30"}
    assert rescored["results"] == evaluated["results"]  # `dialshift score` of the prediction files: the same scores
