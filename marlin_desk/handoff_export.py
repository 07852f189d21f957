"""Hand-off files for a video on disk: probe it, draw the timeline (marlin_desk.handoff) and
write the file atomically without overwriting anything (media.naming: an existing name gets
' (2)'). The one call the CLI and, later, the app's menu use: `write_timeline`.

Also here, because they need the file system and the project format: the clip bin the app
saved for a video (`stored_clips`) and the subclips made from events when there is none.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from marlin_desk.core.errors import BadInput
from marlin_desk.core.project import Clip
from marlin_desk.core.timeline import Event
from marlin_desk.handoff import (
    HandoffRequest,
    Plan,
    SearchHit,
    SourceVideo,
    parse_rate,
    render_timeline,
    target,
)
from marlin_desk.media.naming import write_atomically
from marlin_desk.media.probe import VideoInfo, probe


@dataclass(frozen=True)
class HandoffResult:
    path: Path  # where the file went (a ' (n)' name when the asked one existed)
    target: str
    plan: Plan

    def to_json(self) -> dict[str, Any]:
        source = self.plan.source
        return {
            "path": str(self.path), "target": self.target,
            "frame_rate": f"{source.rate.numerator}/{source.rate.denominator}",
            "start_timecode": source.start_timecode, "drop_frame": source.drop_frame,
            "clips": [{"name": c.name, "in_frame": c.source_in, "out_frame": c.source_out,
                       "markers": len(c.markers)} for c in self.plan.clips],
            "markers": len(self.plan.markers), "markers_outside_clips": self.plan.unplaced,
        }


def source_video(info: VideoInfo) -> SourceVideo:
    """What a timeline needs to know about a probed file."""
    rate = parse_rate(info.frame_rate) if info.frame_rate else parse_rate(info.fps)
    return SourceVideo(path=os.path.abspath(info.path), rate=rate, duration=info.duration,
                       start_timecode=info.timecode, width=info.width, height=info.height,
                       has_audio=info.has_audio)


def default_output(video: str, target_name: str) -> Path:
    """`<video stem>.<target>.<suffix>` beside the video (`clip.premiere.xml`)."""
    source = Path(video).resolve()
    return source.with_name(f"{source.stem}.{target_name}{target(target_name).suffix}")


def write_timeline(video: str, target_name: str, out: str | os.PathLike[str] | None = None, *,
                   clips: Sequence[Clip], events: Sequence[Event] = (),
                   searches: Sequence[SearchHit] = (), title: str = "",
                   info: VideoInfo | None = None) -> HandoffResult:
    """Write the `target_name` timeline of `video`'s `clips` (clips of other files, library
    results, reference those) with `events` and `searches` as markers. `out`: a file, a
    folder (the default name inside) or None (beside the video). BadInput for an unknown
    target, no clips, a missing folder or a file at another frame rate; MarlinError when the
    disk refuses."""
    try:
        target(target_name)
    except ValueError as exc:
        raise BadInput(str(exc)) from None
    if not clips:
        raise BadInput("nothing to hand off: no clips (give --clip START-END, save clips in "
                       "the app, or analyse the video so that its events become clips)")
    info = info or probe(video)
    others = {c.video for c in clips if c.video and c.video != os.path.abspath(video)}
    request = HandoffRequest(source_video(info), list(clips), list(events), list(searches),
                             title or Path(video).stem,
                             {path: source_video(probe(path)) for path in sorted(others)})
    try:
        data, plan = render_timeline(target_name, request)
    except ValueError as exc:
        raise BadInput(str(exc)) from None
    final = Path(out) if out is not None else default_output(video, target_name)
    if final.is_dir():
        final = final / default_output(video, target_name).name
    if not final.parent.is_dir():
        raise BadInput(f"the folder {final.parent} does not exist")
    return HandoffResult(write_atomically(final, data), target_name, plan)


def clips_from_events(events: Sequence[Event]) -> list[Clip]:
    """One subclip per event, named by its description, in time order."""
    return [Clip(e.start, e.end, e.description, source="event")
            for e in sorted(events, key=lambda e: (e.start, e.end)) if e.end > e.start]
