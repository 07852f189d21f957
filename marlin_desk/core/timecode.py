"""Frames and SMPTE timecode for one frame rate: the only place that counts them (hand-off's
timelines and the app's timecode display both call these).

A frame rate is an exact Fraction (30000/1001, not 29.97). A time in seconds becomes the nearest
frame (half a frame rounds up); frame k starts at k / rate seconds. Timecode labels count the
same frames in the timebase, the rate rounded to a whole number (30 at 29.97, 15 for a 15 fps
screen recording, 120 for slow motion), so rates SMPTE does not list work too. `01:00:00;00`
(';' before the frames, '.' or ',' also read) is drop-frame, which exists only at 29.97 and
59.94 fps and is their default; `01:00:00:00` is non-drop, every other rate's only kind.
"""

from __future__ import annotations

import math
import re
from fractions import Fraction

NTSC_FILM = Fraction(24000, 1001)
DROP_RATES = (Fraction(30000, 1001), Fraction(60000, 1001))
_NTSC_RATES = (NTSC_FILM, *DROP_RATES, Fraction(48000, 1001), Fraction(120000, 1001))
_DROP_SEPARATORS = ";.,"

# [[[HH:]MM:]SS:]FF with two to four fields: HH:MM:SS:FF, MM:SS:FF, SS:FF
_TIMECODE = re.compile(r"(?:(?:(\d+)[:;.])?(\d+)[:;.])?(\d+)([:;.,])(\d+)")


def parse_rate(text: str | float | Fraction) -> Fraction:
    """`30000/1001`, `25`, `29.97` (a float close to an NTSC rate becomes that rate)."""
    if isinstance(text, Fraction):
        return text
    if isinstance(text, str) and "/" in text:
        num, _, den = text.partition("/")
        return Fraction(int(num), int(den))
    value = float(text)
    for ntsc in _NTSC_RATES:
        if abs(value - float(ntsc)) < 0.005:
            return ntsc
    return Fraction(value).limit_denominator(1001)


def to_frame(seconds: float | Fraction, rate: Fraction) -> int:
    """The nearest frame to `seconds` (exact arithmetic; half a frame rounds up)."""
    return math.floor(Fraction(seconds) * rate + Fraction(1, 2))


def frame_seconds(frame: int, rate: Fraction) -> Fraction:
    """Where frame `frame` starts, in exact seconds."""
    return Fraction(frame) / rate


def timebase(rate: Fraction) -> int:
    """Frames per timecode second: the rate rounded (30 at 29.97), at least 1."""
    return max(1, math.floor(rate + Fraction(1, 2)))


def is_drop_rate(rate: Fraction) -> bool:
    """Whether drop-frame timecode exists at this rate (29.97 and 59.94 only), and so is its
    default."""
    return rate in DROP_RATES


def _dropped(rate: Fraction) -> int:
    """Frame labels skipped each minute (but every tenth) in drop-frame: 2 at 29.97, 4 at 59.94."""
    if not is_drop_rate(rate):
        raise ValueError(f"drop-frame timecode exists only at 29.97 and 59.94 fps, "
                         f"not at {float(rate):g}")
    return 2 * timebase(rate) // 30


def timecode_to_frame(tc: str, rate: Fraction, drop_frame: bool | None = None) -> int:
    """The frame number a label stands for: `01:00:00;00` at 29.97 DF is 107892.

    Full (`01:02:03:04`, `1:02:03;04`) and partial forms (`02:03:04` is MM:SS:FF, `03:04`
    SS:FF) are read. `drop_frame=None`: drop-frame when the label says so (';' before the
    frames) or the rate's default (drop-frame at 29.97 and 59.94); True or False decides.
    Raises ValueError, saying why, for anything else (a field out of range, a label that
    drop-frame skips, ';' at a rate without drop-frame)."""
    text = tc.strip()
    match = _TIMECODE.fullmatch(text)
    if match is None:
        raise ValueError(f"{tc!r} is not a timecode (HH:MM:SS:FF, or MM:SS:FF)")
    h, m, s, sep, f = match.groups()
    fields = [None if v is None else int(v) for v in (h, m, s)]
    hours, minutes, seconds, frames = fields[0] or 0, fields[1] or 0, fields[2] or 0, int(f)
    tb = timebase(rate)
    if frames >= tb:
        raise ValueError(f"{tc!r}: frame {frames} does not exist at {float(rate):g} fps "
                         f"(00 to {tb - 1:02d})")
    if (h is not None or m is not None) and seconds >= 60:
        raise ValueError(f"{tc!r}: seconds must be 00 to 59")
    if h is not None and minutes >= 60:
        raise ValueError(f"{tc!r}: minutes must be 00 to 59")
    if drop_frame is None:
        drop_frame = sep in _DROP_SEPARATORS or is_drop_rate(rate)
    # the first field may be larger than its clock allows (`90:00:00` is 1 h 30 min): it carries
    total_minutes, seconds = divmod((hours * 60 + minutes) * 60 + seconds, 60)
    count = (total_minutes * 60 + seconds) * tb + frames
    if not drop_frame:
        return count
    drop = _dropped(rate)
    if seconds == 0 and frames < drop and total_minutes % 10:
        raise ValueError(f"{tc!r} is not a drop-frame label: at 29.97 and 59.94 fps frames "
                         f"00 to {drop - 1:02d} are skipped at each minute but every tenth")
    return count - drop * (total_minutes - total_minutes // 10)


def frame_to_timecode(frame: int, rate: Fraction, drop_frame: bool | None = None) -> str:
    """The label of frame number `frame` (`;` before the frames when drop-frame; None: the
    rate's default; after 23:59:59 it starts again at 00:00:00)."""
    if frame < 0:
        raise ValueError(f"frame {frame} is before timecode 00:00:00:00")
    if drop_frame is None:
        drop_frame = is_drop_rate(rate)
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


def seconds_to_timecode(seconds: float | Fraction, rate: Fraction,
                        drop_frame: bool | None = None) -> str:
    """The label of the frame nearest to `seconds` (negative times show frame 0)."""
    return frame_to_timecode(max(0, to_frame(seconds, rate)), rate, drop_frame)


def timecode_to_seconds(tc: str, rate: Fraction, drop_frame: bool | None = None) -> Fraction:
    """Where the labelled frame starts, exactly (frame / rate)."""
    return frame_seconds(timecode_to_frame(tc, rate, drop_frame), rate)
