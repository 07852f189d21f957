"""`marlin-desk` entry point: parse, dispatch, and turn errors into exit codes.

Exit codes: 0 done; 2 bad input or usage (one plain line on stderr); 3 model not available;
130 cancelled; 1 internal error (the traceback goes to a log file whose path is printed).
"""

from __future__ import annotations

import argparse
import importlib
import logging
import sys
import traceback
from collections.abc import Sequence

from marlin_desk import __version__
from marlin_desk.core.errors import MarlinError

# Command modules, each with `register(subparsers)`. Imported lazily by name so that a
# command's heavy imports (torch, Qt) happen only when that command runs.
COMMAND_MODULES = [
    "marlin_desk.cli.probe_cmd",
    "marlin_desk.cli.model_cmds",
    "marlin_desk.cli.models_cmd",
    "marlin_desk.cli.dev_cmd",
    "marlin_desk.cli.export_cmd",
    "marlin_desk.cli.cache_cmd",
    "marlin_desk.cli.gui_cmds",
    "marlin_desk.cli.batch_cmd",
    "marlin_desk.cli.library_cmd",
    "marlin_desk.cli.serve_cmd",
    "marlin_desk.cli.handoff_cmd",
    "marlin_desk.cli.shots_cmd",
    "marlin_desk.cli.transcribe_cmd",
]


class _Parser(argparse.ArgumentParser):
    """Usage errors exit with code 2 and one line, as every other bad input does."""

    def error(self, message: str) -> None:  # type: ignore[override]
        print(f"marlin-desk: {message} (see --help)", file=sys.stderr)
        raise SystemExit(2)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="marlin-desk", description="Marlin Desk: find moments in video.")
    parser.add_argument("--version", action="version", version=f"marlin-desk {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="log details to stderr")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name in COMMAND_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name != name:  # a real missing dependency, not an absent command module
                raise
            continue
        module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help(sys.stderr)
        return 2
    from marlin_desk.logs import setup_logging

    log_path = setup_logging(verbose=args.verbose)
    try:
        return int(args.func(args) or 0)
    except MarlinError as exc:
        print(f"marlin-desk: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("marlin-desk: cancelled", file=sys.stderr)
        return 130
    except Exception:  # noqa: BLE001 - the last line of defence: log, say where, exit 1
        logging.getLogger("marlin_desk").error("internal error\n%s", traceback.format_exc())
        print(f"marlin-desk: internal error; details in {log_path}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    raise SystemExit(main())
