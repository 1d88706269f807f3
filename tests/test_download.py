"""`dialshift download` against a local HTTP server on 127.0.0.1 serving fixture copies of the sources (and a
corrupted file, a truncated response, a 404, a slow server), never the internet; the shipped manifest against the real
corpora (skipped without them)."""

import hashlib
import http.server
import io
import os
import threading
import time
import zipfile
from pathlib import Path

import pytest

import dialshift.download
from dialshift.cli import main
from dialshift.download import RAW_BASE, download
from dialshift.errors import DialshiftError, SourceError
from dialshift.sources import sources
from dialshift.sources.manifest import check_corpus, parse_manifest, shipped_manifest

COMMIT = "c" * 40


class Server:
    """A threaded HTTP server on 127.0.0.1: ``files`` maps a URL path to its bytes; ``faults`` maps a path to
    ``"404"``, ``"truncate"`` (half the body, then the connection closes) or ``"slow"`` (no answer for 3 s)."""

    def __init__(self, files: dict[str, bytes]):
        self.files, self.faults, self.requests = dict(files), {}, []
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                path = self.path.lstrip("/")
                server.requests.append(path)
                fault = server.faults.get(path)
                if fault == "slow":
                    time.sleep(3)
                if path not in server.files or fault == "404":
                    self.send_error(404)
                    return
                body = server.files[path]
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body[: len(body) // 2] if fault == "truncate" else body)

            def log_message(self, *args):
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.httpd.handle_error = lambda request, address: None  # a client that timed out and left: not news
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


def zip_bytes(members: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def entry(path: str, data: bytes, **where) -> dict:
    return {"path": path, "size": len(data), "sha256": hashlib.sha256(data).hexdigest(), **where}


#: Two fixture corpora: ``plain`` (open licence, two raw files) and ``zipped`` (non-commercial, a raw file and two
#: members of an archive).
PLAIN = {"a.txt": b"alpha\n", "sub/b.txt": b"beta\n" * 100}
ZIPPED_RAW = {"readme.txt": b"the release\n"}
ZIPPED_MEMBERS = {"split/x.txt": b"x line\n" * 50, "split/y.txt": b"y line\n"}


def fixture_sources() -> tuple[dict, dict[str, bytes]]:
    """(manifest document, {URL path: bytes}) of the two fixture corpora."""
    files = {f"own/plain/{COMMIT}/data/{name}": data for name, data in PLAIN.items()}
    files.update({f"own/zipped/{COMMIT}/{name}": data for name, data in ZIPPED_RAW.items()})
    archive = zip_bytes(ZIPPED_MEMBERS)
    files[f"own/zipped/{COMMIT}/data/split.zip"] = archive
    plain = [entry(name, data, url=f"{RAW_BASE}/own/plain/{COMMIT}/data/{name}") for name, data in PLAIN.items()]
    zipped = [entry(name, data, url=f"{RAW_BASE}/own/zipped/{COMMIT}/{name}") for name, data in ZIPPED_RAW.items()]
    zipped += [entry(name, data, archive="split.zip", member=name) for name, data in ZIPPED_MEMBERS.items()]
    document = {"format": 1, "corpora": {
        "plain": {"licence": "CC BY 4.0", "licence_kind": "open", "licence_note": "fixture",
                  "sources": [{"repository": "own/plain", "commit": COMMIT}], "files": plain},
        "zipped": {"licence": "CC BY-NC-SA 4.0", "licence_kind": "non-commercial", "licence_note": "fixture",
                   "sources": [{"repository": "own/zipped", "commit": COMMIT}], "files": zipped,
                   "archives": {"split.zip": {"url": f"{RAW_BASE}/own/zipped/{COMMIT}/data/split.zip",
                                              "size": len(archive),
                                              "sha256": hashlib.sha256(archive).hexdigest()}}}}}
    return document, files


@pytest.fixture
def server():
    document, files = fixture_sources()
    running = Server(files)
    running.manifest = parse_manifest(document)
    yield running
    running.close()


def fetch(server, data_dir, corpora=None, **kwargs):
    kwargs = {"mirror": server.url, "manifest": server.manifest, "progress": False, "log": lambda line: None,
              **kwargs}
    return download(corpora, data_dir, **kwargs)


def tree(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` (hidden ones included) and its bytes."""
    return {path.relative_to(folder).as_posix(): path.read_bytes() for path in sorted(folder.rglob("*"))
            if path.is_file()}


def test_download_writes_the_layout_then_only_verifies(server, tmp_path):
    data = tmp_path / "data"
    results = fetch(server, data, accept=["zipped"])
    assert [(result.name, result.fetched) for result in results] == [("plain", 2), ("zipped", 3)]
    assert tree(data) == {**{f"plain/{name}": body for name, body in PLAIN.items()},
                          **{f"zipped/{name}": body for name, body in {**ZIPPED_RAW, **ZIPPED_MEMBERS}.items()}}
    requests = len(server.requests)
    again = fetch(server, data)  # intact: no licence to accept again, nothing fetched
    assert [result.fetched for result in again] == [0, 0] and len(server.requests) == requests


def test_an_altered_file_is_fetched_again_and_files_of_the_users_stay(server, tmp_path):
    data = tmp_path / "data"
    fetch(server, data, ["plain"])
    (data / "plain" / "sub" / "b.txt").write_bytes(b"edited\n")
    (data / "plain" / "NOTES.md").write_text("mine\n")
    (result,) = fetch(server, data, ["plain"])
    assert result.fetched == 1 and server.requests[-1].endswith("data/sub/b.txt")
    assert (data / "plain" / "sub" / "b.txt").read_bytes() == PLAIN["sub/b.txt"]
    assert (data / "plain" / "NOTES.md").read_text() == "mine\n"


def test_a_non_commercial_licence_must_be_accepted_by_name(server, tmp_path):
    data, lines = tmp_path / "data", []
    with pytest.raises(DialshiftError, match=r"zipped is CC BY-NC-SA 4.0 \(non-commercial\).*--accept-licence zipped"):
        fetch(server, data, log=lines.append)
    assert lines == ["plain: licence CC BY 4.0; fixture; source own/plain@ccccccc",
                     "zipped: licence CC BY-NC-SA 4.0 (non-commercial); fixture; source own/zipped@ccccccc"]
    assert server.requests == [] and not (data / "zipped").exists() and not (data / "plain").exists()
    with pytest.raises(DialshiftError, match=r"--accept-licence names unknown corpus 'nope'"):
        fetch(server, data, accept=["nope"])


@pytest.mark.parametrize(("fault", "message"), [
    ("corrupt", r"sha256 .* differs from the manifest"),
    ("truncate", r"truncated"),
    ("404", r"HTTP 404"),
    ("slow", r"timed out"),
])
def test_a_failed_download_leaves_the_previous_folder_and_no_partial_file(server, tmp_path, fault, message):
    data = tmp_path / "data"
    fetch(server, data, ["plain"])
    (data / "plain" / "sub" / "b.txt").unlink()
    before = tree(tmp_path)
    path = f"own/plain/{COMMIT}/data/sub/b.txt"
    if fault == "corrupt":
        server.files[path] = b"BETA\n" * 100  # same size, other bytes
    else:
        server.faults[path] = fault
    with pytest.raises(DialshiftError, match=message) as error:
        fetch(server, data, ["plain"], timeout=0.5)
    assert path in str(error.value) and "\n" not in str(error.value)
    assert tree(tmp_path) == before  # nothing changed, no temporary or partial file left
    assert sorted(os.listdir(data)) == ["plain"]


def test_an_archive_member_that_is_not_the_pinned_file_is_refused(server, tmp_path):
    document, _ = fixture_sources()
    altered = zip_bytes({**ZIPPED_MEMBERS, "split/y.txt": b"Y LINE\n"})
    document["corpora"]["zipped"]["archives"]["split.zip"].update(size=len(altered),
                                                                  sha256=hashlib.sha256(altered).hexdigest())
    server.files[f"own/zipped/{COMMIT}/data/split.zip"] = altered
    with pytest.raises(DialshiftError, match=r"split.zip: member 'split/y.txt' is not the file the manifest records"):
        fetch(server, tmp_path / "data", ["zipped"], accept=["zipped"], manifest=parse_manifest(document))
    assert not (tmp_path / "data" / "zipped").exists() and os.listdir(tmp_path / "data") == []


def test_the_command_line(server, tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(dialshift.download, "shipped_manifest", lambda: server.manifest)
    data = str(tmp_path / "data")
    assert main(["download", "--data-dir", data, "--mirror", server.url, "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "zipped: licence CC BY-NC-SA 4.0 (non-commercial)" in err
    assert err.splitlines()[-1].startswith("dialshift download: error: zipped is CC BY-NC-SA 4.0 (non-commercial)")
    monkeypatch.setenv("DIALSHIFT_DOWNLOAD_MIRROR", server.url)
    assert main(["download", "--data-dir", data, "--accept-licence", "zipped", "--no-progress"]) == 0
    assert main(["download", "--data-dir", data, "--corpus", "zipped", "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "plain: downloaded 2 file(s)" in out and "zipped: already intact (verified, nothing downloaded)" in out
    assert main(["download", "--data-dir", data, "--corpus", "nope"]) == 2
    assert "unknown corpus 'nope'; the corpora are plain, zipped" in capsys.readouterr().err


@pytest.mark.parametrize("source", sorted(sources()))
def test_a_missing_corpus_names_the_download_command(tmp_path, source):
    info = sources()[source]
    corpus = info.path.split("/")[0]
    with pytest.raises(SourceError, match=rf"not found; get it with `dialshift download --corpus {corpus}`"):
        info.load(tmp_path)


def test_the_shipped_manifest_pins_every_file_of_every_corpus():
    manifest = shipped_manifest()
    assert set(manifest) == {"banking77", "clinc150", "dailydialog", "hwu64", "koradvmrs", "korean_chitchat",
                             "massive", "rostd", "snips", "ubuntu_irc"}
    for corpus in manifest.values():
        for item in corpus.files:
            url = item.url or next(archive.url for archive in corpus.archives if archive.name == item.archive)
            repository, commit = url[len(RAW_BASE) + 1:].split("/")[:2], url[len(RAW_BASE) + 1:].split("/")[2]
            assert ("/".join(repository), commit) in corpus.sources and len(commit) == 40
    assert {name for name, corpus in manifest.items() if corpus.needs_acceptance} == {"dailydialog", "rostd"}


@pytest.mark.data
def test_the_manifest_matches_the_real_corpora(raw_data_dir):
    for corpus in shipped_manifest().values():
        assert check_corpus(raw_data_dir, corpus) == {}, corpus.name


def test_sources_shows_each_corpus_licence_source_and_state(tmp_path, capsys):
    assert main(["sources", "hwu64", "rostd_ood", "--data-dir", str(tmp_path)]) == 2
    rows = capsys.readouterr().out.split("raw corpora")[1].splitlines()[3:]
    assert rows[0].split() == ["hwu64", "CC", "BY", "4.0", "jianguoz/Few-Shot-Intent-Detection@fa95533", "absent"]
    assert rows[1].split() == ["rostd", "unknown", "vgtomahawk/LR_GC_OOD@7650edf", "absent"]


@pytest.mark.data
def test_sources_names_an_altered_file(raw_data_dir, tmp_path, capsys):
    import shutil

    shutil.copytree(raw_data_dir / "hwu64", tmp_path / "hwu64")
    label = tmp_path / "hwu64" / "train" / "label"
    label.write_bytes(label.read_bytes().replace(b"alarm_query", b"alarm_qUery", 1))
    assert main(["sources", "hwu64", "--data-dir", str(tmp_path)]) == 2  # the reader sees 65 intents
    out = capsys.readouterr().out
    (row,) = [line for line in out.split("raw corpora")[1].splitlines() if line.startswith("hwu64")]
    assert row.endswith("1 of 10 files bad: train/label sha256 differs from the manifest")


def real_sources(raw_data_dir: Path, names) -> tuple[dict, dict[str, bytes]]:
    """(manifest document, {URL path: bytes}) serving the real corpora ``names`` as their sources lay them out. The
    archives are made here from their members (the real ones are not on this machine), so their size and sha256 are
    those of the zips made; every member is still checked against the shipped manifest."""
    import json
    from importlib import resources

    document = json.loads(resources.files("dialshift.sources").joinpath("manifest.json").read_text(encoding="utf-8"))
    document["corpora"] = {name: document["corpora"][name] for name in names}
    files = {}
    for name, corpus in document["corpora"].items():
        members = {}
        for item in corpus["files"]:
            body = (raw_data_dir / name / item["path"]).read_bytes()
            if "url" in item:
                files[item["url"][len(RAW_BASE) + 1:]] = body
            else:
                members.setdefault(item["archive"], {})[item["member"]] = body
        for archive, content in members.items():
            body = zip_bytes(content)
            record = corpus["archives"][archive]
            record.update(size=len(body), sha256=hashlib.sha256(body).hexdigest())
            files[record["url"][len(RAW_BASE) + 1:]] = body
    return document, files


@pytest.mark.data
@pytest.mark.parametrize(("selection", "corpora"), [
    ({"families": "korean"}, ["koradvmrs", "korean_chitchat"]),
    pytest.param({"configs": "dailydialog"}, ["dailydialog"], marks=pytest.mark.slow),
])
def test_a_build_from_downloaded_corpora_equals_a_build_from_the_originals(raw_data_dir, tmp_path, selection,
                                                                           corpora):
    from dialshift.build import build

    document, files = real_sources(raw_data_dir, corpora)
    server = Server(files)
    try:
        download(None, tmp_path / "data", accept=corpora, mirror=server.url, manifest=parse_manifest(document),
                 progress=False, log=lambda line: None)
    finally:
        server.close()
    for corpus in corpora:  # what the readers read: byte-identical to the originals
        assert check_corpus(tmp_path / "data", shipped_manifest()[corpus]) == {}
    build(data_dir=tmp_path / "data", out=tmp_path / "downloaded", progress=False, **selection)
    build(data_dir=raw_data_dir, out=tmp_path / "original", progress=False, **selection)
    parquet = {folder: {path.relative_to(tmp_path / folder).as_posix(): path.read_bytes()
                        for path in sorted((tmp_path / folder).rglob("*.parquet"))}
               for folder in ("downloaded", "original")}
    assert parquet["downloaded"] == parquet["original"] and len(parquet["original"]) >= 3
    from dialshift.hub import folder_metadata

    recorded = {name: entry["raw_corpora"] for name, entry in folder_metadata(tmp_path / "downloaded").items()}
    expected = {corpus: {"checksum": shipped_manifest()[corpus].digest, "matches_manifest": True} for corpus in corpora}
    assert all(corpora_of_config == expected for corpora_of_config in recorded.values()), recorded
    from dialshift.provenance import INSTALL_COMMAND, provenance

    for name, entry in folder_metadata(tmp_path / "downloaded").items():
        published = provenance(name, entry)
        assert published["options_digest"] == entry["identity"]["options_digest"]
        assert sorted(published["raw_corpora"]) == corpora
        for corpus in corpora:
            assert published["raw_corpora"][corpus]["files"] == shipped_manifest()[corpus].checksums()
            assert published["raw_corpora"][corpus]["checksum"] == shipped_manifest()[corpus].digest
    card = (tmp_path / "downloaded" / "README.md").read_text()
    assert f"import dialshift  # {INSTALL_COMMAND}" in card
    for corpus in corpora:
        manifest = shipped_manifest()[corpus]
        assert f"| `{corpus}` | {manifest.licence_text} | {manifest.source_text} |" in card


def test_an_unreachable_mirror_is_one_line_and_changes_nothing(server, tmp_path):
    import socket

    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(DialshiftError, match=r"own/plain/c+/data/a.txt: cannot connect \("):
        fetch(server, tmp_path / "data", ["plain"], mirror=f"http://127.0.0.1:{port}")
    assert os.listdir(tmp_path / "data") == []


# ----------------------------------------------------------------------------------------------- nothing of yours moved


def test_a_file_of_yours_named_like_a_corpus_is_refused_never_renamed(server, tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    (data / "plain").write_text("my notes, not a corpus\n")
    for _ in range(2):  # the second run used to delete the renamed `.plain.old-*` copy
        with pytest.raises(DialshiftError, match=r"plain exists and is not a folder.*does not move or remove it"):
            fetch(server, data, ["plain"])
    assert sorted(os.listdir(data)) == ["plain"] and (data / "plain").read_text() == "my notes, not a corpus\n"
    (data / "plain").unlink()
    (data / "plain").mkdir()
    (data / "plain" / "a.txt").mkdir()  # a folder where the manifest has a file
    (data / "plain" / "a.txt" / "keep").write_text("mine\n")
    with pytest.raises(DialshiftError, match=r"a.txt is a folder, where the plain corpus has the file a.txt"):
        fetch(server, data, ["plain"])
    assert (data / "plain" / "a.txt" / "keep").read_text() == "mine\n"


def test_a_new_corpus_folder_can_be_entered_and_an_old_one_keeps_its_inode(server, tmp_path):
    data = tmp_path / "data"
    old = os.umask(0o022)
    try:
        fetch(server, data, ["plain"])
    finally:
        os.umask(old)
    assert (data / "plain").stat().st_mode & 0o777 == 0o755
    assert (data / "plain" / "sub").stat().st_mode & 0o777 == 0o755
    inode = (data / "plain").stat().st_ino
    (data / "plain" / "a.txt").write_bytes(b"altered\n")
    fetch(server, data, ["plain"])
    assert (data / "plain").stat().st_ino == inode  # repaired in place: the folder itself is never swapped
    assert (data / "plain" / "a.txt").read_bytes() == PLAIN["a.txt"]
    assert sorted(os.listdir(data)) == ["plain"]


@pytest.mark.parametrize("timeout", ["nan", "inf", "1e400", "-1", "0", "1e300"])
def test_a_timeout_that_is_not_a_finite_positive_number_is_one_line(server, tmp_path, capsys, timeout):
    argv = ["download", "--data-dir", str(tmp_path / "data"), "--mirror", server.url, "--timeout", timeout]
    assert main(argv) == 2
    assert "--timeout must be a number of seconds above 0" in capsys.readouterr().err
    assert not (tmp_path / "data").exists() and server.requests == []


@pytest.mark.parametrize("mirror", ["notaurl", "ftp://host/x", "http://", "http://[::1", "http://host:99999",
                                    "http://host/a b"])
def test_a_mirror_that_is_not_an_address_is_one_line(server, tmp_path, capsys, monkeypatch, mirror):
    assert main(["download", "--data-dir", str(tmp_path / "data"), "--mirror", mirror]) == 2
    assert "--mirror" in capsys.readouterr().err
    monkeypatch.setenv("DIALSHIFT_DOWNLOAD_MIRROR", mirror)
    assert main(["download", "--data-dir", str(tmp_path / "data")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("dialshift download: error: DIALSHIFT_DOWNLOAD_MIRROR") and len(err.splitlines()) == 1
    assert not (tmp_path / "data").exists()


def test_a_file_an_earlier_version_renamed_aside_is_kept(server, tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    renamed = data / ".plain.old-999999999-abcd1234"  # the name the old swap gave a user's file `plain`
    renamed.write_text("my notes\n")
    staging = data / ".plain.tmp-999999999-abcd1234"  # a staging folder of a killed download: removed
    staging.mkdir()
    fetch(server, data, ["plain"])
    assert renamed.read_text() == "my notes\n" and not staging.exists()
