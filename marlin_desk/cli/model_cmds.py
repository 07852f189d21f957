"""`marlin-desk analyze|find|demo`: the model's two answers for a whole video."""

from __future__ import annotations

import argparse
import os
import time
from typing import Any

from marlin_desk.cli.common import emit_json, progress


def model_options(parser: argparse.ArgumentParser, *, window_concurrency: bool = True) -> None:
    """The options that choose the model and how it runs (analyze, find, batch)."""
    from marlin_desk.engine.loader import DEFAULT_MODEL

    parser.add_argument("--model", default=DEFAULT_MODEL,
                        help=f"hub id or local folder (default {DEFAULT_MODEL})")
    parser.add_argument("--revision", default=None, help="hub revision (branch, tag or commit)")
    parser.add_argument("--device", default="auto", choices=["auto", "cpu", "cuda", "mps"])
    parser.add_argument(
        "--backend", default="auto",
        choices=["auto", "gptq", "bnb4", "bf16", "fp32", "sdnq", "remote"],
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
    if window_concurrency:  # batch has its own --concurrency: videos at once
        server.add_argument("--concurrency", type=int, default=4, dest="window_concurrency",
                            help="windows in flight per video (default 4)")
    server.add_argument("--clip-dir", default=None,
                        help="a folder the server can read too (--allowed-local-media-path): "
                             "clips are passed as file URLs instead of uploaded")
    server.add_argument("--timeout", type=float, default=None,
                        help="seconds to wait for one answer (default 600)")
    parser.add_argument("--window", type=float, default=120.0,
                        help="window length in seconds (at most 120: the model's 240 frames)")
    parser.add_argument("--overlap", type=float, default=0.0, help="window overlap in seconds")
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
    """JobSettings from the model options (the cache key: analyze, find and batch agree)."""
    from marlin_desk.core.errors import BadInput
    from marlin_desk.workflows import JobSettings, ServerSettings

    backend = getattr(args, "backend", "auto")
    url = getattr(args, "url", None)
    if url and backend == "auto":
        backend = "remote"
    server = None
    if backend == "remote":
        if not url:
            raise BadInput("--backend remote needs --url http://HOST:PORT/v1 (the server's "
                           "address; see docs/serving.md)")
        concurrency = getattr(args, "window_concurrency", 4)
        if concurrency < 1:
            raise BadInput("--concurrency must be at least 1")
        server = ServerSettings(url=url, served_model=args.served_model, api_key=args.api_key,
                                concurrency=concurrency, clip_dir=args.clip_dir,
                                timeout=args.timeout)
    return JobSettings(model=args.model, device=args.device, window=args.window,
                       overlap=args.overlap, revision=args.revision, backend=backend,
                       server=server)


def _notes(bench: Any) -> list[str]:
    """Fallbacks and out-of-memory budget changes, for the JSON and the terminal."""
    session_notes = list(getattr(bench.session, "notes", []) or [])
    return list(dict.fromkeys([*bench.notes, *session_notes]))


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
    model = bench.engine.model_id if bench.engine else args.model
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
    from marlin_desk.core.errors import ModelUnavailable
    from marlin_desk.engine.loader import DEFAULT_MODEL, locate
    from marlin_desk.resources import DEMO_QUERY, demo_model, demo_video
    from marlin_desk.workflows import JobSettings, analyze, find, open_video

    os.environ["HF_HUB_OFFLINE"] = "1"  # the demo never starts a multi-GB download by itself
    try:
        model = str(locate(DEFAULT_MODEL))
        note = f"using {DEFAULT_MODEL}"
    except ModelUnavailable:
        model = str(demo_model())
        note = (f"{DEFAULT_MODEL} is not on this machine, so the bundled demo model runs instead "
                f"(a tiny model of the same architecture that knows only red, green, blue "
                f"and yellow screens on black, as in the demo video). Get the real model with "
                f"`marlin-desk models pull {DEFAULT_MODEL}` on a connected machine.")
    progress(note)
    bench = open_video(str(demo_video()), JobSettings(model=model), use_cache=False)
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
