"""The ``dialshift`` command line.

Every module in :mod:`dialshift.commands` that defines ``register(subparsers)`` adds one sub-command, so a new
command is a new file. Heavy imports happen inside the command functions, so ``--help`` stays fast.
Errors the user can fix (:class:`~dialshift.errors.DialshiftError`) print one line and exit with status 2.
"""

import argparse
import importlib
import os
import pkgutil
import sys

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


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except DialshiftError as error:
        print(f"dialshift {args.command}: error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"dialshift {args.command}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # e.g. `dialshift sources | head`: the reader left, which is not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == "__main__":
    sys.exit(main())
