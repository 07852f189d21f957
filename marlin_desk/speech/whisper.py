"""Running Whisper through faster-whisper (CTranslate2): one chunk of sound in, segments with
word times out, in video time.

faster-whisper is imported lazily (listing models and opening a video must stay fast) and only
ever given a local folder (`local_files_only`), so it can never start a download of its own:
the model manager fetches checkpoints (models/speech.py says which one runs). Its voice-activity
filter (Silero VAD, an ONNX model inside the faster-whisper wheel) skips the silences, word
timestamps are always on, and the language is detected when none is given.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from marlin_desk.core.errors import Cancelled, ModelUnavailable
from marlin_desk.core.transcript import Segment, Word
from marlin_desk.speech.audio import AudioChunk
from marlin_desk.speech.words import tighten_segments

log = logging.getLogger(__name__)

DEFAULT_BEAM_SIZE = 5


@dataclass(frozen=True)
class DecodeOptions:
    """What changes Whisper's answer for a chunk (part of the transcript's cache key)."""

    beam_size: int = DEFAULT_BEAM_SIZE
    vad_filter: bool = True
    tighten_words: bool = True

    def to_json(self) -> dict[str, Any]:
        return {"beam_size": self.beam_size, "vad_filter": self.vad_filter,
                "tighten_words": self.tighten_words}


@dataclass(frozen=True)
class ChunkResult:
    """One chunk's transcription, as the store keeps it (times are video times)."""

    index: int
    start: float
    end: float
    segments: tuple[Segment, ...] = ()
    language: str | None = None
    language_probability: float = 0.0
    note: str = ""  # "silent", "no audio": why there is nothing, when there is nothing

    def to_json(self) -> dict[str, Any]:
        return {"index": self.index, "start": self.start, "end": self.end,
                "language": self.language,
                "language_probability": round(float(self.language_probability), 4),
                "note": self.note, "segments": [s.to_json() for s in self.segments]}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> ChunkResult:
        return cls(int(d["index"]), float(d["start"]), float(d["end"]),
                   tuple(Segment.from_json(s) for s in d.get("segments", ())),
                   d.get("language"), float(d.get("language_probability", 0.0)),
                   str(d.get("note", "")))


def default_threads() -> int:
    """All the cores: the model worker is Marlin's, but on a CPU-only machine a transcription
    and an analysis share them anyway (the OS schedules both)."""
    return max(1, os.cpu_count() or 1)


@dataclass
class WhisperRunner:
    """A loaded checkpoint. One per job; not for two threads at once."""

    folder: Path
    device: str = "cpu"
    compute_type: str = "int8"
    cpu_threads: int = field(default_factory=default_threads)
    _model: Any = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def load(self) -> Any:
        if self._model is None:
            try:
                from faster_whisper import WhisperModel
            except ImportError as exc:
                raise ModelUnavailable("speech needs the faster-whisper package: "
                                       "pip install faster-whisper") from exc
            try:
                self._model = WhisperModel(str(self.folder), device=self.device,
                                           compute_type=self.compute_type,
                                           cpu_threads=self.cpu_threads if self.device == "cpu"
                                           else 0, local_files_only=True)
            except (RuntimeError, ValueError, OSError) as exc:
                raise ModelUnavailable(f"cannot load the Whisper checkpoint in {self.folder}: "
                                       f"{exc}") from exc
        return self._model

    @property
    def multilingual(self) -> bool:
        return bool(self.load().model.is_multilingual)

    def transcribe(self, chunk: AudioChunk, language: str | None, options: DecodeOptions,
                   should_stop: Callable[[], bool] | None = None) -> ChunkResult:
        """Segments of one chunk, shifted to video time; `language` None detects it."""
        model = self.load()
        with self._lock:
            segments, info = model.transcribe(
                chunk.samples, language=language, beam_size=options.beam_size,
                vad_filter=options.vad_filter, word_timestamps=True,
                condition_on_previous_text=True)
            found: list[Segment] = []
            for seg in segments:  # a generator: Whisper works as it is read
                if should_stop is not None and should_stop():
                    raise Cancelled("transcription cancelled; run it again to resume")
                words = tuple(Word(chunk.start + float(w.start), chunk.start + float(w.end),
                                   str(w.word), float(w.probability))
                              for w in (seg.words or ()) if str(w.word).strip())
                text = str(seg.text)
                if not text.strip() and not words:
                    continue
                found.append(Segment(chunk.start + float(seg.start),
                                     chunk.start + float(seg.end), text, words))
        if options.tighten_words and found:
            found = tighten_segments(found, chunk.samples, chunk.start)
        found = [_clamped(s, chunk.start, chunk.end) for s in found]
        note = "" if found else "no speech found"
        return ChunkResult(chunk.index, chunk.start, chunk.end, tuple(found), info.language,
                           float(info.language_probability or 0.0), note)


def _clamped(seg: Segment, lo: float, hi: float) -> Segment:
    """Times inside the chunk (Whisper's last timestamp can pass the end of its audio)."""
    def c(t: float) -> float:
        return min(max(t, lo), hi)
    words = tuple(Word(c(w.start), max(c(w.start), c(w.end)), w.text, w.probability)
                  for w in seg.words)
    return Segment(c(seg.start), max(c(seg.start), c(seg.end)), seg.text, words)
