"""Timelines for NLEs: subclips of the original file with the events and search results as
markers, for Premiere Pro, DaVinci Resolve, Final Cut Pro, any EDL reader and OpenTimelineIO.

Imports only marlin_desk.core and OpenTimelineIO (with its FCP7 and CMX 3600 adapters).
`render_timeline(target, request)` gives the bytes of the file; writing them without
overwriting anything is the caller's job (marlin_desk.handoff_export.write_timeline).
"""

from marlin_desk.handoff.frames import SourceVideo, parse_rate
from marlin_desk.handoff.plan import HandoffRequest, Plan, SearchHit, make_plan
from marlin_desk.handoff.render import render_timeline
from marlin_desk.handoff.targets import TARGET_NAMES, TARGETS, Target, target

__all__ = ["TARGETS", "TARGET_NAMES", "HandoffRequest", "Plan", "SearchHit", "SourceVideo",
           "Target", "make_plan", "parse_rate", "render_timeline", "target"]
