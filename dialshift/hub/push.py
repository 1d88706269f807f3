"""Pushing a validated folder to a Hub dataset repository: its card, declared parquet files and provenance file
(options digests, raw-corpus checksums) in one commit; remote files are deleted only when asked."""

import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from dialshift import __version__
from dialshift.errors import DialshiftError
from dialshift.hub.layout import README, parquet_name
from dialshift.hub.reading import declared_configs, folder_metadata
from dialshift.hub.validation import validate_hub_folder
from dialshift.provenance import PROVENANCE_FILE, provenance_bytes


def upload_plan(folder) -> list[str]:
    """The exact files :func:`push_hub_folder` uploads (relative paths): the card, then per config its declared
    parquet files and its provenance file (:mod:`dialshift.provenance`, written at push time)."""
    folder = Path(folder)
    files = [README]
    for name, splits in sorted(declared_configs(folder).items()):
        files.extend(f"{name}/{parquet_name(split)}" for split in sorted(splits))
        files.append(f"{name}/{PROVENANCE_FILE}")
    return files


def check_repo_id(repo_id: str) -> str:
    """Refuse a repository id that is not ``ORG/NAME`` (one line), before any work."""
    from huggingface_hub.utils import HFValidationError, validate_repo_id

    if repo_id.count("/") != 1 or not all(repo_id.split("/")):
        raise DialshiftError(f"--repo-id {repo_id!r:.80} must look like ORG/NAME, e.g. my-org/dialshift")
    try:
        validate_repo_id(repo_id)
    except HFValidationError as error:
        reason = str(error).splitlines()[0][:160]
        raise DialshiftError(f"--repo-id {repo_id!r:.80} is not a valid Hub repository id ({reason})") from None
    return repo_id


def make_api(token=None):
    """The Hub client (tests replace this function with a fake)."""
    from huggingface_hub import HfApi

    return HfApi(token=token)


@dataclass
class PushPlan:
    """What a push does: ``uploads`` (local relative paths = paths in the repo), ``deletions`` (remote paths, only
    with ``delete_remote_extras``), ``kept_remote`` (remote parquet files not in the folder, left alone) and
    ``remote_error`` (why the remote files could not be listed, else ``None``)."""

    uploads: list
    deletions: list = field(default_factory=list)
    kept_remote: list = field(default_factory=list)
    remote_error: str | None = None


def push_plan(folder, repo_id: str, *, api, revision=None, delete_remote_extras: bool = False,
              strict: bool = True) -> PushPlan:
    """Compare the folder's :func:`upload_plan` with the remote repository's files.

    Remote parquet and provenance files the folder does not have are kept unless ``delete_remote_extras``; other
    remote files
    (``.gitattributes``, images) are never deleted. A repository or branch that does not exist yet has no files.
    With ``strict=False`` a failure to list the remote files is recorded in ``remote_error`` instead of raised.
    """
    from huggingface_hub.errors import RepositoryNotFoundError, RevisionNotFoundError

    plan = PushPlan(uploads=upload_plan(folder))
    try:
        remote = api.list_repo_files(repo_id, repo_type="dataset", revision=revision)
    except (RepositoryNotFoundError, RevisionNotFoundError):
        remote = []
    except Exception as error:  # offline, network, auth
        if strict:
            raise
        plan.remote_error = f"{type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}"
        return plan
    extras = sorted(path for path in remote if path.endswith((".parquet", f"/{PROVENANCE_FILE}"))
                    and path not in plan.uploads)
    if delete_remote_extras:
        plan.deletions = extras
    else:
        plan.kept_remote = extras
    return plan


def push_hub_folder(folder, repo_id: str, *, token=None, private: bool = False, revision=None, api=None,
                    delete_remote_extras: bool = False) -> str:
    """Validate the folder, then upload its card and declared parquet files as a dataset repo in one commit; return
    the commit URL.

    Files are uploaded by their declared paths, so a symlinked config folder is uploaded like any other. Remote
    files the folder does not have are kept; with ``delete_remote_extras`` the remote parquet files not in the
    folder are deleted in the same commit.
    """
    from huggingface_hub import CommitOperationAdd, CommitOperationDelete

    check_repo_id(repo_id)
    folder = Path(folder)
    report = validate_hub_folder(folder)
    if not report.ok:
        raise DialshiftError(f"{folder} does not validate ({report.problems[0]}); run `dialshift validate {folder}`")
    api = api or make_api(token)
    api.create_repo(repo_id, repo_type="dataset", private=private, exist_ok=True)
    plan = push_plan(folder, repo_id, api=api, revision=revision, delete_remote_extras=delete_remote_extras,
                     strict=delete_remote_extras)
    metadata = folder_metadata(folder)
    with tempfile.TemporaryDirectory(prefix="dialshift-push-") as scratch:
        sources = {}
        for path in plan.uploads:
            name, _, file = path.partition("/")
            sources[path] = folder / path
            if file == PROVENANCE_FILE:
                sources[path] = Path(scratch) / path
                sources[path].parent.mkdir()
                sources[path].write_bytes(provenance_bytes(name, metadata.get(name, {})))
        operations = [CommitOperationAdd(path_in_repo=path, path_or_fileobj=str(source))
                      for path, source in sources.items()]
        operations += [CommitOperationDelete(path_in_repo=path) for path in plan.deletions]
        commit = api.create_commit(
            repo_id=repo_id,
            repo_type="dataset",
            revision=revision,
            operations=operations,
            commit_message=f"dialshift {__version__}: {len(declared_configs(folder))} configs",
        )
    return str(getattr(commit, "commit_url", commit))
