"""`marlin-desk probe VIDEO`: what a file holds, as the app sees it."""

from __future__ import annotations

import argparse
from typing import Any

from marlin_desk.cli.common import emit_json


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("probe", help="show a video's duration, size, fps, rotation...")
    parser.add_argument("video")
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    parser.set_defaults(func=run_probe)


def run_probe(args: argparse.Namespace) -> int:
    from marlin_desk.media.probe import probe

    info = probe(args.video).to_json()
    if args.json:
        emit_json(info)
    else:
        for key, value in info.items():
            print(f"{key:>20}: {value}")
    return 0
