"""`marlin-desk handoff VIDEO --to TARGET`: a timeline for the editor's NLE.

Subclips: `--clip START-END` (repeatable), else the clip bin the app saved for the video (its
own project in the app's folder, or a `VIDEO-stem.marlin` project beside it), else one subclip
per event of the video's analysis.
Markers: the events (the project's edited ones when it has them, else the cached analysis or
`--events FILE`), and the spans found for each `--find QUERY` (from earlier `marlin-desk find`
runs, or `--find-json FILE`).
"""

from __future__ import annotations

import argparse
from typing import Any

from marlin_desk.cli.common import emit_json
from marlin_desk.core.errors import BadInput
from marlin_desk.core.project import Clip
from marlin_desk.core.timeline import Event


def register(subparsers: Any) -> None:
    from marlin_desk.handoff.targets import TARGET_NAMES, TARGETS

    p = subparsers.add_parser(
        "handoff", help="write a timeline for Premiere, Resolve, Final Cut or any EDL reader",
        description="Subclips of VIDEO (referencing the original file, frame-accurate, in the "
                    "source's timecode) with the events and search results as markers. Targets: "
                    + "; ".join(f"{t.name}: {t.help}" for t in TARGETS)
                    + ". Files are never overwritten: an existing name gets a ' (2)' suffix.")
    p.add_argument("video", metavar="VIDEO")
    p.add_argument("--to", required=True, choices=list(TARGET_NAMES), dest="target")
    p.add_argument("--out", metavar="FILE",
                   help="output file or folder (default: VIDEO-stem.TARGET.ext beside the video)")
    p.add_argument("--clip", action="append", default=[], metavar="START-END",
                   help="a subclip in seconds or [h:]m:s (repeatable; default: the saved clip "
                        "bin, else one subclip per event)")
    p.add_argument("--events", metavar="FILE", help="the output of `marlin-desk analyze --json`")
    p.add_argument("--find", action="append", default=[], metavar="QUERY",
                   help="add the spans found for QUERY as markers (repeatable)")
    p.add_argument("--find-json", metavar="FILE", help="the output of `marlin-desk find --json`")
    p.add_argument("--top", type=int, default=5, metavar="K",
                   help="how many spans of each --find query (default 5)")
    p.add_argument("--json", action="store_true", help="print one JSON document")
    p.set_defaults(func=run_handoff)


def _events(video: str, args: argparse.Namespace, project_events: list[Event] | None
            ) -> list[Event] | None:
    """The events, or None when the video has none yet (then markers are just left out)."""
    from marlin_desk.cli.export_cmd import _events_for

    if project_events is not None and not args.events:
        return project_events
    try:
        return _events_for(video, args)
    except BadInput:
        if args.events:
            raise
        return None


def run_handoff(args: argparse.Namespace) -> int:
    from pathlib import Path

    from marlin_desk.cli.export_cmd import _find_spans_for, parse_clip
    from marlin_desk.handoff import SearchHit
    from marlin_desk.handoff_export import clips_from_events, write_timeline
    from marlin_desk.workflows import saved_project

    video = args.video
    if not Path(video).is_file():
        raise BadInput(f"{video} does not exist or is not a file")
    if args.top < 1:
        raise BadInput("--top must be at least 1")
    project = saved_project(video)
    events = _events(video, args, project.events if project else None)
    if args.clip:
        clips, origin = [Clip(*parse_clip(text)) for text in args.clip], "--clip"
    elif project is not None and project.clips:
        clips, origin = list(project.clips), "project"
    else:
        if not events:
            raise BadInput("no clips to hand off: give --clip START-END, save clips in the app, "
                           "or run `marlin-desk analyze VIDEO` so that its events become clips")
        clips, origin = clips_from_events(events), "events"
    searches = [SearchHit(query, span) for query in args.find
                for span in _find_spans_for(video, query, args)[:args.top]]
    result = write_timeline(video, args.target, args.out, clips=clips, events=events or [],
                            searches=searches)
    if args.json:
        emit_json({"video": str(Path(video).resolve()), "clips_from": origin,
                   **result.to_json()})
    else:
        print(result.path)
    return 0
