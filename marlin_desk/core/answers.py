"""One generated answer and the model's confidence in it, whichever backend produced it.

The local session computes log-probabilities itself; a server returns them per token. Both
score an answer the same way, here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Answer:
    """One generated answer with the model's own confidence in it."""

    text: str
    token_ids: list[int]  # empty when a server returned text pieces, not ids
    prompt_tokens: int
    seconds: float
    mean_logprob: float  # over all generated tokens; -inf when unknown
    number_logprob: float | None  # over the digit tokens only: the part that carries the answer
    finished: bool  # stopped on EOS (not on the token cap)
    extra: dict[str, Any] = field(default_factory=dict)
    generated: int | None = None  # tokens generated, when token_ids are not known

    @property
    def new_tokens(self) -> int:
        return self.generated if self.generated is not None else len(self.token_ids)

    @property
    def score(self) -> float:
        """What ranks a found span: the digit tokens' confidence when there are digits."""
        return self.number_logprob if self.number_logprob is not None else self.mean_logprob


def mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else -math.inf


def number_logprob(pieces: list[str], logprobs: list[float]) -> float | None:
    """Mean log-probability of the digit tokens: the format tokens are near-certain for any
    video, so including them would dilute the signal that ranks windows."""
    picked = [lp for piece, lp in zip(pieces, logprobs, strict=False) if piece.strip().isdigit()]
    return mean(picked) if picked else None


@dataclass(frozen=True)
class WindowFacts:
    """What the model was shown for one window, reported with its results."""

    frame_times: list[float]  # video time of each frame
    grid: list[int]  # t, h, w in patches
    video_tokens: int
    seconds: float  # sampling (and, locally, prefill) time
