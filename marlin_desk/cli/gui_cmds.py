"""`marlin-desk app [VIDEO]` opens the window; `marlin-desk selftest` runs the headless
self-test. Qt is imported only when one of these runs, never when the parser is built."""

from __future__ import annotations

import argparse
from typing import Any


def register(sub: Any) -> None:
    app = sub.add_parser("app", help="open the desktop app (optionally with a video or project)")
    app.add_argument("video", nargs="?", help="a video file or a .marlin project to open")
    app.set_defaults(func=_run_app)

    test = sub.add_parser(
        "selftest", help="open the real window headless, analyse, search, screenshot, report")
    test.add_argument("video", nargs="?", help="video to use (default: the bundled demo video)")
    test.add_argument("--model", help="model folder or hub id (default: as the app chooses)")
    test.add_argument("--screenshot", metavar="PNG", help="save a screenshot of the window")
    test.add_argument("--json", action="store_true", help="print the summary as JSON")
    test.add_argument("--query", help="the query to run (default: the demo's query on the "
                                     "demo video, else 'a person walking')")
    test.add_argument("--max-tokens", type=int, default=48,
                      help="cap on caption tokens per window (a smoke test, not a full caption)")
    test.set_defaults(func=_run_selftest)


def _run_app(args: argparse.Namespace) -> int:
    from marlin_desk.gui.app import run_app

    return run_app(args.video)


def _run_selftest(args: argparse.Namespace) -> int:
    from marlin_desk.gui.selftest import run_selftest

    return run_selftest(args.video, args.model, args.screenshot, args.json, args.query,
                        args.max_tokens)
