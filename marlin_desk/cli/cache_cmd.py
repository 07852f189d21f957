"""`marlin-desk cache list|clear|path`: see and clear what the analysis cache holds.

Only the standard library and the store are imported: these commands must run instantly and on a
machine where the model stack is not installed.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from marlin_desk.cli.common import emit_json
from marlin_desk.store.cache import AnalysisCache, CacheEntry, default_path
from marlin_desk.store.fingerprint import fingerprint


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "cache", help="list or clear cached analyses",
        description="The analysis cache keeps every analysed video's timeline, keyed by the "
                    "file's content, the model and the settings, so nothing is analysed twice.")
    actions = parser.add_subparsers(dest="cache_action", metavar="ACTION", required=True)

    p_list = actions.add_parser("list", help="one row per cached analysis")
    p_list.add_argument("--json", action="store_true", help="print one JSON document")
    p_list.set_defaults(func=run_list)

    p_clear = actions.add_parser("clear", help="remove cached analyses (all by default)")
    which = p_clear.add_mutually_exclusive_group()
    which.add_argument("--video", metavar="FILE", help="only this video's entries (found by "
                                                       "content, wherever the file now is)")
    which.add_argument("--fingerprint", metavar="HEX",
                       help="only entries with this fingerprint (when the file is gone)")
    p_clear.set_defaults(func=run_clear)

    p_path = actions.add_parser("path", help="print the cache database's path")
    p_path.set_defaults(func=run_path)


def run_list(args: argparse.Namespace) -> int:
    with AnalysisCache() as cache:
        _say_if_recovered(cache)
        entries = cache.entries()
        if args.json:
            emit_json({"path": str(cache.path),
                       "recovered_from": _str_or_none(cache.recovered_from),
                       "entries": [e.to_json() for e in entries]})
        elif entries:
            _print_table(entries)
        else:
            print(f"no cached analyses in {cache.path}")
    return 0


def run_clear(args: argparse.Namespace) -> int:
    target = fingerprint(args.video) if args.video else args.fingerprint
    with AnalysisCache() as cache:
        _say_if_recovered(cache)
        removed = cache.clear(target)
    what = "cached analysis" if removed == 1 else "cached analyses"
    print(f"removed {removed} {what}")
    if target is None:  # everything: the reframing detections too (one small file per clip)
        from marlin_desk.workflows.reframe import ReframeCache

        spans = ReframeCache().clear()
        print(f"removed {spans} cached reframing {'analysis' if spans == 1 else 'analyses'}")
    return 0


def run_path(args: argparse.Namespace) -> int:
    print(default_path())  # the path only: `cache path` must not create or repair anything
    return 0


def _print_table(entries: list[CacheEntry]) -> None:
    header = ("VIDEO", "FINGERPRINT", "MODEL", "PRECISION", "WINDOWS", "COMPLETE", "SIZE")
    rows = [(e.video_name or "?", e.key.fingerprint[:12], _model(e), e.key.precision,
             f"{e.windows_done}/{e.total_windows}", "yes" if e.complete else "no",
             _human_size(e.size_bytes)) for e in entries]
    widths = [max(len(r[i]) for r in (header, *rows)) for i in range(len(header))]
    for row in (header, *rows):
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip())


def _model(entry: CacheEntry) -> str:
    revision = entry.key.revision[:10]
    return f"{entry.key.model_id}@{revision}" if revision else entry.key.model_id


def _human_size(n: int) -> str:
    size = float(n)
    for unit in ("B", "KB", "MB"):
        if size < 1024:
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{size:.1f} GB"


def _say_if_recovered(cache: AnalysisCache) -> None:
    if cache.recovered_from is not None:
        print(f"marlin-desk: the analysis cache {cache.recovery_reason}; it was moved to "
              f"{cache.recovered_from} and a new one started", file=sys.stderr)


def _str_or_none(value: object) -> str | None:
    return None if value is None else str(value)
