"""The crop path of a clip: where the crop window is at each moment, from detections and pins.

Pure computation (milliseconds for a minute of samples), so the app recomputes it on every pin
drag from the cached detections (workflows/reframe.py).

Per shot (the path never pans across a cut; it jumps there):
1. a target per sample: several faces kept together when they fit in the crop (`group_fill`),
   else the one that speaks when that is clear (media/reframe_speaker; only while the
   transcript, when there is one, says someone speaks), else the largest (a
   face nearly as large as the largest and nearer the last target wins, so two similar faces
   do not swap back and forth); a sample without a face holds the last
   target (the first one found, at the start of the shot). A shot in which no face is ever
   seen follows what moves instead (media/motion_subject), and keeps the centre when nothing
   does. A median of three drops one-sample false detections.
2. the camera: it starts on the first target, stays still while the target is within the dead
   zone (`dead_zone` of the crop's size from its centre), and once it is out pans towards it
   at no more than `max_speed` (fraction of the frame a second), stays locked on while the
   subject keeps moving and stops when it has stayed put for 0.6 s.
3. a centred average of three samples eases the starts and ends of pans.
4. pins (the editor's keyframes): the path passes exactly through each pin; between two pins of
   one shot the correction (pin minus automatic path) is interpolated, and before the first and
   after the last pin of a shot it returns to the automatic path no faster than `max_speed`
   (the crop itself, not only the correction: on a moving subject it pans at the limit until
   the two meet).
   A held pin is a pin at both ends of its span with the crop standing still between.
Positions are crop centres as fractions of the frame along the axis the crop can move (x for a
vertical crop of landscape footage, y for the opposite), kept where the crop stays inside the
frame.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from marlin_desk.core.reframe import Pin, ReframeSettings, sorted_pins
from marlin_desk.media.face_detector import FaceBox
from marlin_desk.media.reframe_detect import Sample, SpanDetections
from marlin_desk.media.reframe_speaker import speakers

Axis = Literal["x", "y"]
_NEAR_LARGEST = 0.7  # a face of at least this share of the largest's area may be kept instead
_SETTLE_S = 0.6  # a pan ends once the subject has stayed put this long
_MIN_MOTION_SAMPLES = 3  # a shot follows what moves only when it moved in this many samples


@dataclass(frozen=True)
class CropRect:
    """The crop in frame pixels (upright, square pixels: CropPath.frame_w x frame_h)."""

    x: int
    y: int
    w: int
    h: int


@dataclass(frozen=True)
class ShotPath:
    """One shot's crop centres (fractions along the axis) at times (video seconds) in
    [start, end); constant before the first and after the last time."""

    start: float
    end: float
    times: tuple[float, ...]
    centres: tuple[float, ...]
    subject: bool  # a face was seen in this shot, or something moved in it
    motion: bool = False  # followed what moves: no face was seen

    def centre_at(self, t: float) -> float:
        i = bisect.bisect_right(self.times, t)
        if i == 0:
            return self.centres[0]
        if i >= len(self.times):
            return self.centres[-1]
        t0, t1 = self.times[i - 1], self.times[i]
        c0, c1 = self.centres[i - 1], self.centres[i]
        return c0 + (c1 - c0) * (t - t0) / (t1 - t0) if t1 > t0 else c1

    def turning_points(self, frame_px: float, tolerance_px: float) -> list[tuple[float, float]]:
        """The (time, centre) points where the path turns: the others lie on the line between
        their neighbours within `tolerance_px` of a `frame_px`-pixel frame."""
        pts = list(zip(self.times, self.centres, strict=True))
        kept = [pts[0]]
        for i in range(1, len(pts) - 1):
            (t0, c0), (t1, c1), (t2, c2) = kept[-1], pts[i], pts[i + 1]
            line = c0 + (c2 - c0) * (t1 - t0) / (t2 - t0) if t2 > t0 else c2
            if abs(line - c1) * frame_px > tolerance_px:
                kept.append(pts[i])
        if len(pts) > 1:
            kept.append(pts[-1])
        return kept

    def to_json(self) -> dict[str, Any]:
        return {"start": self.start, "end": self.end, "subject": self.subject,
                "motion": self.motion, "times": [round(t, 6) for t in self.times],
                "centres": [round(c, 6) for c in self.centres]}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> ShotPath:
        return cls(float(d["start"]), float(d["end"]), tuple(float(t) for t in d["times"]),
                   tuple(float(c) for c in d["centres"]), bool(d["subject"]),
                   bool(d.get("motion", False)))


@dataclass(frozen=True)
class CropPath:
    """Where a clip's crop window is, shot by shot. `axis` None: the crop has the frame's
    aspect and cannot move."""

    frame_w: int
    frame_h: int
    crop_w: int
    crop_h: int
    axis: Axis | None
    shots: tuple[ShotPath, ...]
    pins: tuple[Pin, ...] = ()
    note: str | None = None  # why no subject could be looked for, when that is so

    @property
    def start(self) -> float:
        return self.shots[0].start

    @property
    def end(self) -> float:
        return self.shots[-1].end

    @property
    def cuts(self) -> tuple[float, ...]:
        return tuple(s.start for s in self.shots[1:])

    def shot_at(self, t: float) -> ShotPath:
        i = bisect.bisect_right([s.start for s in self.shots], t) - 1
        return self.shots[max(0, min(i, len(self.shots) - 1))]

    def centre_at(self, t: float) -> float:
        """The crop's centre at video time t, as a fraction of the frame along the axis."""
        return self.shot_at(t).centre_at(t)

    def crop_at(self, t: float) -> CropRect:
        """The crop at video time t in frame pixels: what the preview draws and the export
        renders (the render rounds x and y the same way)."""
        c = self.centre_at(t)
        x = y = 0
        if self.axis == "x":
            x = _place(c, self.frame_w, self.crop_w)
        elif self.axis == "y":
            y = _place(c, self.frame_h, self.crop_h)
        else:
            x, y = (self.frame_w - self.crop_w) // 2, (self.frame_h - self.crop_h) // 2
        return CropRect(x, y, self.crop_w, self.crop_h)

    def pin_at(self, t: float, x: float, y: float) -> Pin:
        """A pin that puts the crop's top-left corner at (x, y) frame pixels at time t (what
        the preview has when the editor lets go of a dragged rectangle)."""
        cx = (x + self.crop_w / 2) / self.frame_w
        cy = (y + self.crop_h / 2) / self.frame_h
        return Pin(max(0.0, t), min(1.0, max(0.0, cx)), min(1.0, max(0.0, cy)))

    def summary(self) -> dict[str, Any]:
        """For the export report: shots, how many had a subject, the pins."""
        return {"shots": len(self.shots),
                "shots_with_subject": sum(s.subject for s in self.shots),
                "shots_following_motion": sum(s.motion for s in self.shots),
                "cuts": [round(c, 6) for c in self.cuts],
                "pins": [p.to_json() for p in self.pins], "note": self.note}

    def to_json(self) -> dict[str, Any]:
        return {"frame": [self.frame_w, self.frame_h], "crop": [self.crop_w, self.crop_h],
                "axis": self.axis, "pins": [p.to_json() for p in self.pins], "note": self.note,
                "shots": [s.to_json() for s in self.shots]}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> CropPath:
        fw, fh = (int(v) for v in d["frame"])
        cw, ch = (int(v) for v in d["crop"])
        axis = d.get("axis")
        if axis not in ("x", "y", None):
            raise ValueError(f"unknown crop axis {axis!r}")
        return cls(fw, fh, cw, ch, axis, tuple(ShotPath.from_json(s) for s in d["shots"]),
                   tuple(Pin.from_json(p) for p in d.get("pins", [])), d.get("note"))


def _place(centre: float, frame: int, crop: int) -> int:
    """The crop's left (or top) edge for a centre: inside the frame, on an even pixel (4:2:0)."""
    # floor(v + 0.5), not round(): FFmpeg's expression rounds the same way (reframe_render).
    edge = math.floor(centre * frame - crop / 2 + 0.5)
    return max(0, min(frame - crop, edge)) // 2 * 2


def crop_size(frame_w: int, frame_h: int, out_w: int, out_h: int) -> tuple[int, int]:
    """The crop of the frame with the output's aspect: the same numbers as the preset's centre
    crop (presets._fit), so that reframing changes where the crop is, never its size."""
    w = int(min(frame_w, frame_h * out_w / out_h) / 2) * 2
    h = int(min(frame_h, frame_w * out_h / out_w) / 2) * 2
    return w, h


def _axis(frame_w: int, frame_h: int, crop_w: int, crop_h: int) -> Axis | None:
    if crop_w < frame_w:
        return "x"
    if crop_h < frame_h:
        return "y"
    return None


def centre_path(frame_w: int, frame_h: int, out_w: int, out_h: int, start: float,
                end: float, note: str | None = None) -> CropPath:
    """The fixed centre crop as a path (one shot, no subject)."""
    cw, ch = crop_size(frame_w, frame_h, out_w, out_h)
    return CropPath(frame_w, frame_h, cw, ch, _axis(frame_w, frame_h, cw, ch),
                    (ShotPath(start, end, (start,), (0.5,), False),), note=note)


def compute_path(det: SpanDetections, out_w: int, out_h: int,
                 settings: ReframeSettings | None = None,
                 pins: Sequence[Pin] = ()) -> CropPath:
    """The path for an output of out_w x out_h from the span's detections and the pins."""
    settings = settings or ReframeSettings()
    cw, ch = crop_size(det.frame_w, det.frame_h, out_w, out_h)
    axis = _axis(det.frame_w, det.frame_h, cw, ch)
    pins = tuple(p for p in sorted_pins(list(pins)) if det.start <= p.t <= det.end)
    bounds = [det.start, *det.cuts, det.end]
    shots: list[ShotPath] = []
    for a, b in zip(bounds, bounds[1:], strict=False):
        last = b == det.end
        samples = [s for s in det.samples if a <= s.t < b or (last and s.t == b)]
        shot_pins = [p for p in pins if a <= p.t < b or (last and p.t == b)]
        if axis is None:
            seen = any(s.faces or s.moving for s in samples)
            shots.append(ShotPath(a, b, (a,), (0.5,), seen))
            continue
        crop_frac = cw / det.frame_w if axis == "x" else ch / det.frame_h
        shots.append(_shot(a, b, samples, shot_pins, axis, crop_frac, settings, det.speech))
    return CropPath(det.frame_w, det.frame_h, cw, ch, axis, tuple(shots), pins, det.note)


def _shot(start: float, end: float, samples: list[Sample], pins: list[Pin], axis: Axis,
          crop_frac: float, settings: ReframeSettings,
          speech: Sequence[tuple[float, float]] | None = None) -> ShotPath:
    half = crop_frac / 2
    lo, hi = half, 1.0 - half
    motion = not any(s.faces for s in samples)  # faces first; what moves only without any
    targets = _targets(samples, axis, crop_frac, settings.group_fill, motion, speech)
    subject = any(t is not None for t in targets)
    times = [s.t for s in samples]
    if not subject or not times:
        times, centres = [start], [0.5]
    else:
        filled = _median3(_fill(targets))
        centres = _ease(_follow(times, filled, settings.dead_zone * crop_frac,
                                settings.max_speed, lo, hi))
    if pins:
        times, centres = _pinned(times, centres, pins, axis, settings.max_speed, start, end,
                                 lo, hi)
    centres = [min(hi, max(lo, c)) for c in centres]
    return ShotPath(start, end, tuple(times), tuple(centres), subject, subject and motion)


def _targets(samples: list[Sample], axis: Axis, crop_frac: float, group_fill: float,
             motion: bool, speech: Sequence[tuple[float, float]] | None = None,
             ) -> list[float | None]:
    out: list[float | None] = []
    last: float | None = None
    speaking = speakers(samples, axis, speech)
    for i, s in enumerate(samples):
        # The shot's first sample was compared with the frame before the cut: not motion.
        boxes = (s.moving,) if motion and i > 0 and s.moving is not None else s.faces
        target = _target(boxes, axis, crop_frac, group_fill, last, speaking[i])
        out.append(target)
        if target is not None:
            last = target
    if motion and sum(t is not None for t in out) < _MIN_MOTION_SAMPLES:
        return [None] * len(out)  # a flicker is not a subject
    return out


def _target(faces: Sequence[FaceBox], axis: Axis, crop_frac: float, group_fill: float,
            last: float | None, speaker: float | None = None) -> float | None:
    if not faces:
        return None
    spans = [(f.x, f.x + f.w) if axis == "x" else (f.y, f.y + f.h) for f in faces]
    a, b = min(s[0] for s in spans), max(s[1] for s in spans)
    if b - a <= crop_frac * group_fill:
        return (a + b) / 2
    if speaker is not None:  # the face that speaks, whatever its size
        return speaker
    largest = max(faces, key=lambda f: f.area)
    candidates = [f for f in faces if f.area >= _NEAR_LARGEST * largest.area]
    if last is not None:
        pick = min(candidates, key=lambda f: abs((f.cx if axis == "x" else f.cy) - last))
    else:
        pick = largest
    return pick.cx if axis == "x" else pick.cy


def _fill(targets: list[float | None]) -> list[float]:
    """Samples without a face hold the last target; leading ones take the first found."""
    first = next(t for t in targets if t is not None)
    out: list[float] = []
    held = first
    for t in targets:
        if t is not None:
            held = t
        out.append(held)
    return out


def _median3(values: list[float]) -> list[float]:
    if len(values) < 3:
        return values
    mid = [sorted(values[i - 1:i + 2])[1] for i in range(1, len(values) - 1)]
    return [values[0], *mid, values[-1]]


def _follow(times: list[float], targets: list[float], dead: float, speed: float, lo: float,
            hi: float) -> list[float]:
    """The camera: still inside the dead zone; outside it, a pan no faster than `speed` that
    stays locked on a moving subject and stops once the subject has settled."""
    c = min(hi, max(lo, targets[0]))
    out = [c]
    moving = False
    for i in range(1, len(times)):
        goal = min(hi, max(lo, targets[i]))
        err = goal - c
        if not moving and abs(err) > dead:
            moving = True
        if moving:
            step = speed * max(0.0, times[i] - times[i - 1])
            if abs(err) <= step:
                c = goal
                moving = not _settled(times, targets, i, dead / 2)
            else:
                c += step if err > 0 else -step
        out.append(c)
    return out


def _settled(times: list[float], targets: list[float], i: int, within: float) -> bool:
    """Whether the target moved less than `within` over the last _SETTLE_S seconds."""
    j = i
    while j > 0 and times[i] - times[j - 1] <= _SETTLE_S:
        j -= 1
    recent = targets[j:i + 1]
    return max(recent) - min(recent) < within


def _ease(values: list[float]) -> list[float]:
    """A centred average of three: pans start and stop softly; still stretches stay still."""
    if len(values) < 3:
        return values
    return [values[0], *((values[i - 1] + values[i] + values[i + 1]) / 3
                         for i in range(1, len(values) - 1)), values[-1]]


def _pinned(times: list[float], centres: list[float], pins: list[Pin], axis: Axis,
            speed: float, start: float, end: float, lo: float,
            hi: float) -> tuple[list[float], list[float]]:
    """The automatic path with the pins' corrections added (see the module docstring)."""
    auto = ShotPath(start, end, tuple(times), tuple(centres), True)
    points: list[tuple[float, float]] = []  # (time, centre) the path passes through
    holds: list[tuple[float, float]] = []  # spans in which it stands still
    for p in pins:
        value = min(hi, max(lo, p.x if axis == "x" else p.y))
        points.append((p.t, value))
        if p.until is not None and min(p.until, end) > p.t:
            points.append((min(p.until, end), value))
            holds.append((p.t, min(p.until, end)))
    pin_t = [t for t, _ in points]
    offsets = [value - auto.centre_at(t) for t, value in points]
    first, last = pin_t[0], pin_t[-1]

    def offset_between(t: float) -> float:
        i = min(bisect.bisect_right(pin_t, t), len(pin_t) - 1)
        t0, t1 = pin_t[i - 1], pin_t[i]
        return offsets[i - 1] + (offsets[i] - offsets[i - 1]) * (t - t0) / (t1 - t0)

    # inside a hold only its ends: the line between two equal centres stands still
    middle = sorted({t for t in times if first < t < last} | set(pin_t))
    middle = [t for t in middle if not any(a < t < b for a, b in holds)]
    pinned = dict(points)
    path = [(t, auto.centre_at(t) + offset_between(t)) if first < t < last else
            (t, pinned[t]) for t in middle]
    before = _chase(auto, sorted({t for t in times if t < first} | {start} - {first},
                                 reverse=True), first, points[0][1], speed)
    after = _chase(auto, sorted({t for t in times if t > last} | {end} - {last}), last,
                   points[-1][1], speed)
    joined = [*reversed(before), *path, *after]
    return [t for t, _ in joined], [c for _, c in joined]


def _chase(auto: ShotPath, grid: list[float], t0: float, c0: float,
           speed: float) -> list[tuple[float, float]]:
    """The way back from a pin at (t0, c0) to the automatic path, along `grid` (times going
    away from t0: forwards after the last pin, backwards before the first), moving no faster
    than `speed` whatever the automatic path does, and on it from where the two meet."""
    out: list[tuple[float, float]] = []
    t_prev, c, a_prev = t0, c0, auto.centre_at(t0)
    caught = c == a_prev
    for t in grid:
        a = auto.centre_at(t)
        if caught:
            out.append((t, a))
            continue
        dt = abs(t - t_prev)
        gap = a_prev - c
        direction = 1.0 if gap > 0 else -1.0
        moved = c + direction * speed * dt
        if (a - moved) * direction <= 0:  # they meet in this step: where, on the line between
            closing = direction * speed - (a - a_prev) / dt
            s = min(dt, max(0.0, gap / closing)) if closing else dt
            if 0 < s < dt:
                out.append((t_prev + s * (1 if t > t_prev else -1),
                            a_prev + (a - a_prev) * s / dt))
            out.append((t, a))
            caught = True
        else:
            c = moved
            out.append((t, c))
        t_prev, a_prev = t, a
    return out
