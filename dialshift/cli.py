"""The ``dialshift`` command line.

Every module in :mod:`dialshift.commands` that defines ``register(subparsers)`` adds one sub-command, so a new
command is a new file. Heavy imports happen inside the command functions, so ``--help`` stays fast.
Errors the user can fix (:class:`~dialshift.errors.DialshiftError`, and :class:`OSError` such as a full disk) print
one line and exit with status 2.
"""

import argparse
import errno
import importlib
import os
import pkgutil
import signal
import sys
import threading

from dialshift import __version__
from dialshift.errors import DialshiftError


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="dialshift",
        description="Build, validate, evaluate and publish the dialshift distribution-shift benchmark.",
    )
    parser.add_argument("--version", action="version", version=f"dialshift {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    import dialshift.commands as commands

    for info in sorted(pkgutil.iter_modules(commands.__path__), key=lambda m: m.name):
        module = importlib.import_module(f"dialshift.commands.{info.name}")
        if hasattr(module, "register"):
            module.register(subparsers)
    return parser


class Terminated(KeyboardInterrupt):
    """Raised in the main thread on SIGTERM, so that ``finally`` blocks and context managers remove what the
    command was writing (temporary folders, staging copies) as they do on Ctrl-C."""


def _on_sigterm(main_pid: int):
    def handler(signum, frame):
        if os.getpid() != main_pid:  # a forked worker inherited the handler: end as SIGTERM always ended it
            signal.signal(signum, signal.SIG_DFL)
            os.kill(os.getpid(), signum)
            return
        raise Terminated()
    return handler


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    previous = None
    if threading.current_thread() is threading.main_thread() and signal.getsignal(signal.SIGTERM) == signal.SIG_DFL:
        previous = signal.signal(signal.SIGTERM, _on_sigterm(os.getpid()))
    try:
        return _run(args)
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def _run(args) -> int:
    try:
        return int(args.func(args) or 0)
    except DialshiftError as error:
        print(f"dialshift {args.command}: error: {one_line(str(error))}", file=sys.stderr)
        return 2
    except Terminated:
        print(f"dialshift {args.command}: terminated (SIGTERM); its temporary files were removed", file=sys.stderr)
        return 128 + signal.SIGTERM
    except KeyboardInterrupt:
        print(f"dialshift {args.command}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # e.g. `dialshift sources | head`: the reader left, which is not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except OSError as error:  # disk full, permissions, read-only file system: the system's reason, on one line
        print(f"dialshift {args.command}: error: {describe_os_error(error)}", file=sys.stderr)
        return 2
    except RecursionError:  # a hostile input (e.g. a JSON line of a million '[') that a parser follows too deep
        print(f"dialshift {args.command}: error: an input is nested too deeply to read (RecursionError); check the "
              f"files this command reads for damaged or hostile content", file=sys.stderr)
        return 2


def one_line(message: str) -> str:
    """``message`` on one line: every run of whitespace (newlines included) becomes one space."""
    return " ".join(message.split())


#: What to do about the operating-system errors a user can fix.
_OS_ERROR_FIXES = {
    errno.ENOSPC: "free some space or write to another disk (e.g. another --out)",
    errno.EDQUOT: "free some space or write to another disk (e.g. another --out)",
    errno.EACCES: "fix the permissions or choose another path",
    errno.EPERM: "fix the permissions or choose another path",
    errno.EROFS: "choose a path on a writable file system",
    errno.EMFILE: "raise the open-file limit (ulimit -n) or use fewer --num-proc",
}


def describe_os_error(error: OSError, limit: int = 300) -> str:
    """One line for an :class:`OSError`: the system's reason, the file, and the fix when there is a usual one."""
    reason = error.strerror or (str(error).splitlines()[0] if str(error) else type(error).__name__)
    where = f" ({error.filename})" if error.filename else ""
    code = error.errno
    if code is None:  # pyarrow and others put the errno only in the message: "[Errno 28] No space left on device"
        code = next((number for number in _OS_ERROR_FIXES if f"[Errno {number}]" in str(error)), None)
    fix = _OS_ERROR_FIXES.get(code)
    line = one_line(f"{reason}{where}" + (f"; {fix}" if fix else ""))
    return line if len(line) <= limit else line[: limit - 3] + "..."


if __name__ == "__main__":
    sys.exit(main())
