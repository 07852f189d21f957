"""A video's sound as Whisper hears it (16 kHz mono float32), cut into chunks at quiet moments.

Why chunks: a transcription is stored chunk by chunk, so a killed or cancelled run resumes from
the finished ones, progress is per chunk, and memory stays bounded (one chunk of samples, never
the whole soundtrack: an hour at 16 kHz float32 is 230 MB). Why cut at quiet moments: a word cut
in two by a chunk boundary is lost or doubled; Whisper has no context across calls. The plan is
`count = round(duration / chunk_seconds)` chunks of equal nominal length, and each boundary moves
to the quietest 100 ms within `search_seconds` of its nominal place (the nearest one when there
are several, e.g. in digital silence). It depends on the audio alone, so a resumed run finds the
same chunks again. Overlapping windows were the other choice; they need de-duplicating words at
every seam, which a pause between words makes unnecessary.

Times: sample 0 is VIDEO time 0 (the first video frame: `VideoInfo.start_time` removed), as the
timeline's times are. Audio that starts before the first frame is dropped, audio that starts
later is preceded by silence, gaps in the stream are filled with silence, and the sound is cut
at the video's end.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np

from marlin_desk.core.errors import BadInput, Cancelled

log = logging.getLogger(__name__)

SAMPLE_RATE = 16_000  # what Whisper was trained on
FRAME = 160  # 10 ms: the energy frames boundaries are chosen on
QUIET_FRAMES = 10  # a quiet moment is judged over 100 ms
SILENCE_DBFS = -55.0  # a chunk whose loudest 100 ms is below this is silent: Whisper is skipped
_GAP_S = 0.05  # pts jumps larger than this are gaps (filled) or overlaps (dropped)


@dataclass(frozen=True)
class AudioChunk:
    index: int
    start: float  # video time, seconds
    end: float
    samples: np.ndarray  # float32, SAMPLE_RATE, mono

    @property
    def loudest_dbfs(self) -> float:
        return loudest_dbfs(self.samples)

    @property
    def silent(self) -> bool:
        return self.loudest_dbfs < SILENCE_DBFS


def frame_rms(samples: np.ndarray) -> np.ndarray:
    """RMS of each whole 10 ms frame."""
    n = len(samples) // FRAME
    if n == 0:
        return np.zeros(0, np.float32)
    frames = samples[: n * FRAME].reshape(n, FRAME).astype(np.float32)
    return np.sqrt(np.mean(frames * frames, axis=1))


def loudest_dbfs(samples: np.ndarray) -> float:
    """The level of the loudest 100 ms, in dBFS (-inf for digital silence)."""
    rms = frame_rms(samples)
    if len(rms) == 0:
        return float("-inf")
    k = min(QUIET_FRAMES, len(rms))
    power = np.convolve(rms * rms, np.ones(k) / k, mode="valid")
    top = float(np.sqrt(power.max()))
    return 20 * np.log10(top) if top > 0 else float("-inf")


def chunk_count(duration: float, chunk_seconds: float) -> int:
    return max(1, round(duration / chunk_seconds)) if duration > 0 else 1


def nominal_boundaries(duration: float, chunk_seconds: float) -> list[float]:
    """Where the chunk boundaries would be without looking at the sound (video seconds)."""
    n = chunk_count(duration, chunk_seconds)
    return [duration * k / n for k in range(1, n)]


def quietest_cut(samples: np.ndarray, origin: int, nominal: int, search: int,
                 lowest: int) -> int:
    """The sample to cut at: the middle of the quietest 100 ms within `search` samples of
    `nominal` (nearest to it among equals), never at or before `lowest`. `samples[0]` is
    sample number `origin`."""
    lo = max(lowest + FRAME, nominal - search, origin)
    hi = min(nominal + search, origin + len(samples))
    if hi - lo < QUIET_FRAMES * FRAME:
        return max(lo, min(nominal, hi))
    rms = frame_rms(samples[lo - origin:hi - origin])
    power = np.convolve(rms * rms, np.ones(QUIET_FRAMES) / QUIET_FRAMES, mode="valid")
    centres = lo + (np.arange(len(power)) + QUIET_FRAMES / 2) * FRAME
    # Quietest first; among (nearly) equal levels the one nearest the nominal place.
    floor = float(power.min())
    near = np.nonzero(power <= floor * 1.05 + 1e-12)[0]
    best = near[np.argmin(np.abs(centres[near] - nominal))]
    return int(centres[best])


class _Decoder:
    """The first audio stream, decoded and resampled to 16 kHz mono, placed on video time."""

    def __init__(self, path: str, start_time: float, end_seconds: float,
                 should_stop: Callable[[], bool] | None) -> None:
        self.path, self.start_time = path, start_time
        self.end = int(round(end_seconds * SAMPLE_RATE))
        self.should_stop = should_stop
        self.position = 0  # samples handed out so far (video time * SAMPLE_RATE)
        self.placed = False  # the first frame is placed exactly, later ones within _GAP_S

    def blocks(self) -> Iterator[np.ndarray]:
        import av

        try:
            container = av.open(self.path)
        except (av.FFmpegError, OSError) as exc:
            raise BadInput(f"cannot read the audio of {self.path}: {exc}") from exc
        try:
            if not container.streams.audio:
                return
            stream = container.streams.audio[0]
            stream.thread_type = "AUTO"
            resampler = av.AudioResampler(format="flt", layout="mono", rate=SAMPLE_RATE)
            for frame in self._frames(container, stream):
                if self.should_stop is not None and self.should_stop():
                    raise Cancelled("transcription cancelled; run it again to resume")
                block = self._place(frame, resampler)
                if block is not None and len(block):
                    yield block
                if self.position >= self.end:
                    return
            for out in resampler.resample(None):
                block = self._clip(out.to_ndarray().reshape(-1))
                if len(block):
                    yield block
        finally:
            container.close()

    def _frames(self, container: object, stream: object) -> Iterator[object]:
        import av

        try:
            yield from container.decode(stream)  # type: ignore[attr-defined]
        except av.FFmpegError as exc:  # a damaged tail: keep what was decoded
            log.warning("audio of %s ends early: %s", self.path, exc)

    def _place(self, frame: object, resampler: object) -> np.ndarray | None:
        pts, tb = getattr(frame, "pts", None), getattr(frame, "time_base", None)
        pad = np.zeros(0, np.float32)
        skip = 0
        if pts is not None and tb is not None:
            at = int(round((float(pts * tb) - self.start_time) * SAMPLE_RATE))
            gap = at - self.position
            slack = 0 if not self.placed else _GAP_S * SAMPLE_RATE
            if gap > slack:  # a late start or a hole: silence in between
                pad = np.zeros(min(gap, max(0, self.end - self.position)), np.float32)
            elif gap < -slack:  # before the first video frame (AAC priming too), an overlap
                skip = -gap
        self.placed = True
        outs = [o.to_ndarray().reshape(-1) for o in resampler.resample(frame)]  # type: ignore[attr-defined]
        data = np.concatenate(outs).astype(np.float32) if outs else np.zeros(0, np.float32)
        data = data[skip:] if skip else data
        return self._clip(np.concatenate([pad, data]) if len(pad) else data)

    def _clip(self, block: np.ndarray) -> np.ndarray:
        room = self.end - self.position
        if room <= 0:
            return np.zeros(0, np.float32)
        block = block[:room].astype(np.float32, copy=False)
        self.position += len(block)
        return block


def iter_chunks(path: str, start_time: float, duration: float, chunk_seconds: float,
                search_seconds: float, *,
                should_stop: Callable[[], bool] | None = None) -> Iterator[AudioChunk]:
    """The sound of [0, duration) video seconds in `chunk_count(duration, chunk_seconds)`
    chunks, each cut at a quiet moment (module docstring). A file without audio gives the
    chunks empty; raises Cancelled when `should_stop()` turns true."""
    decoder = _Decoder(path, start_time, duration, should_stop)
    nominal = [int(round(b * SAMPLE_RATE)) for b in nominal_boundaries(duration, chunk_seconds)]
    search = int(search_seconds * SAMPLE_RATE)
    total = decoder.end
    buffer: list[np.ndarray] = []
    have = 0  # samples in buffer
    origin = 0  # sample number of buffer[0][0]
    index = 0
    blocks = decoder.blocks()
    exhausted = False
    while index < len(nominal) + 1:
        last = index == len(nominal)
        need = total if last else min(total, nominal[index] + search)
        while not exhausted and origin + have < need:
            block = next(blocks, None)
            if block is None:
                exhausted = True
                break
            buffer.append(block)
            have += len(block)
        data = np.concatenate(buffer) if len(buffer) > 1 else (
            buffer[0] if buffer else np.zeros(0, np.float32))
        if last:
            cut = max(origin, total)
        elif exhausted and origin + have <= nominal[index] - search:
            cut = max(origin, nominal[index])  # the sound ended early: the nominal place
        else:
            cut = quietest_cut(data, origin, nominal[index], search, origin)
        take = max(0, min(cut - origin, len(data)))
        chunk = data[:take]
        end = cut if not last else total
        yield AudioChunk(index, origin / SAMPLE_RATE, end / SAMPLE_RATE,
                         np.ascontiguousarray(chunk, dtype=np.float32))
        rest = data[take:]
        buffer, have, origin = ([rest] if len(rest) else []), len(rest), end
        index += 1
