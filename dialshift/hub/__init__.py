"""Hub dataset folders: write, read back, validate and push (one module per job, listed below).

A folder holds one sub-folder of parquet files per config (``<config>/<split>-00000-of-00001.parquet``, the layout
``DatasetDict.push_to_hub`` produces) and a ``README.md`` whose YAML declares ``configs`` (data files per split) and
``dataset_info`` (features and split sizes per config), the licences and task tags, followed by a card body rendered
from ``dialshift_cards/dataset_card.md`` (``hub_cards/`` in the repository). Such a folder loads offline with
``datasets.load_dataset(folder, config)`` and uploads unchanged to the Hub.

Safety rules (docs/safety.md):

* The builder only replaces what it owns. It marks its folders with ``.dialshift-build.json`` (the files it wrote),
  refuses any other non-empty folder, and carries every file it did not write (notes, ``.git/``) into the new folder.
* Writes are atomic: the new folder is assembled beside the target and swapped in by renames (:mod:`dialshift.io`),
  so an interrupted build leaves the previous folder intact; the next build removes the leftovers.
* Writers of one folder take a lock beside it (``.<name>.lock``) and read the folder's state only under it, so two
  builds into one folder merge instead of losing a config.
* The card records a fingerprint (size, sha256) of every parquet file; ``validate`` and a rebuild check it.
* A card's ``data_files`` only name files inside the folder; a push never deletes remote files unless asked to.

The same inputs give byte-identical files.

The modules, one job each: :mod:`~dialshift.hub.layout` (names and paths), :mod:`~dialshift.hub.marker` (the build
marker), :mod:`~dialshift.hub.reading` (the card, declared configs and the one data-file resolver
:func:`~dialshift.hub.reading.data_files`), :mod:`~dialshift.hub.fingerprints`, :mod:`~dialshift.hub.ownership`
(which folders a build may replace), :mod:`~dialshift.hub.locking`, :mod:`~dialshift.hub.carry` (foreign files on
rebuild), :mod:`~dialshift.hub.card` (rendering), :mod:`~dialshift.hub.writing`, :mod:`~dialshift.hub.validation`,
:mod:`~dialshift.hub.push` (dataset repositories) and :mod:`~dialshift.hub.spaces` (metric and leaderboard Spaces).
This package re-exports their public names.
"""

from dialshift.hub.card import FamilyCard, render_card
from dialshift.hub.fingerprints import check_config_files, config_fingerprints, file_fingerprint, folder_fingerprint
from dialshift.hub.layout import MARKER, MARKER_FORMAT, METADATA_KEY, README, output_path, parquet_name, rebuild_hint
from dialshift.hub.locking import LOCK_TIMEOUT, folder_lock, lock_path
from dialshift.hub.marker import marker_configs, read_marker, rebuild_all_hint
from dialshift.hub.ownership import check_card_matches_marker, check_output_folder, owned_files
from dialshift.hub.push import PushPlan, check_repo_id, make_api, push_hub_folder, push_plan, upload_plan
from dialshift.hub.reading import data_files, declared_configs, folder_configs, folder_metadata, read_card
from dialshift.hub.spaces import LEADERBOARD_SPACE, SpacePlan, push_spaces, space_plans
from dialshift.hub.validation import ValidationReport, validate_hub_folder
from dialshift.hub.writing import write_hub_folder

__all__ = [
    "FamilyCard", "render_card",
    "check_config_files", "config_fingerprints", "file_fingerprint", "folder_fingerprint",
    "MARKER", "MARKER_FORMAT", "METADATA_KEY", "README", "output_path", "parquet_name", "rebuild_hint",
    "LOCK_TIMEOUT", "folder_lock", "lock_path",
    "marker_configs", "read_marker", "rebuild_all_hint",
    "check_card_matches_marker", "check_output_folder", "owned_files",
    "PushPlan", "check_repo_id", "make_api", "push_hub_folder", "push_plan", "upload_plan",
    "data_files", "declared_configs", "folder_configs", "folder_metadata", "read_card",
    "LEADERBOARD_SPACE", "SpacePlan", "push_spaces", "space_plans",
    "ValidationReport", "validate_hub_folder",
    "write_hub_folder",
]
