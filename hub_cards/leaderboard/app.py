"""The dialshift leaderboard Space: the results table of each family, and scoring of an uploaded submission with the
same code as `dialshift leaderboard score` (dialshift.leaderboard).

Settings (environment): ``LEADERBOARD_RESULTS``, the results store (default: ``results/`` beside this file);
``DIALSHIFT_DATASET``, a dataset folder with the gold answers (default: the files of ``$DIALSHIFT_HUB_REPO``, the
published dataset, downloaded once). Run locally with ``python app.py`` (``GRADIO_SERVER_PORT`` picks the port).
"""

import os
from pathlib import Path

import gradio as gr

from dialshift.errors import DialshiftError
from dialshift.leaderboard import family_tables, read_store, score_submission, table_frame, write_record

HERE = Path(__file__).resolve().parent
RESULTS = Path(os.environ.get("LEADERBOARD_RESULTS", HERE / "results"))


def dataset_folder() -> Path:
    """The gold answers: ``$DIALSHIFT_DATASET``, else a snapshot of the published dataset repository."""
    if os.environ.get("DIALSHIFT_DATASET"):
        return Path(os.environ["DIALSHIFT_DATASET"])
    from huggingface_hub import snapshot_download

    from dialshift.loading import hub_repo

    return Path(snapshot_download(hub_repo(), repo_type="dataset"))


def tables():
    return family_tables(read_store(RESULTS)) if RESULTS.is_dir() else []


def families() -> list[str]:
    """The tables' keys: a family, and its task (``korean-pairwise_selection``)."""
    return [table.key for table in tables()]


def table(family: str, track: str = "full"):
    """The leaderboard table of a key of :func:`families` (or a family's first table on ``track``): the static page's
    columns."""
    import pandas as pd

    for item in tables():
        if family == item.key or (family == item.family and item.track == track):
            return table_frame(item)
    return pd.DataFrame()


def submit(path) -> tuple[str, object]:
    """Check and score an uploaded submission (.zip); store it; return a message and its family's table."""
    if not path:
        return "Upload a submission .zip (submission.json and predictions/<config>.jsonl).", table("")
    try:
        record = score_submission(path, dataset_folder(), replicates=int(os.environ.get("LEADERBOARD_BOOTSTRAP",
                                                                                        1000)))
    except DialshiftError as error:
        return f"Rejected: {' '.join(str(error).split())}", table("")
    _, replaced = write_record(RESULTS, record)
    config = record["config"]
    return (f"Scored {config['model_name']} ({config['method']}) on {len(record['results'])} {config['family']} "
            f"configs ({'replaced the earlier record of this model and method' if replaced else 'new record'}).",
            table(config["family"], config.get("track", "full")))


def build_app() -> gr.Blocks:
    names = families()
    with gr.Blocks(title="dialshift leaderboard") as app:
        gr.Markdown("# dialshift leaderboard\nEvery value is recomputed from gold by `dialshift leaderboard score`; "
                    "↑ higher is better, ↓ lower is better.")
        with gr.Tab("Results"):
            family = gr.Dropdown(names, value=names[0] if names else None, label="family")
            shown = gr.Dataframe(table(names[0]) if names else None, interactive=False)
            family.change(table, family, shown, api_name="table")
        with gr.Tab("Submit"):
            upload = gr.File(label="submission .zip", file_types=[".zip"], type="filepath")
            message = gr.Textbox(label="result", interactive=False)
            scored = gr.Dataframe(interactive=False)
            gr.Button("Score").click(submit, upload, [message, scored], api_name="submit")
    return app


if __name__ == "__main__":
    build_app().launch(server_name=os.environ.get("GRADIO_SERVER_NAME", "127.0.0.1"))
