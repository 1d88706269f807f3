"""The README's ```bash and ```python blocks as the tests run them, and the markers that say how.

Every such block runs as written, in README order, in one folder, with the commands of the environment under test,
unless HTML comments right above its fence say otherwise:

    <!-- readme-test: skip: REASON -->                    not run; REASON (network, a source checkout, hours) is shown
    <!-- readme-test: install -->                         the install lines: tests/test_wheel_train.py runs them with
                                                          the built wheel in place of the git URL
    <!-- readme-test: append PREFIX :: ARGS :: REASON --> ARGS appended to every command line that starts with PREFIX
                                                          (argparse keeps an option's last value), so a run of hours
                                                          becomes one of seconds; REASON says why

Keep the skips few: every other line of the README is run.
"""

import os
import re
import shlex
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

README = Path(__file__).resolve().parent.parent / "README.md"
MARKER = re.compile(r"<!-- readme-test: (.*?) -->")
FENCE = re.compile(r"^```(bash|python)\n(.*?)^```$", re.S | re.M)


@dataclass
class Block:
    """One fenced block: its language, code, first line in the README and what its markers say."""

    language: str
    code: str
    line: int
    skip: str | None = None
    install: bool = False
    appends: list[tuple[str, str, str]] = field(default_factory=list)

    def commands(self) -> list[str]:
        """The command lines of a bash block: continuations joined, comments and blank lines dropped, the
        ``append`` markers' arguments added."""
        joined = re.sub(r"\\\n\s*", " ", self.code)
        lines = []
        for line in joined.splitlines():
            line = line.split("  #")[0].strip()
            if not line or line.startswith("#"):
                continue
            for prefix, args, _ in self.appends:
                if line.startswith(prefix):
                    line = f"{line} {args}"
            lines.append(line)
        return lines


def readme_blocks(text: str | None = None) -> list[Block]:
    """Every ```bash / ```python block of the README with its markers (the comment lines right above its fence)."""
    text = README.read_text(encoding="utf-8") if text is None else text
    blocks = []
    for match in FENCE.finditer(text):
        before = text[: match.start()].splitlines()
        block = Block(match[1], match[2], len(before) + 1)
        while before and before[-1].startswith("<!--"):
            marker = MARKER.fullmatch(before.pop().strip())
            if marker is None:
                continue  # another kind of comment (e.g. the shift example's own)
            kind, _, rest = marker[1].partition(":")
            if kind == "skip":
                block.skip = rest.strip()
            elif kind == "install":
                block.install = True
            elif kind.startswith("append "):
                prefix, args, reason = (part.strip() for part in marker[1][len("append "):].split("::"))
                block.appends.append((prefix, args, reason))
            else:
                raise AssertionError(f"README.md:{block.line}: unknown marker <!-- readme-test: {marker[1]} -->")
        blocks.append(block)
    return blocks


def run_block(block: Block, cwd: Path, env: dict, python: str, timeout: int = 600) -> list[str]:
    """Run ``block`` in ``cwd`` (bash lines through ``bash -c``, a python block with ``python``); fail with the output
    of the first command that fails. Returns the commands run."""
    if block.language == "python":
        script = cwd / f"readme_line_{block.line}.py"
        script.write_text(block.code, encoding="utf-8")
        runs = [[python, str(script)]]
    else:
        runs = [["bash", "-c", command] for command in block.commands()]
    for argv in runs:
        result = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
        shown = argv[-1] if block.language == "bash" else f"the python block at README.md:{block.line}"
        assert result.returncode == 0, (f"README.md:{block.line}: `{shown}` exited {result.returncode}:\n"
                                        f"{result.stdout[-2000:]}\n{result.stderr[-4000:]}")
    return [" ".join(map(shlex.quote, argv)) for argv in runs]


def environment(bin_dir: Path, **extra) -> dict:
    """The environment of the README's commands: ``bin_dir`` first on the PATH, nothing pointing Python at a
    checkout, Hugging Face offline."""
    env = {key: value for key, value in os.environ.items()
           if key not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME", "PYTHONSTARTUP")}
    env["PATH"] = os.pathsep.join([str(bin_dir), env.get("PATH", "")])
    return {**env, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
            "MPLBACKEND": "Agg", **extra}
