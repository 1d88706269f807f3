"""dialshift.wheels: an installed distribution repacked into a wheel holds exactly its installed files, with a
RECORD pip accepts, the same bytes every time; an installation without its files is refused in one line; a wheel
built from a checkout leaves its build/ alone and takes nothing from it."""

import base64
import hashlib
import zipfile

import pytest

from dialshift import wheels
from dialshift.errors import DialshiftError
from dialshift.wheels import dialshift_wheel, repack_installed, source_checkout

INFO = "fakepkg-1.0.dist-info"
PACKAGE = {"fakepkg/__init__.py": b"VALUE = 1\n", "fakepkg/data/card.md": b"# card\n"}
METADATA = {f"{INFO}/METADATA": b"Metadata-Version: 2.1\nName: fakepkg\nVersion: 1.0\n",
            f"{INFO}/WHEEL": b"Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
            f"{INFO}/entry_points.txt": b"[console_scripts]\nfake = fakepkg:main\n"}
INSTALLED_ONLY = {f"{INFO}/INSTALLER": b"pip\n", f"{INFO}/REQUESTED": b"", f"{INFO}/direct_url.json": b"{}",
                  "fakepkg/__pycache__/__init__.cpython-312.pyc": b"\x00compiled"}


def install(site, files: dict) -> None:
    """Lay ``files`` out in ``site`` as pip does, with a RECORD listing them and a console script outside it."""
    for name, data in files.items():
        (site / name).parent.mkdir(parents=True, exist_ok=True)
        (site / name).write_bytes(data)
    record = [*files, "../../../bin/fake", f"{INFO}/RECORD"]
    (site / INFO / "RECORD").write_text("".join(f"{name},,\n" for name in record))


@pytest.fixture
def site(tmp_path, monkeypatch):
    site = tmp_path / "site-packages"
    install(site, {**PACKAGE, **METADATA, **INSTALLED_ONLY})
    monkeypatch.syspath_prepend(str(site))
    return site


def test_the_repacked_wheel_holds_the_installed_files_and_a_valid_record(site, tmp_path):
    wheel = repack_installed(tmp_path / "out", "fakepkg")
    assert wheel.name == "fakepkg-1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        assert sorted(names) == sorted([*PACKAGE, *METADATA, f"{INFO}/RECORD"]) and names[-1] == f"{INFO}/RECORD"
        assert {name: archive.read(name) for name in [*PACKAGE, *METADATA]} == {**PACKAGE, **METADATA}
        record = [line.split(",") for line in archive.read(f"{INFO}/RECORD").decode().splitlines()]
    assert sorted(name for name, *_ in record) == sorted(names)
    for name, digest, size in record:
        data = {**PACKAGE, **METADATA}.get(name)
        if data is not None:
            assert digest == "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            assert int(size) == len(data)


def test_repacking_twice_gives_the_same_bytes(site, tmp_path):
    first = repack_installed(tmp_path / "a", "fakepkg").read_bytes()
    (site / "fakepkg" / "__init__.py").touch()  # a newer modification time changes nothing
    assert repack_installed(tmp_path / "b", "fakepkg").read_bytes() == first


def test_an_installation_without_its_files_is_refused(tmp_path, monkeypatch):
    site = tmp_path / "editable"
    install(site, {**METADATA, "__editable__.fakepkg-1.0.pth": b"/somewhere/src\n"})
    monkeypatch.syspath_prepend(str(site))
    with pytest.raises(DialshiftError, match="fakepkg 1.0 is installed without its files"):
        repack_installed(tmp_path / "out", "fakepkg")
    with pytest.raises(DialshiftError, match="nonexistent-dist is not installed"):
        repack_installed(tmp_path / "out", "nonexistent-dist")


def test_this_checkout_is_a_source_checkout():
    assert source_checkout() is not None and (source_checkout() / "dialshift" / "wheels.py").is_file()


def test_a_checkout_wheel_is_built_outside_the_checkouts_build_folder(tmp_path, monkeypatch):
    checkout = tmp_path / "checkout"
    (checkout / "dialshift").mkdir(parents=True)
    (checkout / "dialshift" / "__init__.py").write_text("VALUE = 1\n")
    (checkout / "pyproject.toml").write_text('[build-system]\nrequires = ["setuptools>=77"]\n'
                                             'build-backend = "setuptools.build_meta"\n\n'
                                             '[project]\nname = "dialshift"\nversion = "0.0.1"\n')
    stale = checkout / "build" / "lib" / "dialshift" / "removed_module.py"  # left by an earlier build
    stale.parent.mkdir(parents=True)
    stale.write_text("GONE = True\n")
    monkeypatch.setattr(wheels, "SOURCE_ROOT", checkout)
    wheel = dialshift_wheel(tmp_path / "out")
    with zipfile.ZipFile(wheel) as archive:
        assert "dialshift/__init__.py" in archive.namelist() and "dialshift/removed_module.py" not in archive.namelist()
    assert sorted(path.name for path in (checkout / "build").rglob("*")) == ["dialshift", "lib", "removed_module.py"]
    assert not list(checkout.glob("*.egg-info"))
