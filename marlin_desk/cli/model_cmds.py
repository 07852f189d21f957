"""`marlin-desk analyze|find|demo`: the model's two answers for a whole video."""

from __future__ import annotations

import argparse
import os
import time
from typing import Any

from marlin_desk.cli.common import emit_json, progress


def model_options(parser: argparse.ArgumentParser, *, windows_in_flight: bool = True) -> None:
    """The options that choose the model and how it runs (analyze, find, batch), built from
    the settings vocabulary (core.options) that the app's Preferences use too."""
    from marlin_desk.core import options
    from marlin_desk.models import DEFAULT_MODEL

    parser.add_argument("--model", default=None,
                        help=f"hub id or local folder (default: {DEFAULT_MODEL} when it is on "
                             "this machine, else the bundled demo model, and the output says "
                             "which)")
    parser.add_argument("--revision", default=None, help="hub revision (branch, tag or commit)")
    parser.add_argument("--device", default=options.DEFAULT_DEVICE, choices=options.DEVICES)
    parser.add_argument(
        "--backend", default=options.DEFAULT_BACKEND, choices=options.BACKENDS,
        help="how the model runs: auto picks GPTQ 4-bit on CUDA, then bitsandbytes NF4, then "
             "16-bit, then FP32 on CPU; remote sends the windows to a server (--url); the "
             "JSON's engine says which ran and why")
    server = parser.add_argument_group("remote backend (an OpenAI-compatible server, e.g. vLLM)")
    server.add_argument("--url", default=os.environ.get("MARLIN_SERVER_URL"),
                        help="the server's API address, e.g. http://HOST:8000/v1 (implies "
                             "--backend remote; default $MARLIN_SERVER_URL)")
    server.add_argument("--api-key", default=os.environ.get("MARLIN_API_KEY"),
                        help="the server's API key, if it has one (default $MARLIN_API_KEY)")
    server.add_argument("--served-model", default=None,
                        help="the model name the server serves (default: its only model)")
    if windows_in_flight:  # batch runs each video with the default
        server.add_argument("--windows-in-flight", type=int, metavar="N",
                            default=options.DEFAULT_WINDOWS_IN_FLIGHT,
                            help="windows of the video sent to the server at once (default "
                                 f"{options.DEFAULT_WINDOWS_IN_FLIGHT})")
    server.add_argument("--clip-dir", default=None,
                        help="a folder the server can read too (--allowed-local-media-path): "
                             "clips are passed as file URLs instead of uploaded")
    server.add_argument("--timeout", type=float, default=None,
                        help="seconds to wait for one answer (default 600)")
    parser.add_argument("--window", type=float, default=options.DEFAULT_WINDOW_SECONDS,
                        help=f"window length in seconds (at most "
                             f"{options.MAX_WINDOW_SECONDS:g}: the model's "
                             f"{int(options.MAX_WINDOW_SECONDS * 2)} frames)")
    parser.add_argument("--overlap", type=float, default=options.DEFAULT_OVERLAP_SECONDS,
                        help="window overlap in seconds")
    parser.add_argument("--no-cache", action="store_true", help="neither read nor write the cache")
    parser.add_argument("--json", action="store_true", help="print one JSON document")


def register(subparsers: Any) -> None:
    analyze = subparsers.add_parser("analyze", help="scene and time-stamped events of a video")
    analyze.add_argument("video")
    model_options(analyze)
    analyze.set_defaults(func=run_analyze)

    find = subparsers.add_parser("find", help="rank the moments that match plain-language queries")
    find.add_argument("video")
    find.add_argument("queries", nargs="+", metavar="QUERY")
    find.add_argument("--top", type=int, default=None, help="keep the K best spans per query")
    model_options(find)
    find.set_defaults(func=run_find)

    demo = subparsers.add_parser(
        "demo", help="analyse and search the bundled demo video (works offline)")
    demo.add_argument("--json", action="store_true", help="print one JSON document")
    demo.set_defaults(func=run_demo)


def job_settings(args: argparse.Namespace) -> Any:
    """JobSettings from the model options, through the same call the app makes (workflows)."""
    from marlin_desk.core import options
    from marlin_desk.workflows import ServerSettings, job_settings

    server = None
    if args.url or args.backend == "remote":
        server = ServerSettings(
            url=args.url or "", served_model=args.served_model, api_key=args.api_key,
            windows_in_flight=getattr(args, "windows_in_flight",
                                      options.DEFAULT_WINDOWS_IN_FLIGHT),
            clip_dir=args.clip_dir, timeout=args.timeout)
    settings = job_settings(model=args.model, backend=args.backend, device=args.device,
                            window=args.window, overlap=args.overlap, revision=args.revision,
                            server=server)
    if settings.choice is not None and settings.choice.source != "user":
        progress(f"model: {settings.choice.why}")
    return settings


def _notes(bench: Any) -> list[str]:
    """Which model and why, fallbacks and out-of-memory budget changes, for the JSON."""
    session_notes = list(getattr(bench.session, "notes", []) or [])
    choice = bench.settings.choice
    chosen = [choice.why] if choice is not None and choice.source != "user" else []
    return list(dict.fromkeys([*chosen, *bench.notes, *session_notes]))


def _report(p: Any) -> None:
    eta = f", about {p.eta:.0f} s left" if p.eta is not None else ""
    progress(f"[{p.done}/{p.total}] {p.message}{eta}")


def run_analyze(args: argparse.Namespace) -> int:
    from marlin_desk.workflows import analyze, open_video

    started = time.perf_counter()
    bench = open_video(args.video, job_settings(args), use_cache=not args.no_cache)
    for note in bench.notes:
        progress(note)
    analysis, cached = analyze(bench, on_progress=_report)
    doc = analysis.to_json()
    doc.update(engine=bench.engine.describe() if bench.engine else None, cached=cached,
               seconds=round(time.perf_counter() - started, 3), notes=_notes(bench))
    if args.json:
        emit_json(doc)
    else:
        _print_analysis(doc)
    return 0


def run_find(args: argparse.Namespace) -> int:
    from marlin_desk.workflows import find, open_video

    if args.top is not None and args.top < 1:
        from marlin_desk.core.errors import BadInput

        raise BadInput("--top must be at least 1")
    bench = open_video(args.video, job_settings(args), use_cache=not args.no_cache)
    results = find(bench, args.queries, top=args.top, on_progress=_report)
    model = bench.engine.model_id if bench.engine else bench.settings.model
    doc = {"video": args.video, "duration": round(bench.info.duration, 3), "model": model,
           "engine": bench.engine.describe() if bench.engine else None,
           "queries": [r.to_json() for r in results], "notes": _notes(bench)}
    if args.json:
        emit_json(doc)
    else:
        for r in doc["queries"]:
            print(f'"{r["query"]}" ({r["seconds"]} s)')
            for s in r["spans"]:
                flag = "  (low confidence)" if s["low_confidence"] else ""
                print(f'  {s["start"]:8.1f} - {s["end"]:8.1f}  score {s["score"]}{flag}')
    return 0


def _print_analysis(doc: dict[str, Any]) -> None:
    print(f'Scene: {doc["scene"]}')
    print("Events:")
    for e in doc["events"]:
        print(f'  <{e["start"]:.1f} - {e["end"]:.1f}> {e["description"]}')
    n = len(doc["windows"])
    windows = f'{n} window{"s" if n != 1 else ""}'
    if doc.get("cached"):
        print(f"({windows}, from the cache)")
    elif "seconds" in doc:
        print(f'({windows} in {doc["seconds"]} s)')
    else:
        print(f"({windows})")


def run_demo(args: argparse.Namespace) -> int:
    """Real work offline: the real model when it is on this machine, else the bundled demo
    model (trained here on coloured screens: right about the demo video, about nothing else)."""
    from marlin_desk.resources import DEMO_QUERY, demo_video
    from marlin_desk.workflows import analyze, find, job_settings, open_video

    os.environ["HF_HUB_OFFLINE"] = "1"  # the demo never starts a multi-GB download by itself
    settings = job_settings()
    note = f"using {settings.choice.why}" if settings.choice else ""
    progress(note)
    bench = open_video(str(demo_video()), settings, use_cache=False)
    analysis, _ = analyze(bench, on_progress=_report)
    results = find(bench, [DEMO_QUERY], top=3)
    doc = {"note": note, "probe": bench.info.to_json(), "engine": bench.engine.describe(),
           "analysis": analysis.to_json(), "find": [r.to_json() for r in results]}
    if args.json:
        emit_json(doc)
    else:
        _print_analysis(doc["analysis"])
        for r in doc["find"]:
            spans = ", ".join(f'{s["start"]:.1f}-{s["end"]:.1f}' for s in r["spans"])
            print(f'find "{r["query"]}": {spans}')
        print(note)
    return 0
