"""What was said in a video: words with their times, grouped in segments (speech/ fills these).

Times are VIDEO times in seconds, like the timeline's events. The JSON form is the CLI's
`transcribe --json` contract and what the store keeps.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from marlin_desk.core.timeline import round_time


@dataclass(frozen=True)
class Word:
    """One spoken word; `text` keeps Whisper's leading space and punctuation."""

    start: float
    end: float
    text: str
    probability: float = 1.0

    def to_json(self) -> dict[str, Any]:
        return {"start": round_time(self.start), "end": round_time(self.end),
                "text": self.text, "probability": round(float(self.probability), 4)}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Word:
        return cls(float(d["start"]), float(d["end"]), str(d["text"]),
                   float(d.get("probability", 1.0)))


@dataclass(frozen=True)
class Segment:
    """A stretch of speech as the recogniser returned it (about a sentence)."""

    start: float
    end: float
    text: str
    words: tuple[Word, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"start": round_time(self.start), "end": round_time(self.end),
                "text": self.text, "words": [w.to_json() for w in self.words]}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Segment:
        return cls(float(d["start"]), float(d["end"]), str(d["text"]),
                   tuple(Word.from_json(w) for w in d.get("words", ())))


# Words closer than this are one stretch of speech (a breath, not a turn).
SPEECH_JOIN_S = 0.5


def speech_spans(words: list[Word], start: float, end: float,
                 join: float = SPEECH_JOIN_S) -> tuple[tuple[float, float], ...]:
    """The stretches of [start, end] in which someone speaks: the words' spans, those less
    than `join` seconds apart made one."""
    spans: list[list[float]] = []
    for w in sorted(words, key=lambda w: w.start):
        if w.end < start or w.start > end:
            continue
        if spans and w.start - spans[-1][1] < join:
            spans[-1][1] = max(spans[-1][1], w.end)
        else:
            spans.append([w.start, w.end])
    return tuple((a, b) for a, b in spans)


@dataclass(frozen=True)
class Transcript:
    """A video's speech. Empty segments with a `note` when there is nothing to hear."""

    language: str | None
    segments: tuple[Segment, ...] = ()
    model: str = ""
    note: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def words(self) -> list[Word]:
        return [w for s in self.segments for w in s.words]

    @property
    def text(self) -> str:
        return " ".join(s.text.strip() for s in self.segments if s.text.strip())

    def to_json(self) -> dict[str, Any]:
        return {"language": self.language, "model": self.model, "note": self.note,
                "segments": [s.to_json() for s in self.segments], **self.extra}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Transcript:
        known = {"language", "model", "note", "segments"}
        return cls(d.get("language"), tuple(Segment.from_json(s) for s in d.get("segments", ())),
                   str(d.get("model", "")), str(d.get("note", "")),
                   {k: v for k, v in d.items() if k not in known})
