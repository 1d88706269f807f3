"""Wheels for a machine that installs offline: dialshift's own and pinned downloads of other packages.

dialshift's wheel is built from the source checkout the running package was imported from (``pip wheel``, so local
edits travel; setuptools builds in a scratch folder named by ``DIST_EXTRA_CONFIG``, not in the checkout's ``build/``,
whose files left from an earlier build would go into the wheel: setuptools never removes from it a file the source
no longer has), else, for an installed dialshift, repacked from the files its installer recorded: every file the
distribution's ``RECORD`` lists inside site-packages (the package folders and its ``.dist-info``, not compiled
``__pycache__`` files, console scripts or the installer's own records), with a fresh ``RECORD``. The repacked wheel
holds the files of the wheel it was installed from; its entries are sorted and dated 1980-01-01, so the same
installation gives the same bytes.
"""

import base64
import hashlib
import os
import subprocess
import sys
import tempfile
import zipfile
from importlib import metadata as importlib_metadata
from pathlib import Path, PurePosixPath

from dialshift.errors import DialshiftError

DISTRIBUTION = "dialshift"
#: The folder holding the running ``dialshift`` package: a source checkout when it has dialshift's pyproject.toml.
SOURCE_ROOT = Path(__file__).resolve().parents[1]
#: ``.dist-info`` files written by the installer, not part of the wheel (RECORD is written afresh).
INSTALLER_FILES = ("INSTALLER", "REQUESTED", "direct_url.json", "RECORD")
#: A fixed timestamp for every entry (the earliest a zip file can hold): the same files give the same bytes.
ZIP_DATE = (1980, 1, 1, 0, 0, 0)


def source_checkout() -> Path | None:
    """The source checkout the running dialshift was imported from, or ``None`` for an installed package."""
    pyproject = SOURCE_ROOT / "pyproject.toml"
    if pyproject.is_file() and 'name = "dialshift"' in pyproject.read_text(encoding="utf-8"):
        return SOURCE_ROOT
    return None


def pip(args: list[str], what: str, env: dict | None = None) -> None:
    """Run ``python -m pip ARGS``; one line naming ``what`` failed and pip's last line when it fails."""
    result = subprocess.run([sys.executable, "-m", "pip", *args], capture_output=True, text=True, env=env)
    if result.returncode:
        tail = (result.stderr or result.stdout).strip().splitlines()[-1:] or ["no output"]
        raise DialshiftError(f"pip could not {what} ({tail[0]}); check the network or pass --wheel-cache")


def dialshift_wheel(out: Path) -> Path:
    """dialshift's wheel in ``out``: built from the source checkout, else repacked from the installed files."""
    out.mkdir(parents=True, exist_ok=True)
    checkout = source_checkout()
    if checkout is None:
        return repack_installed(out)
    with tempfile.TemporaryDirectory(prefix="dialshift-wheel-") as scratch:
        config = Path(scratch) / "setup.cfg"
        config.write_text(f"[build]\nbuild_base = {scratch}/build\n[egg_info]\negg_base = {scratch}\n")
        pip(["wheel", "--quiet", "--no-deps", "-w", str(out), str(checkout)], "build the dialshift wheel",
            env={**os.environ, "DIST_EXTRA_CONFIG": str(config)})
    return max(out.glob(f"{DISTRIBUTION}-*.whl"), key=lambda path: path.stat().st_mtime_ns)


def _record_hash(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def repack_installed(out: Path, name: str = DISTRIBUTION) -> Path:
    """The installed distribution ``name`` as a wheel in ``out`` (see the module docstring); return its path."""
    try:
        distribution = importlib_metadata.distribution(name)
    except importlib_metadata.PackageNotFoundError:
        raise DialshiftError(f"{name} is not installed; install it (pip install {name}) or run from a source "
                             "checkout") from None
    listed = [PurePosixPath(str(path)) for path in distribution.files or ()]
    info = next((path.parts[0] for path in listed if path.parts[0].endswith(".dist-info")), None)
    members = sorted((path for path in listed if ".." not in path.parts and "__pycache__" not in path.parts
                      and not (path.parts[0] == info and path.name in INSTALLER_FILES)),
                     key=lambda path: (path.parts[0] == info, str(path)))  # the .dist-info last, as wheels have it
    wheel_file = distribution.read_text("WHEEL") or ""
    tags = [line.split(":", 1)[1].strip() for line in wheel_file.splitlines() if line.startswith("Tag:")]
    if info is None or not tags or not any(path.suffix == ".py" for path in members):
        raise DialshiftError(f"{name} {distribution.version} is installed without its files (an editable install?); "
                             f"run from its source checkout or install the wheel")
    out.mkdir(parents=True, exist_ok=True)
    target = out / f"{name}-{distribution.version}-{tags[0]}.whl"
    records = []
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in members:
            data = Path(distribution.locate_file(path)).read_bytes()
            archive.writestr(_entry(str(path)), data)
            records.append(f"{path},{_record_hash(data)},{len(data)}")
        records.append(f"{info}/RECORD,,")
        archive.writestr(_entry(f"{info}/RECORD"), "\n".join(records) + "\n")
    return target


def _entry(name: str) -> zipfile.ZipInfo:
    """A compressed archive entry with the fixed date and ``rw-r--r--`` permissions."""
    entry = zipfile.ZipInfo(name, ZIP_DATE)
    entry.compress_type, entry.external_attr = zipfile.ZIP_DEFLATED, 0o644 << 16
    return entry


def download_wheels(out: Path, packages, python_versions, cache: Path | None = None, progress: bool = True) -> None:
    """``pip download --no-deps`` of each of ``packages`` at its installed version, for each of ``python_versions``
    (pure-Python wheels are shared); ``cache``: a folder of wheels already downloaded, used instead of the index."""
    for package in packages:
        try:
            version = importlib_metadata.version(package)
        except importlib_metadata.PackageNotFoundError as error:
            raise DialshiftError(f"{package} is not installed here; install dialshift's requirements first") from error
        for python in python_versions:
            links = ["--no-index", "--find-links", str(cache)] if cache else []
            pip(["download", "--quiet", "--no-deps", "--only-binary=:all:", "--python-version", python, *links,
                 "-d", str(out), f"{package}=={version}"], f"download {package}=={version} for Python {python}")
        if progress:
            print(f"wheels: {package}=={version}")
