"""FCPXML 1.8 for Final Cut Pro (10.4.1 and later; Resolve imports it too).

Written here with ElementTree rather than by otio-fcpx-xml-adapter's writer, which (1.0.0)
leaves `frameDuration` empty for 29.97/59.94/23.976 sources, fails on clip names with an
apostrophe (it builds XPath from names) and writes no library/event, timecode format or
`tcStart`. Its reader still reads these files back (the tests do), though it rounds NTSC
rates down to whole frames per second.

Layout: resources (a format per frame size, an asset per original file, starting at its
timecode; the main source's are r1 and r2), then library > event > project > sequence > spine
of asset-clips. All times are rational seconds on
the source's frame grid (`1001/30000s` is one frame at 29.97). Markers sit inside their clip in
the clip's own (source) time, one frame long (FCP markers are points): events as standard
markers, search results as to-do markers (red in FCP); the kind and length go in the note.
"""

from __future__ import annotations

from fractions import Fraction
from xml.etree import ElementTree as ET

from marlin_desk.handoff.frames import SourceVideo
from marlin_desk.handoff.otio_build import file_url
from marlin_desk.handoff.plan import Plan, PlannedClip

VERSION = "1.8"
EVENT_NAME = "Marlin Desk"
HEADER = '<?xml version="1.0" encoding="UTF-8"?>\n<!DOCTYPE fcpxml>\n'


def seconds(frames: int, rate: Fraction) -> str:
    """Frames as FCPXML rational seconds: `0s`, `2s`, `1001/30000s`, `3/25s`."""
    if frames == 0:
        return "0s"
    num, den = frames * rate.denominator, rate.numerator
    return f"{num // den}s" if num % den == 0 else f"{num}/{den}s"


def _tc_format(source: SourceVideo) -> str:
    return "DF" if source.drop_frame else "NDF"


def _format(source: SourceVideo, rid: str) -> dict[str, str]:
    attrs = {"id": rid, "frameDuration": seconds(1, source.rate)}
    if source.width and source.height:
        attrs.update(width=str(source.width), height=str(source.height))
    return attrs


def _asset(source: SourceVideo, rid: str, format_id: str) -> dict[str, str]:
    return {
        "id": rid, "name": source.name, "src": file_url(source.path),
        "start": seconds(source.start_frame, source.rate),
        "duration": seconds(source.total_frames, source.rate),
        "hasVideo": "1", "format": format_id,
        **({"hasAudio": "1", "audioSources": "1"} if source.has_audio else {"hasAudio": "0"}),
    }


def _resources(plan: Plan, resources: ET.Element) -> dict[str, tuple[str, str]]:
    """A format per frame size and an asset per file: file path -> (asset id, format id)."""
    formats: dict[tuple[int, int], str] = {}
    ids: dict[str, tuple[str, str]] = {}
    n = 0
    for source in plan.sources:
        size = (source.width, source.height)
        if size not in formats:
            n += 1
            formats[size] = f"r{n}"
            ET.SubElement(resources, "format", _format(source, formats[size]))
    for source in plan.sources:
        n += 1
        ids[source.path] = (f"r{n}", formats[(source.width, source.height)])
        ET.SubElement(resources, "asset", _asset(source, *ids[source.path]))
    return ids


def _asset_clip(spine: ET.Element, clip: PlannedClip, source: SourceVideo,
                timeline: SourceVideo, ids: tuple[str, str]) -> None:
    rate, tc0 = source.rate, source.start_frame
    element = ET.SubElement(spine, "asset-clip", {
        "name": clip.name, "ref": ids[0],
        "offset": seconds(timeline.timeline_start_frame + clip.record_in, rate),
        "start": seconds(tc0 + clip.source_in, rate),
        "duration": seconds(clip.frames, rate),
        "format": ids[1], "tcFormat": _tc_format(source),
    })
    for m in clip.markers:
        attrs = {"start": seconds(tc0 + m.source_frame, rate), "duration": seconds(1, rate),
                 "value": m.name}
        if m.kind == "search":
            attrs["completed"] = "0"  # a to-do marker: red in FCP, apart from the events
        attrs["note"] = m.note
        ET.SubElement(element, "marker", attrs)


def render(plan: Plan) -> bytes:
    source = plan.source
    root = ET.Element("fcpxml", {"version": VERSION})
    ids = _resources(plan, ET.SubElement(root, "resources"))
    event = ET.SubElement(ET.SubElement(root, "library"), "event", {"name": EVENT_NAME})
    project = ET.SubElement(event, "project", {"name": plan.title})
    sequence = ET.SubElement(project, "sequence", {
        "format": "r1", "duration": seconds(plan.frames, source.rate),
        "tcStart": seconds(source.timeline_start_frame, source.rate),
        "tcFormat": _tc_format(source),
    })
    spine = ET.SubElement(sequence, "spine")
    for clip in plan.clips:
        own = plan.source_of(clip)
        _asset_clip(spine, clip, own, source, ids[own.path])
    ET.indent(root, space="    ")
    return (HEADER + ET.tostring(root, encoding="unicode") + "\n").encode("utf-8")
