"""`marlin-desk dev ...`: developer tools (the tiny offline test model, from marlin_desk.dev)."""

from __future__ import annotations

import argparse
from typing import Any

from marlin_desk.cli.common import emit_json, progress


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("dev", help="developer tools")
    actions = parser.add_subparsers(dest="dev_action", metavar="ACTION", required=True)
    tiny = actions.add_parser("tiny-model", help="build a tiny random Marlin-format model offline")
    tiny.add_argument("dir", help="output folder")
    tiny.add_argument("--seed", type=int, default=0)
    tiny.add_argument("--vllm", action="store_true",
                      help="the variant vLLM's CPU build can serve too (DeltaNet head dims 64, "
                           "bf16 weights); the app loads it as well")
    tiny.add_argument("--json", action="store_true")
    tiny.set_defaults(func=run_tiny)


def run_tiny(args: argparse.Namespace) -> int:
    from marlin_desk.dev.tiny_model import build_tiny_model

    progress(f"building a tiny model in {args.dir} ...")
    out = build_tiny_model(args.dir, seed=args.seed, for_vllm=args.vllm)
    files = {p.name: p.stat().st_size for p in sorted(out.iterdir())}
    if args.json:
        emit_json({"dir": str(out), "files": files, "vllm": args.vllm})
    else:
        print(f"tiny model written to {out} ({sum(files.values()) / 1e6:.1f} MB)")
    return 0
