"""Carrying the files a rebuild did not write (notes, ``.git/``) from the old folder into the new one."""

import os
import shutil
from pathlib import Path, PurePosixPath


def carry_over(old: Path, new: Path, owned: set[str]) -> None:
    """Put every file of ``old`` that the builder did not write into ``new`` at the same relative path (hard links,
    else copies; symlinks stay symlinks; empty folders are kept). Nothing in ``old`` changes."""
    owned_dirs = {PurePosixPath(path).parts[0] for path in owned if len(PurePosixPath(path).parts) > 1}
    for dirpath, dirnames, filenames in os.walk(old):  # never follows symlinked folders
        here = Path(dirpath)
        relative_dir = here.relative_to(old)
        if relative_dir != Path(".") and not dirnames and not filenames:
            (new / relative_dir).mkdir(parents=True, exist_ok=True)
        for name in filenames + [name for name in dirnames if (here / name).is_symlink()]:
            relative = (relative_dir / name).as_posix()
            if relative in owned or (relative in owned_dirs and (here / name).is_symlink()):
                continue
            target = new / relative
            if target.exists() or target.is_symlink():
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            source = here / name
            if source.is_symlink():
                os.symlink(os.readlink(source), target)
                continue
            try:
                os.link(source, target)
            except OSError:
                shutil.copy2(source, target)
