"""Word times brought onto the sound: Whisper's word edges sit where its attention moved, not
where the voice starts and stops.

Whisper's word times come from cross-attention (DTW over the decoder's alignment heads) in
20 ms steps: two neighbouring words share one boundary, which lands anywhere in the pause
between them (or in the next word), a word before a long pause "ends" 0.2-0.6 s into it, and
the first word after a pause often starts in the voice-activity filter's 400 ms padding. For
cutting clips on words that matters ("cut after she says launch date" must not keep half a
second of silence, nor the start of the next word), so:

1. A boundary two words share moves to the nearest pause within 0.4 s of it: the earlier word
   ends where the pause begins, the later one starts where it ends.
2. Each word's leading and trailing quiet runs are trimmed (a first word after a pause, a last
   word before one).

A pause is a run of at least 80 ms (60 ms for the edges of 2.) of 10 ms frames 34 dB below the
chunk's loud speech (its 95th-percentile frame): in a clean recording that is the silence
between words, in a noisy one nothing is that quiet and nothing moves. Every word keeps at
least 50 ms, and words never overlap.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from marlin_desk.core.transcript import Segment, Word
from marlin_desk.speech.audio import FRAME, SAMPLE_RATE, frame_rms

QUIET_RELATIVE = 10 ** (-34 / 20)
MIN_PAUSE_S = 0.08  # between two words
MIN_EDGE_S = 0.06  # at a word's own edge
MAX_SHIFT_S = 0.4  # how far a shared boundary may move to reach a pause
MIN_WORD_S = 0.05
TOUCHING_S = 0.05  # words closer than this share a boundary
_STEP = FRAME / SAMPLE_RATE


def quiet_level(rms: np.ndarray) -> float:
    """Frames below this RMS count as quiet (0 when the chunk has no sound at all)."""
    voiced = rms[rms > 0]
    return float(np.percentile(voiced, 95)) * QUIET_RELATIVE if len(voiced) else 0.0


def quiet_runs(rms: np.ndarray, level: float, origin: float, shortest: float
               ) -> list[tuple[float, float]]:
    """(start, end) times of the runs of quiet frames at least `shortest` long."""
    quiet = np.concatenate([[False], rms < level, [False]])
    edges = np.flatnonzero(quiet[1:] != quiet[:-1])
    runs = []
    for a, b in zip(edges[::2], edges[1::2], strict=True):
        if (b - a) * _STEP >= shortest:
            runs.append((origin + a * _STEP, origin + b * _STEP))
    return runs


def _split_at_pause(a: Word, b: Word, pauses: list[tuple[float, float]]) -> tuple[Word, Word]:
    boundary = (a.end + b.start) / 2
    best, distance = None, MAX_SHIFT_S
    for p0, p1 in pauses:
        if p0 < a.start + MIN_WORD_S or p1 > b.end - MIN_WORD_S:
            continue
        d = 0.0 if p0 <= boundary <= p1 else min(abs(boundary - p0), abs(boundary - p1))
        if d <= distance:
            best, distance = (p0, p1), d
    if best is None:
        return a, b
    return dataclasses.replace(a, end=best[0]), dataclasses.replace(b, start=best[1])


def _trim(word: Word, rms: np.ndarray, level: float, origin: float) -> Word:
    if word.end - word.start <= MIN_WORD_S:
        return word
    i0 = max(0, int(np.floor((word.start - origin) / _STEP + 1e-6)))
    i1 = min(len(rms), int(np.ceil((word.end - origin) / _STEP - 1e-6)))
    if i1 - i0 <= 1:
        return word
    loud = np.nonzero(rms[i0:i1] >= level)[0]
    if len(loud) == 0:  # no voice inside at all: leave the recogniser's times
        return word
    start, end = word.start, word.end
    if loud[0] * _STEP >= MIN_EDGE_S:
        start = max(start, origin + (i0 + loud[0]) * _STEP)
    if ((i1 - i0) - 1 - loud[-1]) * _STEP >= MIN_EDGE_S:
        end = min(end, origin + (i0 + loud[-1] + 1) * _STEP)
    if end - start < MIN_WORD_S:
        return word
    return dataclasses.replace(word, start=start, end=end)


def tighten_words(words: list[Word], samples: np.ndarray, origin: float) -> list[Word]:
    """These words (in time order, times in seconds, `origin` = the time of `samples[0]`)
    with their edges on the sound (module docstring)."""
    rms = frame_rms(samples)
    level = quiet_level(rms)
    if level <= 0 or not words:
        return list(words)
    pauses = quiet_runs(rms, level, origin, MIN_PAUSE_S)
    out = list(words)
    for i in range(len(out) - 1):
        if out[i + 1].start - out[i].end < TOUCHING_S:
            out[i], out[i + 1] = _split_at_pause(out[i], out[i + 1], pauses)
    out = [_trim(w, rms, level, origin) for w in out]
    for i in range(len(out) - 1):  # never overlapping
        if out[i].end > out[i + 1].start:
            out[i] = dataclasses.replace(out[i], end=max(out[i].start, out[i + 1].start))
    return out


def tighten_segments(segments: list[Segment], samples: np.ndarray, origin: float
                     ) -> list[Segment]:
    """Every word of these segments tightened (across segment edges too); a segment with words
    then spans its first to its last word."""
    flat = [w for s in segments for w in s.words]
    moved = iter(tighten_words(flat, samples, origin))
    out = []
    for seg in segments:
        words = tuple(next(moved) for _ in seg.words)
        if words:
            seg = dataclasses.replace(seg, words=words, start=words[0].start, end=words[-1].end)
        out.append(seg)
    return out
