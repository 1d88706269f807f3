"""The leaderboard Space (hub_cards/leaderboard/app.py) started on localhost and called with gradio_client: it shows
the store's table and scores an uploaded submission with the same code as `dialshift leaderboard score`."""

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from test_leaderboard import make_dataset, score, write_predictions, zip_folder

from dialshift.leaderboard.store import record_path

pytest.importorskip("gradio")
gradio_client = pytest.importorskip("gradio_client")
APP = Path(__file__).resolve().parent.parent / "hub_cards" / "leaderboard" / "app.py"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture(scope="module")
def space(tmp_path_factory):
    root = tmp_path_factory.mktemp("space")
    dataset = make_dataset(root / "dialshift")
    store = root / "results"
    assert score(write_predictions(root / "first", dataset, seed=0), dataset, store) == 0
    port = free_port()
    env = dict(os.environ, LEADERBOARD_RESULTS=str(store), DIALSHIFT_DATASET=str(dataset), LEADERBOARD_BOOTSTRAP="50",
               GRADIO_SERVER_PORT=str(port), GRADIO_ANALYTICS_ENABLED="False", HF_HUB_OFFLINE="1")
    process = subprocess.Popen([sys.executable, str(APP)], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True)
    url = f"http://127.0.0.1:{port}/"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"the Space exited: {process.stdout.read()[-2000:]}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                break
        except OSError:
            time.sleep(0.5)
    else:
        process.kill()
        pytest.fail("the Space did not start within 120 s")
    yield gradio_client.Client(url, verbose=False), root, dataset, store
    process.terminate()
    process.wait(timeout=30)


def test_the_space_shows_the_table_and_scores_an_upload(space):
    client, root, dataset, store = space
    shown = client.predict("dailydialog-response_ranking", api_name="/table")
    assert len(shown["data"]) == 1 and shown["data"][0][:5] == [1, "org/tiny-ranker", "vanilla", 4400000, "3 of 3"]
    assert any("ECE" in header and "↓" in header for header in shown["headers"])

    folder = write_predictions(root / "second", dataset, seed=1)
    meta = json.loads((folder / "submission.json").read_text())
    (folder / "submission.json").write_text(json.dumps({**meta, "method": "ensemble"}))
    message, table = client.predict(gradio_client.handle_file(str(zip_folder(folder, root / "second.zip"))),
                                    api_name="/submit")
    assert message.startswith("Scored org/tiny-ranker (ensemble) on 3 dailydialog configs"), message
    assert sorted(row[2] for row in table["data"]) == ["ensemble", "vanilla"]
    record = json.loads(record_path(store, "dailydialog", "org/tiny-ranker", "ensemble").read_text())
    assert score(folder, dataset, root / "cli", "--bootstrap", "50") == 0  # the same code as the CLI
    cli = json.loads(record_path(root / "cli", "dailydialog", "org/tiny-ranker", "ensemble").read_text())
    assert record["results"] == cli["results"]

    forged = write_predictions(root / "forged", dataset, seed=2)
    (forged / "results.json").write_text("{}")
    message, _ = client.predict(gradio_client.handle_file(str(zip_folder(forged, root / "forged.zip"))),
                                api_name="/submit")
    assert message.startswith("Rejected: ") and "member 'results.json' is not part of a submission" in message
