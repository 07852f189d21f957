"""Time as editors read and type it: H:MM:SS.mmm (hours only when needed)."""

from __future__ import annotations

import math
import re

_TIME = re.compile(r"^\s*(?:(\d+):)?(?:(\d+):)?(\d+(?:\.\d*)?)\s*$")


def fmt_time(seconds: float, millis: bool = True) -> str:
    """0:07.500, 1:02:03.250; negative and NaN become 0."""
    if not math.isfinite(seconds) or seconds < 0:
        seconds = 0.0
    ms_total = int(round(seconds * 1000))
    h, rem = divmod(ms_total, 3_600_000)
    m, rem = divmod(rem, 60_000)
    s, ms = divmod(rem, 1000)
    core = f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"
    return f"{core}.{ms:03d}" if millis else core


def parse_time(text: str) -> float:
    """Accepts 12.5, 1:02.5, 1:02:03.25; raises ValueError otherwise."""
    match = _TIME.match(text)
    if not match:
        raise ValueError(f"not a time: {text!r} (use seconds or M:SS.mmm)")
    a, b, c = match.groups()
    parts = [p for p in (a, b) if p is not None]
    value = float(c)
    for i, p in enumerate(reversed(parts)):
        value += int(p) * 60 ** (i + 1)
    return value


def count(n: int, noun: str, plural: str | None = None) -> str:
    """"1 clip", "3 clips", "1 moment"."""
    return f"{n} {noun if n == 1 else (plural or noun + 's')}"
