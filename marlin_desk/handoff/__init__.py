"""Timelines for NLEs: subclips of the original file with the events and search results as
markers, for Premiere Pro, DaVinci Resolve, Final Cut Pro, any EDL reader and OpenTimelineIO.

Imports only marlin_desk.core and OpenTimelineIO (with its FCP7 and CMX 3600 adapters).
`render_timeline(target, request)` gives the bytes of the file; writing them without
overwriting anything is the caller's job (marlin_desk.handoff_export.write_timeline).

Names are loaded on first use, so that `targets` (what the CLI's parser needs) comes without
importing OpenTimelineIO.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # what type checkers and editors see
    from marlin_desk.handoff.frames import SourceVideo, parse_rate
    from marlin_desk.handoff.plan import HandoffRequest, Plan, SearchHit, make_plan
    from marlin_desk.handoff.render import render_timeline
    from marlin_desk.handoff.targets import TARGET_NAMES, TARGETS, Target, target

_NAMES = {
    "TARGETS": "targets", "TARGET_NAMES": "targets", "Target": "targets", "target": "targets",
    "SourceVideo": "frames", "parse_rate": "frames",
    "HandoffRequest": "plan", "Plan": "plan", "SearchHit": "plan", "make_plan": "plan",
    "render_timeline": "render",
}
__all__ = ["TARGETS", "TARGET_NAMES", "HandoffRequest", "Plan", "SearchHit", "SourceVideo",
           "Target", "make_plan", "parse_rate", "render_timeline", "target"]


def __getattr__(name: str) -> Any:
    if name not in _NAMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_NAMES[name]}"), name)
