"""Time as editors read and type it: H:MM:SS.mmm (hours only when needed), or SMPTE timecode
of the open video (HH:MM:SS:FF; HH:MM:SS;FF drop-frame at 29.97 and 59.94), as the
`time_display` preference says.

The preference and the open video's frame rate live in one module-level `display`, set by the
window (`set_display`) when either changes; every widget that shows times repaints on its
`changed` signal, so no settings object is threaded through the widgets. The frame arithmetic
is core.timecode's.

Typing reads both forms whatever the display: `12.5`, `1:02.5`, `1:02:03.25` are seconds;
`00:00:05:12` (four fields) and anything with ';' are timecode. Three or two colon fields with
no decimal point (`02:03:04`, `5:12`) are ambiguous: H:MM:SS or M:SS when the display shows
seconds, MM:SS:FF or SS:FF when it shows timecode, as the editor reads them on screen. A typed
timecode lands on the exact start of its frame (frame / rate).
"""

from __future__ import annotations

import math
import re
from fractions import Fraction
from types import EllipsisType
from typing import Any

from PySide6.QtCore import QObject, Signal

from marlin_desk.core import options
from marlin_desk.core.timecode import parse_rate, seconds_to_timecode, timecode_to_seconds

_TIME = re.compile(r"^\s*(?:(\d+):)?(?:(\d+):)?(\d+(?:\.\d*)?)\s*$")
_TIMECODE_ONLY = re.compile(r"^\s*(?:\d+:){3}\d+\s*$|;")  # four fields, or a drop-frame ';'
_COLON_FIELDS = re.compile(r"^\s*\d+(?::\d+){1,2}\s*$")  # 5:12, 02:03:04: no decimal point


class TimeDisplay(QObject):
    """How times show now: `mode` (one of options.TIME_DISPLAYS) and the open video's exact
    frame rate (None: no video, so times show in seconds)."""

    changed = Signal()

    def __init__(self) -> None:
        super().__init__()
        self.mode: str = options.DEFAULT_TIME_DISPLAY
        self.rate: Fraction | None = None

    @property
    def timecode(self) -> bool:
        """Whether times show as timecode now (the preference, and a known frame rate)."""
        return self.mode == "timecode" and self.rate is not None


display = TimeDisplay()


def rate_of(info: Any) -> Fraction | None:
    """A probed video's exact frame rate (VideoInfo.frame_rate, "30000/1001"), else its
    measured fps; None when neither is known."""
    if info is None:
        return None
    for value in (getattr(info, "frame_rate", ""), getattr(info, "fps", 0)):
        try:
            rate = parse_rate(value) if value else None
        except (ValueError, ZeroDivisionError):
            rate = None
        if rate is not None and rate > 0:
            return rate
    return None


def column_width(widget: Any) -> int:
    """A table column wide enough for a time in either display (`00:00:00;00`, `1:02:03.250`)
    in the widget's font."""
    return max(80, widget.fontMetrics().horizontalAdvance("00:00:00;00") + 18)


def set_display(mode: str | None = None,
                rate: Fraction | str | float | None | EllipsisType = ...) -> bool:
    """Change the display mode (None: keep it; an unknown name: the default) and/or the frame
    rate (left out: keep it; None: no video). Emits `display.changed` when something changed;
    returns whether it did."""
    before = (display.mode, display.rate)
    if mode is not None:
        display.mode = mode if mode in options.TIME_DISPLAYS else options.DEFAULT_TIME_DISPLAY
    if not isinstance(rate, EllipsisType):
        display.rate = None if rate is None or rate == "" else parse_rate(rate)
    if (display.mode, display.rate) == before:
        return False
    display.changed.emit()
    return True


def fmt_time(seconds: float, millis: bool = True, *, mode: str | None = None) -> str:
    """0:07.500, 1:02:03.250 in seconds; 00:00:07:12 (or ;12 at 29.97 and 59.94) in timecode,
    the frame nearest `seconds`. `mode` overrides the display ("seconds" for a duration such
    as an ETA); `millis=False` drops the milliseconds of the seconds form. Negative and NaN
    become 0."""
    if not math.isfinite(seconds) or seconds < 0:
        seconds = 0.0
    if (mode or display.mode) == "timecode" and display.rate is not None:
        return seconds_to_timecode(seconds, display.rate)
    ms_total = int(round(seconds * 1000))
    h, rem = divmod(ms_total, 3_600_000)
    m, rem = divmod(rem, 60_000)
    s, ms = divmod(rem, 1000)
    core = f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"
    return f"{core}.{ms:03d}" if millis else core


def parse_time(text: str, rate: Fraction | None = None) -> float:
    """Seconds (12.5, 1:02.5, 1:02:03.25) or timecode (00:00:05:12, 01:02:03;04, and the
    short forms the module says); `rate` defaults to the open video's. Raises ValueError,
    saying why."""
    text = str(text)
    timecode = bool(_TIMECODE_ONLY.search(text)) or (
        display.mode == "timecode" and bool(_COLON_FIELDS.match(text)))
    if not timecode:
        match = _TIME.match(text)
        if not match:
            raise ValueError(f"not a time: {text!r} (use seconds, M:SS.mmm or timecode "
                             "HH:MM:SS:FF)")
        a, b, c = match.groups()
        parts = [p for p in (a, b) if p is not None]
        value = float(c)
        for i, p in enumerate(reversed(parts)):
            value += int(p) * 60 ** (i + 1)
        return value
    rate = rate if rate is not None else display.rate
    if rate is None:
        raise ValueError(f"{text.strip()!r} is a timecode: it needs the video's frame rate "
                         "(open a video first, or type seconds)")
    return float(timecode_to_seconds(text, rate))


def count(n: int, noun: str, plural: str | None = None) -> str:
    """"1 clip", "3 clips", "1 moment"."""
    return f"{n} {noun if n == 1 else (plural or noun + 's')}"
