"""`marlin-desk models list|pull|verify|remove|where`: the model manager from the command line.

Results go to stdout (one JSON document with --json); progress goes to stderr, throttled, so that
stdout stays parseable. Offline and not downloaded ends with exit code 3 and one line saying what
to run on a connected machine (ModelUnavailable, turned into the exit code by cli.main).
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any, TextIO

from marlin_desk.cli.common import emit_json
from marlin_desk.models import (
    DEFAULT_MODEL,
    ModelManager,
    ModelStatus,
    Progress,
    human_size,
)


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "models", help="download, verify, list and remove models",
        description="Models are downloaded from the Hugging Face hub into the app's own folder "
                    "(safetensors and text files only), checked against the hub's checksums, "
                    "and can be verified again offline.")
    actions = parser.add_subparsers(dest="models_action", metavar="ACTION", required=True)

    p_list = actions.add_parser("list", help="known and downloaded models with their state")
    _json_flag(p_list)
    p_list.set_defaults(func=run_list)

    p_pull = actions.add_parser(
        "pull", help="download a model (resumable), or take it from a local folder",
        description="Download from the hub at a pinned revision, after checking free space; "
                    "a partial download is continued the next time. With --from, copy a "
                    "folder brought from another machine instead (nothing is downloaded).")
    p_pull.add_argument("model", nargs="?", default=DEFAULT_MODEL,
                        help=f"hub id (default {DEFAULT_MODEL})")
    p_pull.add_argument("--revision", metavar="REV",
                        help="branch, tag or commit (default: the catalogue's pinned one)")
    p_pull.add_argument("--from", dest="source", metavar="DIR",
                        help="take the model from this folder instead of the hub")
    p_pull.add_argument("--link", action="store_true",
                        help="with --from: use the folder where it is instead of copying it")
    p_pull.add_argument("-q", "--quiet", action="store_true", help="no progress on stderr")
    _json_flag(p_pull)
    p_pull.set_defaults(func=run_pull)

    p_verify = actions.add_parser("verify", help="re-hash a downloaded model's files (offline)")
    p_verify.add_argument("model", nargs="?", default=DEFAULT_MODEL)
    p_verify.add_argument("-q", "--quiet", action="store_true", help="no progress on stderr")
    _json_flag(p_verify)
    p_verify.set_defaults(func=run_verify)

    p_remove = actions.add_parser(
        "remove", help="delete a downloaded model (a linked folder is only forgotten)")
    p_remove.add_argument("model", help="hub id, or a folder inside the models folder")
    _json_flag(p_remove)
    p_remove.set_defaults(func=run_remove)

    p_where = actions.add_parser(
        "where", help="print the model's folder (where it is, or where pull puts it)")
    p_where.add_argument("model", nargs="?", default=DEFAULT_MODEL)
    _json_flag(p_where)
    p_where.set_defaults(func=run_where)


def _json_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print one JSON document")


class StderrProgress:
    """Progress lines on stderr: rewritten in place on a terminal, else one line now and then."""

    def __init__(self, stream: TextIO | None = None, interval: float | None = None) -> None:
        self.stream = stream or sys.stderr
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.interval = interval if interval is not None else (0.25 if self.tty else 2.0)
        self._last: float | None = None  # the first report always shows
        self._pending = False  # a \r line is on screen without its newline

    def __call__(self, p: Progress) -> None:
        now = time.monotonic()
        if p.phase != "done" and self._last is not None and \
                now - self._last < self.interval:
            return
        self._last = now
        line = format_progress(p)
        if self.tty:
            self.stream.write("\r" + line.ljust(100)[:100])
            self._pending = p.phase != "done"
            if not self._pending:
                self.stream.write("\n")
        else:
            self.stream.write(line + "\n")
        self.stream.flush()

    def close(self) -> None:
        if self._pending:
            self.stream.write("\n")
            self.stream.flush()
            self._pending = False


def format_progress(p: Progress) -> str:
    """e.g. `NemoStation/Marlin-2B download model.safetensors (3/9) 1.2 GB/4.4 GB 27%
    48.0 MB/s ETA 1m06s`."""
    parts = [p.model_id, p.phase]
    if p.file:
        parts.append(f"{p.file} ({min(p.files_done + 1, p.files_total)}/{p.files_total})")
    parts.append(f"{human_size(p.bytes_done)}/{human_size(p.bytes_total)}")
    parts.append(f"{p.fraction * 100:.0f}%")
    if p.speed_bps:
        parts.append(f"{human_size(p.speed_bps)}/s")
    if p.eta_s is not None and p.phase != "done":
        minutes, seconds = divmod(int(p.eta_s + 0.5), 60)
        parts.append(f"ETA {minutes}m{seconds:02d}s")
    return " ".join(parts)


def run_list(args: argparse.Namespace) -> int:
    manager = ModelManager()
    rows = manager.list_models()
    if args.json:
        emit_json({"models_folder": str(manager.root), "models": [r.to_json() for r in rows]})
        return 0
    header = ("MODEL", "VARIANT", "BACKEND", "STATE", "SIZE", "FOLDER")
    table = [(("* " if r.entry and r.entry.default else "  ") + r.id,
              r.entry.variant if r.entry else "?", r.entry.backend if r.entry else "?",
              r.state, _size(r), str(r.folder or "")) for r in rows]
    widths = [max(len(row[i]) for row in (header, *table)) for i in range(len(header))]
    for row in (header, *table):
        print("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip())
    print(f"(* default; models folder: {manager.root})")
    return 0


def _size(st: ModelStatus) -> str:
    if st.size_on_disk:
        return human_size(st.size_on_disk)
    return f"~{st.entry.size_gb:.1f} GB" if st.entry else "?"


def run_pull(args: argparse.Namespace) -> int:
    manager = ModelManager()
    printer = None if args.quiet else StderrProgress()
    try:
        if args.source:
            st = manager.pull_from_folder(args.source, args.model, link=args.link,
                                          progress=printer)
        else:
            if args.link:
                print("marlin-desk: --link needs --from DIR (see --help)", file=sys.stderr)
                return 2
            st = manager.pull(args.model, args.revision, progress=printer)
    finally:
        if printer is not None:
            printer.close()
    if args.json:
        emit_json(st.to_json())
    else:
        print(f"{st.id}: {st.state}, {human_size(st.size_on_disk)} in {st.folder}")
    return 0


def run_verify(args: argparse.Namespace) -> int:
    printer = None if args.quiet else StderrProgress()
    try:
        report = ModelManager().verify(args.model, progress=printer)
    finally:
        if printer is not None:
            printer.close()
    if args.json:
        emit_json(report.to_json())
    elif report.ok:
        print(f"{report.model_id}: ok, {report.files_checked} files "
              f"({human_size(report.bytes_checked)}) match the manifest")
    for name in report.extra_files:
        print(f"marlin-desk: note: {name} is not in the manifest", file=sys.stderr)
    if report.ok:
        return 0
    if not args.json:
        for p in report.problems:
            print(f"{p['file']}: {p['problem']}")
    print(f"marlin-desk: {report.model_id} is damaged ({len(report.problems)} bad file(s)): run "
          f"`marlin-desk models pull {report.model_id}` to repair it", file=sys.stderr)
    return 3


def run_remove(args: argparse.Namespace) -> int:
    removed = ModelManager().remove(args.model)
    if args.json:
        emit_json({"model": args.model, "removed": removed is not None,
                   "folder": None if removed is None else str(removed)})
    elif removed is None:
        print(f"{args.model} is not downloaded; nothing removed")
    else:
        print(f"removed {removed}")
    return 0


def run_where(args: argparse.Namespace) -> int:
    st = ModelManager().status(args.model)
    if args.json:
        emit_json(st.to_json())
        return 0
    print(st.folder or st.target)
    if st.source == "hf-cache":
        print("marlin-desk: note: in the Hugging Face cache, not in the models folder "
              f"({st.target}); `marlin-desk models pull {st.id}` downloads it there",
              file=sys.stderr)
    elif st.folder is None:
        print(f"marlin-desk: note: {st.id} is {st.state}; that is where `marlin-desk models "
              f"pull {st.id}` puts it", file=sys.stderr)
    return 0
