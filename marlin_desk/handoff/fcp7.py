"""Final Cut Pro 7 XML (xmeml 4), which Premiere Pro and DaVinci Resolve import, through
OpenTimelineIO's FCP7 adapter (otio-fcp-adapter).

Markers go on the sequence (timeline frames), each with the description as its name and its
kind and length as the comment; FCP7 XML has no marker colours. An audio track repeats the
subclips when the source has sound. The file's and the sequence's
timecode say DF or NDF as the source does (the adapter reads that from our metadata).
"""

from __future__ import annotations

import opentimelineio as otio

from marlin_desk.handoff.otio_build import build_timeline, file_url, require_smpte_rate
from marlin_desk.handoff.plan import Plan

ADAPTER = "fcp_xml"
HEADER = '<?xml version="1.0" encoding="UTF-8"?>\n<!DOCTYPE xmeml>\n'


def _timecode_metadata(drop_frame: bool) -> dict:
    return {ADAPTER: {"timecode": {"displayformat": "DF" if drop_frame else "NDF"}}}


def render(plan: Plan) -> bytes:
    require_smpte_rate(plan, "FCP7 XML")
    timeline = build_timeline(plan, markers="timeline", audio=True)
    drop = plan.source.drop_frame
    timeline.metadata.update(_timecode_metadata(drop))
    drop_of = {file_url(s.path): s.drop_frame for s in plan.sources}  # each file its own
    for clip in timeline.find_clips():
        reference = clip.media_reference
        reference.metadata.update(_timecode_metadata(drop_of.get(reference.target_url, drop)))
    for marker in timeline.tracks.markers:
        note = marker.metadata["marlin_desk"]["note"]
        marker.metadata[ADAPTER] = {"comment": note}
    text = otio.adapters.write_to_string(timeline, ADAPTER)
    body = text.split("?>", 1)[1].lstrip() if text.startswith("<?xml") else text
    return (HEADER + body).encode("utf-8")
