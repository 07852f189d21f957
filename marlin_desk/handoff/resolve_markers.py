"""DaVinci Resolve's marker EDL (Timeline > Import > Timeline Markers from EDL), written here:
OpenTimelineIO has no writer for it.

Each marker is a one-frame event at its timeline timecode followed by a line
` |C:ResolveColorBlue |M:name |D:n` (colour, name, length in frames). Timecodes count from the
timeline start (`frames.TIMELINE_START`, Resolve's default), so the markers land where the
subclips of the `resolve` timeline are. '|' cannot appear in a name: it becomes '/'.
"""

from __future__ import annotations

from marlin_desk.handoff.plan import Plan, PlannedMarker

# Resolve's marker colour names, by marker kind
COLOURS = {"event": "ResolveColorBlue", "search": "ResolveColorGreen"}


def _line(index: int, m: PlannedMarker, plan: Plan) -> str:
    source = plan.source
    start = source.timeline_start_frame + m.record_frame
    tc_in, tc_out = source.timecode(start), source.timecode(start + 1)
    name = m.name.replace("|", "/")
    return (f"{index:03d}  001      V     C        {tc_in} {tc_out} {tc_in} {tc_out}  \n"
            f" |C:{COLOURS[m.kind]} |M:{name} |D:{m.frames}\n")


def render(plan: Plan) -> bytes:
    fcm = "DROP FRAME" if plan.source.drop_frame else "NON-DROP FRAME"
    parts = [f"TITLE: {plan.title}\nFCM: {fcm}\n\n"]
    parts += [_line(i, m, plan) + "\n" for i, m in enumerate(plan.markers, start=1)]
    return "".join(parts).encode("utf-8")
