"""What a transcription reports while it runs: chunks done, seconds of sound heard, time left."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class SpeechProgress:
    """One report. `done` counts chunks finished (resumed ones included); the ETA is measured
    from the chunks transcribed in this run only."""

    done: int
    total: int
    elapsed: float  # seconds of this run
    message: str = ""
    transcribed: int = 0  # chunks transcribed in this run (not resumed, not silent)
    seconds_heard: float = 0.0  # of sound transcribed in this run
    seconds_left: float = 0.0  # of sound still to transcribe

    @property
    def fraction(self) -> float:
        return 1.0 if self.total <= 0 else min(1.0, self.done / self.total)

    @property
    def eta(self) -> float | None:
        if self.seconds_heard <= 0 or self.elapsed <= 0:
            return None
        return self.elapsed / self.seconds_heard * self.seconds_left

    def to_json(self) -> dict[str, Any]:
        eta = self.eta
        return {"done": self.done, "total": self.total, "elapsed": round(self.elapsed, 2),
                "eta": None if eta is None else round(eta, 1), "message": self.message}


SpeechProgressCallback = Callable[[SpeechProgress], None]
