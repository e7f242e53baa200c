"""The ``specbench`` console command.

Each family folder may ship ``cli.py`` with ``register(subparsers)``; its
subcommands appear as ``specbench <family> ...`` (e.g. ``specbench contract
synthesize``).  Errors reach the user as one line (``specbench: error: ...``),
never as a traceback.
"""
from __future__ import annotations

import argparse
import importlib
import sys

from .benchmarks import family_cli_modules
from .errors import SpecbenchError


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, exit status 2 (argparse prints usage otherwise)
        raise SpecbenchError(f"{self.prog}: {message}")


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="specbench", description="Specification benchmarks for code LLMs.")
    sub = p.add_subparsers(dest="group", required=True, parser_class=_Parser)
    for module in ("pytest_specbench.data.cli", "pytest_specbench.plugin.merge", *family_cli_modules()):
        importlib.import_module(module).register(sub)
    return p


def main(argv: list | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        parser = build_parser()
        if not argv:  # no command: say what the commands are (exit 2, as for a usage error)
            parser.print_help()
            return 2
        args = parser.parse_args(argv)
        func = getattr(args, "func", None)
        if func is None:
            raise SpecbenchError("unknown command")  # pragma: no cover - argparse enforces choices
        return func(args)
    except SpecbenchError as exc:
        print(f"specbench: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("specbench: interrupted (finished tasks are kept; rerun with --resume)", file=sys.stderr)
        return 130
    except Exception as exc:  # never a traceback on the console
        print(f"specbench: internal error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
