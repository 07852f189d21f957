"""Seconds to frames and timecode for one source video: the only place hand-off rounds time
(the arithmetic itself is core.timecode's).

A time in seconds becomes the nearest frame of the source (half a frame rounds up). Timecode
labels count the same frames: `01:00:00;00` (';' or '.') is drop-frame, `01:00:00:00` is not;
without a recorded timecode, 29.97 and 59.94 sources use drop-frame (the broadcast convention)
and every other rate non-drop. Timecode counts frames in its timebase, the rate rounded to a
whole number (30 at 29.97, 15 for a 15 fps screen recording, 120 for slow motion), counted
there, so that rates SMPTE does not list (which OpenTimelineIO's timecode refuses) work too.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from fractions import Fraction

# the frame and timecode arithmetic is core.timecode's, shared with the app's timecode display
from marlin_desk.core.timecode import (
    frame_seconds,
    frame_to_timecode,
    is_drop_rate,
    parse_rate,
    timebase,
    timecode_to_frame,
    to_frame,
)

__all__ = ["TIMELINE_START", "SourceVideo", "frame_seconds", "frame_to_timecode", "parse_rate",
           "timebase", "timecode_to_frame", "to_frame"]

TIMELINE_START = "01:00:00:00"  # where every hand-off timeline starts (Resolve's default)


@dataclass(frozen=True)
class SourceVideo:
    """The facts about the source file a timeline needs (media.probe has them all)."""

    path: str  # absolute path of the original file: every subclip references it
    rate: Fraction  # the nominal frame rate, exact: Fraction(30000, 1001)
    duration: float  # seconds, from the first frame
    start_timecode: str | None = None  # as recorded, e.g. "01:00:00;00"; None: starts at 0
    width: int = 0  # 0: unknown
    height: int = 0
    has_audio: bool = True

    def __post_init__(self) -> None:
        if not self.rate > 0:
            raise ValueError(f"frame rate {self.rate} is not positive")
        if not self.duration > 0:
            raise ValueError(f"duration {self.duration} is not positive")

    @property
    def name(self) -> str:
        return os.path.basename(self.path)

    @property
    def fps(self) -> float:
        """The rate as OTIO stores it (a double)."""
        return float(self.rate)

    @property
    def drop_frame(self) -> bool:
        """Drop-frame labels: only 29.97 and 59.94 have them; a recorded timecode decides."""
        if not is_drop_rate(self.rate):
            return False
        if self.start_timecode:
            return ";" in self.start_timecode or "." in self.start_timecode
        return True

    @property
    def total_frames(self) -> int:
        return max(1, to_frame(self.duration, self.rate))

    @property
    def start_frame(self) -> int:
        """The frame number the first frame's timecode stands for (0 without timecode)."""
        if not self.start_timecode:
            return 0
        return timecode_to_frame(self.start_timecode, self.rate, self.drop_frame)

    @property
    def timeline_start_frame(self) -> int:
        return timecode_to_frame(TIMELINE_START, self.rate, self.drop_frame)

    def timecode(self, frame: int) -> str:
        """The label of an absolute frame number, in this source's timecode style."""
        return frame_to_timecode(frame, self.rate, self.drop_frame)
