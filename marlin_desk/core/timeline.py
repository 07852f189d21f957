"""Timeline data and its stable JSON form (the CLI's output contract builds on these)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


def _round(t: float) -> float:
    """Times are kept to the millisecond in JSON: stable output, no float noise."""
    return round(float(t), 3)


def round_time(t: float) -> float:
    """The JSON rounding rule under a public name, so other core types serialise times alike."""
    return _round(t)


@dataclass(frozen=True)
class Event:
    """One time-ranged event, in seconds (window-relative or video time, as the holder says)."""

    start: float
    end: float
    description: str

    @property
    def duration(self) -> float:
        return self.end - self.start

    def shifted(self, offset: float) -> Event:
        return Event(self.start + offset, self.end + offset, self.description)

    def to_json(self) -> dict[str, Any]:
        return {"start": _round(self.start), "end": _round(self.end),
                "description": self.description}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Event:
        return cls(float(d["start"]), float(d["end"]), str(d["description"]))


@dataclass(frozen=True)
class Span:
    """A time range answering a find query; score is the model's own confidence (higher: better)."""

    start: float
    end: float
    score: float | None = None
    window: int | None = None
    low_confidence: bool = False

    def shifted(self, offset: float) -> Span:
        return Span(self.start + offset, self.end + offset, self.score, self.window,
                    self.low_confidence)

    def to_json(self) -> dict[str, Any]:
        return {"start": _round(self.start), "end": _round(self.end),
                "score": None if self.score is None else round(self.score, 4),
                "window": self.window, "low_confidence": self.low_confidence}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Span:
        score = d.get("score")
        return cls(float(d["start"]), float(d["end"]), None if score is None else float(score),
                   d.get("window"), bool(d.get("low_confidence", False)))


@dataclass
class WindowResult:
    """What one window's caption produced, with the facts needed to audit it."""

    index: int
    start: float
    end: float
    raw: str
    format_ok: bool
    scene: str
    events: list[Event]  # video time
    frames: int = 0
    frame_times: list[float] = field(default_factory=list)  # video time
    grid: list[int] = field(default_factory=list)  # t, h, w in patches
    video_tokens: int = 0
    prompt_tokens: int = 0
    seconds: float = 0.0
    new_tokens: int = 0  # tokens the model generated for this window's caption

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d["start"], d["end"] = _round(self.start), _round(self.end)
        d["events"] = [e.to_json() for e in self.events]
        d["frame_times"] = [_round(t) for t in self.frame_times]
        d["seconds"] = round(self.seconds, 3)
        return d

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> WindowResult:
        d = dict(d)
        d["events"] = [Event.from_json(e) for e in d.get("events", [])]
        return cls(**d)


@dataclass
class Analysis:
    """A whole video's timeline: per-window results merged into one list of events."""

    duration: float
    model: str
    scene: str
    events: list[Event]
    windows: list[WindowResult]
    video: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "video": self.video,
            "duration": _round(self.duration),
            "model": self.model,
            "scene": self.scene,
            "events": [e.to_json() for e in self.events],
            "windows": [w.to_json() for w in self.windows],
        }

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Analysis:
        return cls(
            duration=float(d["duration"]),
            model=str(d["model"]),
            scene=str(d.get("scene", "")),
            events=[Event.from_json(e) for e in d.get("events", [])],
            windows=[WindowResult.from_json(w) for w in d.get("windows", [])],
            video=str(d.get("video", "")),
        )
