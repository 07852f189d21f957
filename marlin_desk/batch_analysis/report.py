"""What a batch reports: each video's result and status, the whole batch's report, and the
progress values passed to callbacks."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

# Per-video status values.
PENDING, DONE, CACHED, FAILED, CANCELLED = "pending", "done", "cached", "failed", "cancelled"


@dataclass
class VideoResult:
    """What happened to one video."""

    video: str
    status: str = PENDING
    seconds: float = 0.0
    error: str | None = None
    duration: float | None = None
    windows: int = 0
    windows_cached: int = 0  # windows that came from the cache (resumed or complete)
    events: int = 0
    analysis_cached: bool = False
    outputs: dict[str, str] = field(default_factory=dict)  # analysis|find|srt|vtt|chapters
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"video": self.video, "status": self.status, "seconds": round(self.seconds, 3),
                "error": self.error,
                "duration": None if self.duration is None else round(self.duration, 3),
                "windows": self.windows, "windows_cached": self.windows_cached,
                "events": self.events, "analysis_cached": self.analysis_cached,
                "outputs": dict(self.outputs), "notes": list(self.notes)}


@dataclass
class BatchReport:
    results: list[VideoResult]
    videos_at_once: int = 1
    seconds: float = 0.0
    stopped: bool = False  # should_stop ended the batch early
    fatal: str | None = None  # why the batch could not go on (the model cannot be loaded)
    fatal_code: int = 0  # that error's exit code
    engine: dict[str, Any] | None = None  # the loaded model's describe(), None if never loaded
    notes: list[str] = field(default_factory=list)

    def count(self, status: str) -> int:
        return sum(1 for r in self.results if r.status == status)

    @property
    def failed(self) -> list[VideoResult]:
        return [r for r in self.results if r.status == FAILED]

    def to_json(self) -> dict[str, Any]:
        return {"videos": [r.to_json() for r in self.results],
                "summary": {"total": len(self.results),
                            **{s: self.count(s) for s in (DONE, CACHED, FAILED, CANCELLED,
                                                          PENDING)}},
                "stopped": self.stopped, "fatal": self.fatal, "videos_at_once": self.videos_at_once,
                "seconds": round(self.seconds, 3), "engine": self.engine,
                "notes": list(self.notes)}


@dataclass(frozen=True)
class BatchProgress:
    """One progress report. stage: "check" (videos being opened; done/of count videos), "plan"
    (message says what is to do), "analyze" or "find" (done/of count this video's windows or
    window x query steps). Callbacks are called one at a time, possibly from worker threads."""

    stage: str
    index: int  # the video this is about (-1 for the whole batch)
    video: str
    finished: int  # videos finished so far, any status
    total: int
    done: int
    of: int
    eta: float | None  # seconds left for the whole batch, once measurable
    message: str = ""


OnProgress = Callable[[BatchProgress], None]
OnResult = Callable[[int, VideoResult], None]


def format_seconds(seconds: float) -> str:
    """`42 s`, `3 min 05 s`, `1 h 02 min`."""
    s = int(round(max(0.0, seconds)))
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60:02d} s"
    return f"{s // 3600} h {s % 3600 // 60:02d} min"
