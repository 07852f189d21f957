"""Seconds to frames and timecode for one source video: the only place hand-off rounds time.

A time in seconds becomes the nearest frame of the source (half a frame rounds up). Timecode
labels count the same frames: `01:00:00;00` (';' or '.') is drop-frame, `01:00:00:00` is not;
without a recorded timecode, 29.97 and 59.94 sources use drop-frame (the broadcast convention)
and every other rate non-drop. Timecode counts frames in its timebase, the rate rounded to a
whole number (30 at 29.97, 15 for a 15 fps screen recording, 120 for slow motion): computed
here, so that rates SMPTE does not list (which OpenTimelineIO's timecode refuses) work too.
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass
from fractions import Fraction

TIMELINE_START = "01:00:00:00"  # where every hand-off timeline starts (Resolve's default)
_DROP_RATES = (Fraction(30000, 1001), Fraction(60000, 1001))


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
        if self.rate not in _DROP_RATES:
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


def parse_rate(text: str | float | Fraction) -> Fraction:
    """`30000/1001`, `25`, `29.97` (a float close to an NTSC rate becomes that rate)."""
    if isinstance(text, Fraction):
        return text
    if isinstance(text, str) and "/" in text:
        num, _, den = text.partition("/")
        return Fraction(int(num), int(den))
    value = float(text)
    for ntsc in (Fraction(24000, 1001), *_DROP_RATES, Fraction(48000, 1001),
                 Fraction(120000, 1001)):
        if abs(value - float(ntsc)) < 0.005:
            return ntsc
    return Fraction(value).limit_denominator(1001)


def to_frame(seconds: float, rate: Fraction) -> int:
    """The nearest frame to `seconds` (exact arithmetic; half a frame rounds up)."""
    return math.floor(Fraction(seconds) * rate + Fraction(1, 2))


def frame_seconds(frame: int, rate: Fraction) -> Fraction:
    """Where frame `frame` starts, in exact seconds."""
    return Fraction(frame) / rate


_TIMECODE = re.compile(r"(\d+)[:;.](\d\d)[:;.](\d\d)[:;.,](\d\d)")


def timebase(rate: Fraction) -> int:
    """Frames per timecode second: the rate rounded (30 at 29.97), at least 1."""
    return max(1, math.floor(rate + Fraction(1, 2)))


def _dropped(rate: Fraction) -> int:
    """Frame labels skipped each minute (but every tenth) in drop-frame: 2 at 29.97, 4 at 59.94."""
    if rate not in _DROP_RATES:
        raise ValueError(f"drop-frame timecode exists only at 29.97 and 59.94 fps, not {rate}")
    return 2 * timebase(rate) // 30


def timecode_to_frame(tc: str, rate: Fraction, drop_frame: bool) -> int:
    """The frame number a label stands for (`01:00:00;00` at 29.97 DF: 107892)."""
    match = _TIMECODE.fullmatch(tc.strip())
    if match is None:
        raise ValueError(f"{tc!r} is not a timecode (HH:MM:SS:FF)")
    h, m, s, f = (int(g) for g in match.groups())
    tb = timebase(rate)
    frames = ((h * 60 + m) * 60 + s) * tb + f
    if drop_frame:
        minutes = h * 60 + m
        frames -= _dropped(rate) * (minutes - minutes // 10)
    return frames


def frame_to_timecode(frame: int, rate: Fraction, drop_frame: bool) -> str:
    """The label of frame number `frame` (`;` before the frames when drop-frame; after
    23:59:59 it starts again at 00:00:00)."""
    if frame < 0:
        raise ValueError(f"frame {frame} is before timecode 00:00:00:00")
    tb = timebase(rate)
    if drop_frame:
        drop = _dropped(rate)
        per_minute, per_ten = tb * 60 - drop, tb * 600 - drop * 9
        tens, rest = divmod(frame, per_ten)
        frame += drop * 9 * tens + (drop * ((rest - drop) // per_minute) if rest > drop else 0)
    seconds, f = divmod(frame, tb)
    minutes, s = divmod(seconds, 60)
    h, m = divmod(minutes, 60)
    h %= 24  # timecode wraps at midnight, as in every NLE
    return f"{h:02d}:{m:02d}:{s:02d}{';' if drop_frame else ':'}{f:02d}"
