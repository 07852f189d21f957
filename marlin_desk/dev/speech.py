"""Test videos with real speech whose timing is known: espeak-ng (Debian's `espeak-ng`) speaks
each word on its own, and the words are laid end to end with short gaps (0.2 s), and sentences
with longer pauses. Each word's true span is where its own sound was placed (its leading and
trailing silence trimmed), so the truth is exact to the sample, without trusting any aligner.
Shared by tests/speech and bench/transcribe.py.

Measured with the bundled tiny.en (docs/speech.md): every word within 0.14 s of its truth with
0.2 s gaps; with 0-0.12 s gaps (nearly continuous speech) the worst word is 0.3-0.56 s off,
Whisper's own alignment error, which no pause is there to correct.
"""

from __future__ import annotations

import io
import re
import shutil
import subprocess
import wave
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

import av
import numpy as np

ESPEAK = "espeak-ng"
# Words that espeak-ng says clearly on their own (no articles: an isolated "the" is heard as
# "a"; no numbers: Whisper writes "20%" for "twenty percent").
SENTENCES = (
    "our launch date moves to next friday",
    "please bring your blue folder to every meeting",
    "music starts after lunch on monday",
)


@dataclass(frozen=True)
class SpokenWord:
    text: str
    start: float  # video time, seconds
    end: float

    def to_json(self) -> dict[str, object]:
        return {"text": self.text, "start": round(self.start, 3), "end": round(self.end, 3)}


@dataclass(frozen=True)
class SpeechVideo:
    path: Path
    words: tuple[SpokenWord, ...]
    duration: float
    sentences: tuple[str, ...]

    @property
    def text(self) -> str:
        return " ".join(self.sentences)


def have_espeak() -> bool:
    return shutil.which(ESPEAK) is not None


def synthesize(text: str, voice: str = "en-us", speed: int = 160) -> tuple[np.ndarray, int]:
    """espeak-ng's rendering of `text` (float32 mono, its own rate: 22050 Hz), with its
    leading and trailing silence cut off."""
    out = subprocess.run([ESPEAK, "-v", voice, "-s", str(speed), "--stdout", text],
                         capture_output=True, check=True).stdout
    with wave.open(io.BytesIO(out)) as w:
        rate = w.getframerate()
        data = np.frombuffer(w.readframes(w.getnframes()), dtype=np.int16)
    samples = data.astype(np.float32) / 32768.0
    loud = np.nonzero(np.abs(samples) > 0.01)[0]
    if len(loud) == 0:
        return np.zeros(0, np.float32), rate
    return samples[loud[0]:loud[-1] + 1].copy(), rate


def spoken_audio(sentences: Sequence[str], *, lead_in: float = 1.0, word_gap: float = 0.2,
                 pause: float = 1.2, tail: float = 1.0, voice: str = "en-us", speed: int = 160
                 ) -> tuple[np.ndarray, int, list[SpokenWord]]:
    """The sentences spoken word by word: (samples, rate, each word's true span)."""
    pieces: list[np.ndarray] = []
    words: list[SpokenWord] = []
    rate = 22050
    position = 0

    def gap(seconds: float) -> None:
        nonlocal position
        n = int(round(seconds * rate))
        pieces.append(np.zeros(n, np.float32))
        position += n

    first = True
    for s_index, sentence in enumerate(sentences):
        for w_index, word in enumerate(sentence.split()):
            samples, rate = synthesize(word, voice, speed)
            if first:
                gap(lead_in)
                first = False
            elif w_index:
                gap(word_gap)
            words.append(SpokenWord(word, position / rate, (position + len(samples)) / rate))
            pieces.append(samples)
            position += len(samples)
        if s_index < len(sentences) - 1:
            gap(pause)
    if first:
        gap(lead_in)
    gap(tail)
    return np.concatenate(pieces), rate, words


def make_speech_video(path: str | Path, sentences: Sequence[str] = SENTENCES, *,
                      start_offset: float = 0.0, audio: str = "speech",
                      size: tuple[int, int] = (64, 48), fps: int = 10, lead_in: float = 1.0,
                      pause: float = 1.2, tail: float = 1.0, seconds: float | None = None,
                      ) -> SpeechVideo:
    """A small video whose sound says `sentences` (audio="speech"), is digitally silent
    ("silence"), or which has no audio stream ("none"). `start_offset`: both streams start
    that late in the container (an mpegts clock, an edit list), so the speech's VIDEO times
    are what `words` says. `seconds`: the length for silence/none (default: as the speech)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    samples, rate, words = spoken_audio(sentences, lead_in=lead_in, pause=pause, tail=tail)
    if seconds is not None:
        want = int(round(seconds * rate))
        samples = np.concatenate([samples, np.zeros(max(0, want - len(samples)), np.float32)])
        samples = samples[:want]
        words = [w for w in words if w.end <= seconds]
    if audio == "silence":
        samples, words = np.zeros_like(samples), []
    elif audio == "none":
        words = []
    duration = len(samples) / rate
    container = av.open(str(path), "w")
    try:
        video = container.add_stream("libx264", rate=fps)
        video.width, video.height = size
        video.pix_fmt = "yuv420p"
        video.time_base = Fraction(1, 90_000)
        video.codec_context.time_base = video.time_base
        video.options = {"preset": "ultrafast"}
        sound = None
        if audio != "none":
            sound = container.add_stream("aac", rate=rate, layout="mono")
        frame_count = int(np.ceil(duration * fps))
        picture = np.full((size[1], size[0], 3), (40, 90, 160), np.uint8)
        for i in range(frame_count):
            frame = av.VideoFrame.from_ndarray(picture, format="rgb24")
            frame.pts = round((i / fps + start_offset) * 90_000)
            frame.time_base = video.time_base
            container.mux(video.encode(frame))
        container.mux(video.encode(None))
        if sound is not None:
            offset = round(start_offset * rate)
            for at in range(0, len(samples), 1024):
                block = samples[at:at + 1024]
                if len(block) < 1024:
                    block = np.concatenate([block, np.zeros(1024 - len(block), np.float32)])
                frame = av.AudioFrame.from_ndarray(block[None, :], format="fltp", layout="mono")
                frame.sample_rate = rate
                frame.pts = offset + at
                frame.time_base = Fraction(1, rate)
                container.mux(sound.encode(frame))
            container.mux(sound.encode(None))
    finally:
        container.close()
    return SpeechVideo(path, tuple(words), duration, tuple(sentences) if words else ())


_WORD = re.compile(r"[a-z0-9']+")


def normalise_words(text: str) -> list[str]:
    """Lower case, punctuation gone (apostrophes kept), as word error rates are counted."""
    return _WORD.findall(text.casefold().replace("’", "'"))


def word_error_rate(reference: Sequence[str], hypothesis: Sequence[str]) -> float:
    """(substitutions + deletions + insertions) / len(reference), by edit distance."""
    ref, hyp = list(reference), list(hypothesis)
    if not ref:
        return 0.0 if not hyp else 1.0
    row = list(range(len(hyp) + 1))
    for i, r in enumerate(ref, 1):
        prev, row[0] = row[0], i
        for j, h in enumerate(hyp, 1):
            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (r != h))
    return row[len(hyp)] / len(ref)
