"""Reframing vocabulary, pure Python: the modes, the defaults and the editor's pins.

Reframing moves the crop window of a preset whose aspect differs from the source (a 9:16 or 1:1
crop of 16:9 footage, a 16:9 crop of portrait footage) so that it follows the subject instead of
sitting in the centre. The CLI (`--reframe`), the app and the export read these names; the
detection, the path and the render live in `media/reframe*.py`, the cache in
`workflows/reframe.py`.

Positions are fractions of the upright source frame (0 = left/top edge, 1 = right/bottom), so a
pin stays right when the picture is decoded at another size. Times are video times (seconds from
the first video frame), so a pin stays on its frame when the clip's edges move.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal

ReframeMode = Literal["auto", "centre", "off"]
# auto: follow the subject; centre: the fixed centre crop of before; off: no reframing step at
# all (the preset's fill as it is; with the crop fill that is the centre crop too).
REFRAME_MODES: tuple[str, ...] = ("auto", "centre", "off")
REFRAME_LABELS: dict[str, str] = {
    "auto": "Follow the subject",
    "centre": "Centre crop",
    "off": "Off",
}
# The default for presets whose aspect differs from the source (media.reframe decides which).
DEFAULT_REFRAME_MODE: ReframeMode = "auto"

# Detection: 5 samples a second is enough to follow a person walking (they cross a 16:9 frame in
# 3-6 s) and costs a fifth of a 25 fps decode's detections; the long side of 480 px keeps a face
# of 1/20 of the frame height (54 px at 1080p) above the detector's ~12 px minimum.
DEFAULT_DETECT_FPS = 5.0
DEFAULT_DETECT_SIZE = 480
DEFAULT_MIN_CONFIDENCE = 0.6  # yuface's scores, 0..1; below 0.6 false faces in textures appear
# The crop stays still while the subject's centre is within this fraction of the crop's size of
# the crop's centre (+-15 %: a presenter shifting their weight does not move the picture).
DEFAULT_DEAD_ZONE = 0.15
# Pans are no faster than this fraction of the source frame a second (a 16:9 frame in about 3 s:
# a walking pace, slow enough to read as a camera move and not as a jump).
DEFAULT_MAX_SPEED = 0.35
# Several faces are kept in one crop when they fit within this fraction of its size.
DEFAULT_GROUP_FILL = 0.9


@dataclass(frozen=True)
class ReframeSettings:
    """What a reframing path depends on, besides the video, the span and the pins."""

    detect_fps: float = DEFAULT_DETECT_FPS
    detect_size: int = DEFAULT_DETECT_SIZE
    min_confidence: float = DEFAULT_MIN_CONFIDENCE
    dead_zone: float = DEFAULT_DEAD_ZONE
    max_speed: float = DEFAULT_MAX_SPEED
    group_fill: float = DEFAULT_GROUP_FILL

    def __post_init__(self) -> None:
        checks = [
            (0.5 <= self.detect_fps <= 30, "detection rate must be 0.5 to 30 samples a second"),
            (96 <= self.detect_size <= 1920, "detection size must be 96 to 1920 pixels"),
            (0.0 < self.min_confidence < 1.0, "minimum confidence must be between 0 and 1"),
            (0.0 <= self.dead_zone < 0.5, "dead zone must be 0 to 0.5 of the crop"),
            (0.0 < self.max_speed <= 10.0, "speed limit must be above 0 and at most 10"),
            (0.1 <= self.group_fill <= 1.0, "group fill must be 0.1 to 1"),
        ]
        for ok, message in checks:
            if not ok:
                raise ValueError(message)

    def detection_key(self) -> dict[str, Any]:
        """The settings the detections depend on (the cache key: the rest only shape the path,
        which is recomputed from the cached detections in milliseconds)."""
        return {"detect_fps": round(self.detect_fps, 6), "detect_size": int(self.detect_size)}

    def to_json(self) -> dict[str, Any]:
        return {"detect_fps": self.detect_fps, "detect_size": self.detect_size,
                "min_confidence": self.min_confidence, "dead_zone": self.dead_zone,
                "max_speed": self.max_speed, "group_fill": self.group_fill}


@dataclass(frozen=True, order=True)
class Pin:
    """The editor's keyframe: the crop's centre at video time `t`, as fractions of the upright
    source frame. Only the coordinate along which the crop moves matters (x for a vertical crop
    of landscape footage, y for a landscape crop of portrait footage); the other is kept as 0.5.

    A held pin (`until` set) keeps the crop at that place from `t` to `until` (Hold the Crop
    Through This Shot): one keyframe for the span instead of one at each turn of the path."""

    t: float
    x: float = 0.5
    y: float = 0.5
    until: float | None = None

    def __post_init__(self) -> None:
        if not (math.isfinite(self.t) and self.t >= 0):
            raise ValueError(f"pin time {self.t!r} must be a time in the video")
        for v in (self.x, self.y):
            if not (math.isfinite(v) and 0.0 <= v <= 1.0):
                raise ValueError(f"pin position {v!r} must be a fraction of the frame (0..1)")
        if self.until is not None and not (math.isfinite(self.until) and self.until > self.t):
            raise ValueError(f"a held pin must end after it starts (at {self.t!r}, "
                             f"until {self.until!r})")

    @property
    def end(self) -> float:
        """The last time this pin holds the crop (its own time for a plain pin)."""
        return self.t if self.until is None else self.until

    def covers(self, t: float, tolerance: float = 0.0) -> bool:
        """Whether the crop at time t is this pin's (within `tolerance` seconds of its span)."""
        return self.t - tolerance <= t <= self.end + tolerance

    def to_json(self) -> dict[str, float]:
        d = {"t": round(self.t, 6), "x": round(self.x, 6), "y": round(self.y, 6)}
        if self.until is not None:
            d["until"] = round(self.until, 6)
        return d

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Pin:
        until = d.get("until")
        return cls(float(d["t"]), float(d.get("x", 0.5)), float(d.get("y", 0.5)),
                   None if until is None else float(until))


def check_mode(mode: str) -> ReframeMode:
    """The mode, or ValueError naming the choices."""
    if mode not in REFRAME_MODES:
        raise ValueError(f"unknown reframe mode {mode!r}; use {', '.join(REFRAME_MODES)}")
    return mode  # type: ignore[return-value]


def sorted_pins(pins: tuple[Pin, ...] | list[Pin]) -> tuple[Pin, ...]:
    """Pins in time order, one per time (a later pin at the same time replaces an earlier);
    pins that fall inside a held pin's span are dropped (the hold decides the crop there)."""
    by_time: dict[float, Pin] = {}
    for pin in pins:
        by_time[round(pin.t, 6)] = pin
    kept: list[Pin] = []
    for pin in (by_time[t] for t in sorted(by_time)):
        if kept and kept[-1].until is not None and pin.t <= kept[-1].until:
            continue  # inside the hold before it
        kept.append(pin)
    return tuple(kept)
