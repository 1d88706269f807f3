"""The dialshift leaderboard: checked submissions scored from gold into a results store, exported as model-index
metadata and rendered as a static page (and by the Gradio Space in ``hub_cards/leaderboard/``).

* :mod:`dialshift.leaderboard.submission`: the submission layout, its schema and size limits, safe zip extraction;
* :mod:`dialshift.leaderboard.store`: :func:`score_submission` (through :mod:`dialshift.scoring`) and the store;
* :mod:`dialshift.leaderboard.export`: ``model-index`` entries (``huggingface_hub.EvalResult``);
* :mod:`dialshift.leaderboard.render`: the per-family tables and the static page.

See docs/leaderboard.md.
"""

from dialshift.leaderboard.export import eval_results, model_index
from dialshift.leaderboard.render import family_tables, render_site, table_frame
from dialshift.leaderboard.store import read_store, record_path, score_submission, write_record
from dialshift.leaderboard.submission import Limits, Submission, open_submission

__all__ = ["Limits", "Submission", "eval_results", "family_tables", "model_index", "open_submission", "read_store",
           "record_path", "render_site", "score_submission", "table_frame", "write_record"]
