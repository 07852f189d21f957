"""A Plan as an OpenTimelineIO timeline: the common form the OTIO adapters write.

Times follow OTIO's convention: a clip's source range is in the media's own time, which starts
at the source's timecode (a file recorded from 01:00:00:00 at 25 fps starts at frame 90000);
the timeline starts at 01:00:00:00 (`frames.TIMELINE_START`). Rates are the source's exact
rate as a double, values whole frames, so nothing is rounded again on the way out.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import opentimelineio as otio
from opentimelineio import opentime

from marlin_desk.handoff.frames import SourceVideo
from marlin_desk.handoff.plan import Plan, PlannedClip, PlannedMarker

# OTIO marker colours by marker kind (formats with colours map these further)
MARKER_COLOURS = {"event": otio.schema.MarkerColor.BLUE, "search": otio.schema.MarkerColor.GREEN}
APP_NAMESPACE = "marlin_desk"  # our own metadata: kind and note of each marker

MarkerPlace = Literal["clips", "timeline"]
SMPTE_RATES = "23.976, 24, 25, 29.97, 30, 48, 50, 59.94 or 60"


def require_smpte_rate(plan: Plan, what: str) -> None:
    """The OTIO adapters write timecode through OTIO, which knows SMPTE rates only: refuse
    other rates with a sentence that says what to do (ValueError)."""
    if not opentime.RationalTime.is_valid_timecode_rate(plan.source.fps):
        rate = plan.source.rate
        shown = f"{float(rate):.3f}".rstrip("0").rstrip(".")
        raise ValueError(f"{what} needs a frame rate of {SMPTE_RATES} fps and this video runs "
                         f"at {shown} fps: hand it off as fcpx or otio, or conform it first")


def file_url(path: str) -> str:
    """`file:///...` with spaces and non-ASCII letters percent-encoded (what NLEs expect)."""
    return Path(path).absolute().as_uri()


def _time(frame: int, fps: float) -> opentime.RationalTime:
    return opentime.RationalTime(frame, fps)


def _range(frame: int, frames: int, fps: float) -> opentime.TimeRange:
    return opentime.TimeRange(_time(frame, fps), _time(frames, fps))


def _marker(m: PlannedMarker, frame: int, fps: float) -> otio.schema.Marker:
    metadata = {APP_NAMESPACE: {"kind": m.kind, "note": m.note}}
    return otio.schema.Marker(name=m.name, marked_range=_range(frame, m.frames, fps),
                              color=MARKER_COLOURS[m.kind], metadata=metadata)


def build_timeline(plan: Plan, *, markers: MarkerPlace = "clips",
                   audio: bool = False) -> otio.schema.Timeline:
    """One video track of subclips of the source, back to back (and, with `audio` and a
    source that has sound, an audio track of the same subclips).

    markers="clips": each marker on its subclip, in source time (OTIO, EDL);
    markers="timeline": on the timeline's stack, in timeline frames (FCP7 sequence markers).
    """
    source = plan.source
    fps = source.fps
    timeline = otio.schema.Timeline(
        name=plan.title, global_start_time=_time(source.timeline_start_frame, fps))
    track = otio.schema.Track(name="V1", kind=otio.schema.TrackKind.Video)
    timeline.tracks.append(track)
    for planned in plan.clips:
        track.append(_clip(planned, plan.source_of(planned), fps, markers == "clips"))
    if audio and any(s.has_audio for s in plan.sources):
        sound = otio.schema.Track(name="A1", kind=otio.schema.TrackKind.Audio)
        timeline.tracks.append(sound)
        for planned in plan.clips:
            own = plan.source_of(planned)
            if not own.has_audio:  # a silent file's stretch stays empty on the audio track
                sound.append(otio.schema.Gap(source_range=_range(0, planned.frames, fps)))
                continue
            clip = _clip(planned, own, fps, False)
            clip.metadata[APP_NAMESPACE] = {"track": "A1"}  # its own clip, not the video's
            sound.append(clip)
    if markers == "timeline":
        for m in plan.markers:
            timeline.tracks.markers.append(_marker(m, m.record_frame, fps))
    return timeline


def _clip(planned: PlannedClip, source: SourceVideo, fps: float,
          with_markers: bool) -> otio.schema.Clip:
    tc0 = source.start_frame
    reference = otio.schema.ExternalReference(
        target_url=file_url(source.path), available_range=_range(tc0, source.total_frames, fps))
    clip = otio.schema.Clip(name=planned.name, media_reference=reference,
                            source_range=_range(tc0 + planned.source_in, planned.frames, fps))
    if with_markers:
        for m in planned.markers:
            clip.markers.append(_marker(m, tc0 + m.source_frame, fps))
    return clip
