"""`marlin-desk server-setup`: what a vLLM server needs to serve Marlin as the app runs it."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from marlin_desk.cli.common import emit_json, progress

TEMPLATE_NAME = "marlin_bare_video.jinja"


def register(subparsers: Any) -> None:
    from marlin_desk.models import DEFAULT_MODEL

    p = subparsers.add_parser(
        "server-setup",
        help="write the chat template a vLLM server needs for Marlin and print its command",
        description="Writes the model's chat template with the video as the bare pad token "
                    "(what vLLM needs to build the prompt Marlin was trained on) and prints the "
                    "`vllm serve` command with the video budget as its defaults. See "
                    "docs/serving.md.")
    p.add_argument("--model", default=DEFAULT_MODEL,
                   help=f"hub id (pulled with `marlin-desk models pull`) or folder "
                        f"(default {DEFAULT_MODEL})")
    p.add_argument("--out", default=".", help="folder for the template (default: here)")
    p.add_argument("--served-model", default="marlin", help="the name clients will use")
    p.add_argument("--gpus", type=int, default=1, help="GPUs on the server machine: one "
                   "replica each (data parallelism)")
    p.add_argument("--port", type=int, default=8000)
    p.add_argument("--json", action="store_true", help="print one JSON document")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from marlin_desk.core.errors import BadInput
    from marlin_desk.engine.loader import locate, model_budget
    from marlin_desk.remote.serving import serve_command, write_bare_video_template

    if args.gpus < 1:
        raise BadInput("--gpus must be at least 1")
    folder = locate(args.model)
    template = write_bare_video_template(folder, Path(args.out).expanduser() / TEMPLATE_NAME)
    # A hub id is served by name (the server downloads it); a folder by its path.
    model = args.model if not Path(args.model).expanduser().is_dir() else str(folder.resolve())
    command = serve_command(model, template.resolve(), served_model=args.served_model,
                            gpus=args.gpus, port=args.port, budget=model_budget(str(folder)))
    url = f"http://SERVER:{args.port}/v1"
    if args.json:
        emit_json({"template": str(template), "command": command, "url": url,
                   "served_model": args.served_model})
        return 0
    progress(f"wrote {template}")
    print(command)
    progress(f"then: marlin-desk analyze VIDEO --url {url} --served-model {args.served_model}")
    return 0
