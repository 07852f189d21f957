"""CMX 3600 EDL through OpenTimelineIO's adapter (otio-cmx3600-adapter), Avid style.

One event per subclip on V (EDLs have one video track), the reel named after the source file
(8 characters, letters and digits), `* FROM CLIP NAME:` the subclip's name and `* FROM CLIP:`
the file's URL. Record timecodes start at the timeline start, 01:00:00:00 (the adapter counts
from zero, so the track opens with a gap that long, which an EDL writes as nothing). Markers
become `* LOC:` comments at their source timecode with their colour (the adapter upper-cases
the text). We add the `FCM:` line that says whether the timecodes are drop-frame (the adapter
writes none), and relabel the adapter's timecodes non-drop for a 29.97/59.94 source recorded
with non-drop timecode (the adapter always writes those rates drop-frame).
"""

from __future__ import annotations

import re

import opentimelineio as otio
from opentimelineio import opentime

from marlin_desk.handoff.frames import SourceVideo, timecode_to_frame
from marlin_desk.handoff.otio_build import build_timeline, file_url, require_smpte_rate
from marlin_desk.handoff.plan import Plan

ADAPTER = "cmx_3600"
REEL_LENGTH = 8


def reel_name(file_name: str) -> str:
    """The reel of a file: its stem's letters and digits, at most 8 (AX when none are left)."""
    stem = re.sub(r"\.[^.]*$", "", file_name)
    return re.sub(r"[^A-Za-z0-9]", "", stem)[:REEL_LENGTH].upper() or "AX"


_DROP_TIMECODE = re.compile(r"\b\d\d:\d\d:\d\d;\d\d\b")


def _non_drop(text: str, source: SourceVideo) -> str:
    """Every drop-frame label in `text` as the same frame's non-drop label."""
    def relabel(match: re.Match[str]) -> str:
        return source.timecode(timecode_to_frame(match.group(0), source.rate, True))

    return _DROP_TIMECODE.sub(relabel, text)


def render(plan: Plan) -> bytes:
    require_smpte_rate(plan, "a CMX 3600 EDL")
    timeline = build_timeline(plan, markers="clips")
    fps = plan.source.fps
    lead_in = opentime.TimeRange(opentime.RationalTime(0, fps),
                                 opentime.RationalTime(plan.source.timeline_start_frame, fps))
    timeline.tracks[0].insert(0, otio.schema.Gap(source_range=lead_in))
    reels = {file_url(s.path): reel_name(s.name) for s in plan.sources}
    for clip in timeline.find_clips():  # each subclip on the reel of its own file
        clip.metadata[ADAPTER] = {"reel": reels[clip.media_reference.target_url]}
    text = otio.adapters.write_to_string(timeline, ADAPTER, rate=plan.source.fps,
                                         style="avid", reelname_len=REEL_LENGTH)
    if not plan.source.drop_frame:
        text = _non_drop(text, plan.source)
    fcm = "FCM: DROP FRAME" if plan.source.drop_frame else "FCM: NON-DROP FRAME"
    lines = text.splitlines()
    at = 1 if lines and lines[0].startswith("TITLE:") else 0
    lines.insert(at, fcm)
    return ("\n".join(lines) + "\n").encode("utf-8")
