"""`marlin-desk library add|list|scan|remove|reindex|search`: the video library and its search.

add, list, scan, remove and reindex import only the store (instant, no model stack); search
imports the model stack only for its refine stage.
"""

from __future__ import annotations

import argparse
from typing import Any

from marlin_desk.cli.common import emit_json, progress


def register(subparsers: Any) -> None:
    from marlin_desk.cli.model_cmds import model_options

    parser = subparsers.add_parser(
        "library", help="folders of videos, and search across all of them",
        description="The library: folders (searched recursively for videos) and video files. "
                    "Videos are known by their content, so a moved or renamed file keeps its "
                    "analysis once a scan finds it; a missing file is shown offline, never "
                    "forgotten. `search` ranks every analysed moment of every video by its "
                    "text, then (--refine K) runs the model's find in the best K windows.")
    actions = parser.add_subparsers(dest="library_action", metavar="ACTION", required=True)

    p_add = actions.add_parser("add", help="add folders or video files, then scan")
    p_add.add_argument("paths", nargs="+", metavar="PATH")
    p_add.add_argument("--json", action="store_true", help="print one JSON document")
    p_add.set_defaults(func=run_add)

    p_list = actions.add_parser("list", help="every video: path, state, offline or not")
    p_list.add_argument("--json", action="store_true", help="print one JSON document")
    p_list.set_defaults(func=run_list)

    p_scan = actions.add_parser("scan", help="look at every folder again")
    p_scan.add_argument("--json", action="store_true", help="print one JSON document")
    p_scan.set_defaults(func=run_scan)

    p_remove = actions.add_parser(
        "remove", help="take folders, files or single videos out of the library (their "
                       "analyses stay in the cache)")
    p_remove.add_argument("paths", nargs="+", metavar="PATH")
    p_remove.add_argument("--json", action="store_true", help="print one JSON document")
    p_remove.set_defaults(func=run_remove)

    p_reindex = actions.add_parser("reindex", help="rebuild the full-text search index")
    p_reindex.add_argument("--json", action="store_true", help="print one JSON document")
    p_reindex.set_defaults(func=run_reindex)

    p_search = actions.add_parser(
        "search", help="rank moments across the library (text index; --refine: the model)")
    p_search.add_argument("query", metavar="QUERY")
    p_search.add_argument("--top", type=int, default=10, help="results to show (default 10)")
    p_search.add_argument("--refine", type=int, default=None, metavar="K",
                          help="run the model's find in the best K candidates' windows (default: "
                               "0, or --top when --model is given)")
    model_options(p_search)
    p_search.set_defaults(func=run_search, model=None)


def _cache() -> Any:
    from marlin_desk.store.cache import AnalysisCache

    cache = AnalysisCache()
    if cache.recovered_from is not None:
        progress(f"marlin-desk: the analysis cache {cache.recovery_reason}; it was moved to "
                 f"{cache.recovered_from} and a new one started")
    return cache


def _report_scan(report: Any, as_json: bool) -> int:
    if as_json:
        emit_json(report.to_json())
        return 0
    c = report.counts
    print(f"{c.online} video{'s' if c.online != 1 else ''} online: {c.new} new, {c.moved} "
          f"moved, {c.back} back online, {c.offline} gone offline ({report.hashed} hashed, "
          f"{report.seconds:.2f} s)")
    for root in report.missing_roots:
        progress(f"missing: {root} (its videos are offline)")
    for line in report.unreadable:
        progress(f"unreadable: {line}")
    return 0


def run_add(args: argparse.Namespace) -> int:
    from marlin_desk.library.scan import add

    with _cache() as cache:
        return _report_scan(add(args.paths, cache), args.json)


def run_scan(args: argparse.Namespace) -> int:
    from marlin_desk.library.scan import scan

    with _cache() as cache:
        return _report_scan(scan(cache), args.json)


def run_list(args: argparse.Namespace) -> int:
    from marlin_desk.library.scan import roots, videos

    with _cache() as cache:
        found, folders = videos(cache), roots(cache)
    if args.json:
        emit_json({"roots": [{"path": r.path, "kind": r.kind} for r in folders],
                   "videos": [v.to_json() for v in found]})
        return 0
    if not found:
        print("the library is empty (marlin-desk library add FOLDER)")
        return 0
    for v in found:
        state = v.state if v.state != "partial" else \
            f"partial {v.windows_done}/{v.windows_total}"
        print(f"{state:<14} {'offline' if not v.online else 'online ':<8} {v.path}")
    return 0


def run_remove(args: argparse.Namespace) -> int:
    from marlin_desk.library.scan import remove

    with _cache() as cache:
        removed = remove(args.paths, cache)
    if args.json:
        emit_json({"removed": removed})
        return 0
    print(f"removed {removed} video{'s' if removed != 1 else ''} from the library (analyses "
          "kept in the cache)")
    return 0


def run_reindex(args: argparse.Namespace) -> int:
    from marlin_desk.library.scan import reindex

    with _cache() as cache:
        windows = reindex(cache)
    if args.json:
        emit_json({"windows": windows})
    else:
        print(f"search index rebuilt from {windows} analysed windows")
    return 0


def run_search(args: argparse.Namespace) -> int:
    from marlin_desk.library.search import search_library

    settings = None
    if args.model is not None or (args.refine or 0) > 0:
        from marlin_desk.cli.model_cmds import job_settings
        from marlin_desk.engine.loader import DEFAULT_MODEL

        args.model = args.model or DEFAULT_MODEL
        settings = job_settings(args)
    with _cache() as cache:
        result = search_library(args.query, top=args.top, refine=args.refine, settings=settings,
                                cache=cache, on_note=progress)
    if args.json:
        emit_json(result.to_json())
        return 0
    for note in result.notes:
        progress(f"note: {note}")
    if not result.hits:
        print(f"nothing in the library matches {args.query!r}")
    for h in result.hits:
        where = "" if h.online else " (offline)"
        print(f"{h.start:8.2f} {h.end:8.2f}  {h.score:8.3f} {h.stage:<5}  {h.text}  "
              f"[{h.path}{where}]")
    progress(f"index {result.index_ms:.1f} ms"
             + (f", model {result.refine_s:.1f} s in {result.refined_windows} windows"
                if result.refined_windows else ""))
    return 0


