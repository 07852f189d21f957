"""Sampling one window's frames exactly as Marlin-2B saw video in training.

Why one module of over 400 lines: counting, picking and resizing the frames must agree with the
trainer's arithmetic step for step; split, the parity tests would have to chase it across files.

The trainer read clips through qwen-vl-utils 0.0.14 (torchcodec backend): it counted the clip's
frames, asked `smart_nframes` how many to keep (2 per second, 4..240, even), picked them with
`torch.linspace(0, n - 1, nframes).round()` and resized them with `smart_resize` (32-pixel grid,
at most 200,704 pixels). We do the same per window, with two corrections a desktop app needs:

- VFR: the frames of a window are the ones whose real presentation time falls in it, and each
  sampled frame carries its real time (packet pts), never index / fps.
- Windows: long videos are cut into windows; times are video times (start offset removed), so
  `relative_times` are what the prompt's timestamps must say for this window.
- Rate: smart_nframes' n = frames / fps * 2 is fed the window's own average rate (its frames /
  its seconds). For a whole clip that is the clip's average rate, as in training; inside a VFR
  file it keeps 2 frames per second where the camera changed its rate.

How: one demux pass over the window's packets (no decoding) lists its frames and picks which to
keep; then one seek to the keyframe before the window and one straight decode through it, with
non-reference frames we do not need skipped by the decoder, converting only the chosen frames at
the target size (swscale bicubic) and turning them upright.
"""

from __future__ import annotations

import contextlib
import itertools
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from fractions import Fraction

import av
import av.container
import av.video.frame
import av.video.stream
import numpy as np

from marlin_desk.core.budget import TRAINING_BUDGET, VideoBudget
from marlin_desk.core.errors import BadInput, Cancelled
from marlin_desk.media.geometry import coded_size_for, rotate_upright, smart_resize
from marlin_desk.media.probe import VideoInfo, check_path, open_input, probe, video_stream_of

EPS = 1e-6  # seconds: times this close to a window edge count as on it
FLOOR_SLACK = 1e-9  # 19.9999999 frames from float division is 20, not 18
PAST_END_PACKETS = 64  # consecutive packets after the window before we stop listing (reorder)
MAX_DECODE_ERRORS = 50  # packets that fail to decode before a window is given up
MIN_PARTIAL_FRAMES = 2  # a damaged window must still give this many distinct frames
SEEK_BACKOFF = (0.0, 2.0, 5.0, 15.0, 60.0, 240.0)  # seconds before a frame to seek to
KEYFRAME_SEARCH_PACKETS = 3000  # packets read after a seek looking for a keyframe
INTERPOLATION = "BICUBIC"


@dataclass
class SampledFrames:
    """One window's frames, ready for the model, and when each was shown."""

    frames: np.ndarray  # (T, H, W, 3) uint8 RGB, upright, already at frame_size_for
    # Each frame's real presentation time in VIDEO time (seconds, start offset removed). A
    # window holding one frame gives it twice, with the same time (temporal pairs).
    times: list[float]
    window_start: float
    window_end: float
    source_indices: list[int]  # index of each frame among the window's frames (0 = first)
    window_frame_count: int = 0  # frames the window holds in the file
    window_fps: float = 0.0  # their average rate (window frames / window seconds)

    @property
    def relative_times(self) -> list[float]:
        """Times from the window start: what the model's timestamps for this window say."""
        return [t - self.window_start for t in self.times]

    @property
    def size(self) -> tuple[int, int]:
        """(height, width) of every frame."""
        return int(self.frames.shape[1]), int(self.frames.shape[2])

    @property
    def sample_fps(self) -> float:
        """The rate qwen-vl-utils reports for these frames: nframes / total * video fps."""
        if not self.window_frame_count:
            return 0.0
        return len(self.times) / self.window_frame_count * self.window_fps


# --------------------------------------------------------------------------- the budget rules


def frame_count_for(
    duration_frames: int, avg_fps: float, budget: VideoBudget = TRAINING_BUDGET
) -> int:
    """How many frames the model gets for a window of `duration_frames` frames at `avg_fps`.

    qwen-vl-utils' smart_nframes: n = frames / fps * budget.fps, clamped to [min_frames rounded
    up to even, max_frames rounded down to even] and to the frames there are, then floored to an
    even number (frames are paired in time). A window of ONE frame gets 2: that frame is
    repeated, as qwen-vl-utils pads a frame list to an even length with its last frame
    (smart_nframes itself would fail there).
    """
    factor = budget.temporal_patch_size
    if duration_frames < 1:
        raise BadInput("A window must hold at least one frame.")
    if duration_frames < factor:
        return factor
    if not (avg_fps > 0 and math.isfinite(avg_fps)):
        raise BadInput(f"A frame rate of {avg_fps} frames per second cannot be sampled.")
    min_frames = math.ceil(budget.min_frames / factor) * factor
    max_frames = math.floor(budget.max_frames / factor) * factor
    n = duration_frames / avg_fps * budget.fps
    n = min(min(max(n, min_frames), max_frames), duration_frames)
    return max(factor, math.floor(n / factor + FLOOR_SLACK) * factor)


def frame_size_for(
    height: int, width: int, budget: VideoBudget = TRAINING_BUDGET
) -> tuple[int, int]:
    """(height, width) each sampled frame is resized to: qwen-vl-utils' smart_resize."""
    return smart_resize(
        height,
        width,
        factor=budget.factor,
        min_pixels=budget.min_pixels,
        max_pixels=budget.max_pixels,
    )


def choose_indices(total: int, nframes: int) -> list[int]:
    """torch.linspace(0, total - 1, nframes).round() as qwen-vl-utils computes it, with numpy.

    torch's CPU kernel (AVX2 / AVX-512 builds, i.e. any x86 trainer) works in float32 from both
    ends, each value with one fused multiply-add: step * i for the first half,
    end - step * (n - 1 - i) for the rest, rounded once to float32. We do the same sums in
    float64, which is exact here (float32 step >= 1, frame counts < 2**24), then round once to
    float32; np.round then rounds half to even like torch.round. Verified equal to torch for
    every window size up to 50,000 frames (tests/media/test_budget_rules.py).
    """
    if nframes < 1:
        return []
    if nframes == 1:
        return [0]
    end = np.float32(total - 1)
    step = np.float64(np.float32(end / np.float32(nframes - 1)))
    i = np.arange(nframes, dtype=np.float64)
    half = nframes // 2
    exact = np.where(i < half, step * i, np.float64(end) - step * (nframes - 1 - i))
    return [int(v) for v in np.round(exact.astype(np.float32))]


# --------------------------------------------------------------------------- sampling


def sample_window(
    path: str,
    start: float,
    end: float,
    budget: VideoBudget = TRAINING_BUDGET,
    info: VideoInfo | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> SampledFrames:
    """The frames shown at video times start <= t < end (t <= end when end is the video's end).

    `info` saves a probe when the caller already has one. `should_stop` is polled between
    packets; when it returns True, core.errors.Cancelled is raised. A damaged file gives the
    frames that could be decoded (at least two), else BadInput.
    """
    text = check_path(path)
    if info is None:
        info = probe(text)
    shown = f'"{text}"'
    start, end, to_end = _check_window(shown, float(start), float(end), info)
    display_hw = frame_size_for(info.height, info.width, budget)  # fails fast on odd shapes

    reader = _Reader(text)
    try:
        window = _Window(reader.stream.time_base, info.start_time, start, end, to_end)
        listed = _list_window(reader, window, should_stop)
        if not listed:
            raise BadInput(
                f"{shown} has no frame between {start:.3f} s and {end:.3f} s of video time."
            )
        span = min(end, info.duration) - start
        window_fps = len(listed) / span if span > 0 else info.fps
        nframes = frame_count_for(len(listed), window_fps, budget)
        picks = choose_indices(len(listed), nframes)
        wanted = [listed[i] for i in picks]
        buffer, row, lost = _decode_picks(
            reader, window, wanted, display_hw, info.rotation, should_stop
        )
    finally:
        reader.close()

    slots = [k for k in range(nframes) if listed[picks[k]] not in lost]
    distinct = len({picks[k] for k in slots})
    if distinct < min(MIN_PARTIAL_FRAMES, len(listed)):
        raise BadInput(
            f"{shown} could not be decoded between {start:.3f} s and {end:.3f} s "
            "(the file may be corrupt or truncated)."
        )
    while len(slots) % budget.temporal_patch_size:  # damaged window: pad like qwen-vl-utils
        slots.append(slots[-1])
    rows = [row[listed[picks[k]]] for k in slots]
    frames = buffer if rows == list(range(len(buffer))) else buffer[rows]
    return SampledFrames(
        frames=frames,
        times=[window.seconds(listed[picks[k]]) for k in slots],
        window_start=start,
        window_end=min(end, info.duration) if to_end else end,
        source_indices=[picks[k] for k in slots],
        window_frame_count=len(listed),
        window_fps=float(window_fps),
    )


class _Window:
    """Converts between stream ticks and video seconds, and says which ticks are inside."""

    def __init__(self, tb: Fraction, start_time: float, start: float, end: float, to_end: bool):
        self.tb = tb
        self.tb_float = float(tb)
        self.origin = round(start_time / self.tb_float)
        self.start, self.end, self.to_end = start, end, to_end
        self.start_tick = self.tick(start)
        self.end_tick = self.origin + math.ceil(end / self.tb_float) + 1

    def seconds(self, pts: int) -> float:
        return float((pts - self.origin) * self.tb)

    def contains(self, pts: int) -> bool:
        t = self.seconds(pts)
        return t >= self.start - EPS and (self.to_end or t < self.end - EPS)

    def tick(self, seconds: float) -> int:
        return self.origin + math.floor(seconds / self.tb_float)


class _Reader:
    """One open file, positioned on demand at a keyframe early enough for a given frame.

    A backward seek lands on the keyframe at or before its target in most demuxers; mpegts
    bisection and sparse indexes can overshoot, so every position is checked against the first
    packet read, the seek backs off further, and as a last resort the file is reopened and read
    from its first frame (a fresh file needs no seek at all).
    """

    def __init__(self, path: str) -> None:
        self.path = path
        self.container = open_input(path)
        self.stream = video_stream_of(self.container, path)
        if self.stream.time_base is None or self.stream.time_base <= 0:
            self.close()
            raise BadInput(f'"{path}" has a video stream without timestamps.')
        self.fresh = True

    def close(self) -> None:
        self.container.close()

    def _reopen(self) -> None:
        self.close()
        self.container = open_input(self.path)
        self.stream = video_stream_of(self.container, self.path)
        self.fresh = True

    def packets(self, window: _Window, reach: int) -> Iterator[av.Packet]:
        """Position on a keyframe whose pts is at or before `reach` (ticks) and return the
        packets from there to the end. Positioning happens now, so `self.stream` is the
        stream to decode once this returns. Packets without pts or marked discard are
        included (the decoder needs them).
        """
        for backoff in SEEK_BACKOFF:
            seconds = float((reach - window.origin) * window.tb) - backoff
            if seconds <= 0:
                break
            try:
                self.container.seek(
                    window.tick(seconds), stream=self.stream, backward=True, any_frame=False
                )
                self.fresh = False
                packets = self.container.demux(self.stream)
                key = _first_keyframe(packets)
            except (av.error.FFmpegError, OSError, EOFError):
                break
            if key is not None and (key.pts is None or key.pts <= reach):
                return itertools.chain([key], packets)
        if not self.fresh:
            self._reopen()
        self.fresh = False
        return self.container.demux(self.stream)


def _first_keyframe(packets: Iterator[av.Packet]) -> av.Packet | None:
    """Skip to the first keyframe: some demuxers (mpegts) seek to any frame."""
    for count, packet in enumerate(packets):
        if packet.size == 0 and packet.pts is None:
            return None
        if packet.is_keyframe:
            return packet
        if count >= KEYFRAME_SEARCH_PACKETS:
            return None
    return None


def _check_window(
    shown: str, start: float, end: float, info: VideoInfo
) -> tuple[float, float, bool]:
    if not (math.isfinite(start) and math.isfinite(end)):
        raise BadInput(f"The window {start} to {end} s of {shown} is not a finite time range.")
    if end <= start:
        raise BadInput(
            f"The window of {shown} ends ({end:.3f} s) before it starts ({start:.3f} s)."
        )
    start = max(0.0, start)
    if start >= info.duration - EPS:
        raise BadInput(
            f"The window of {shown} starts at {start:.3f} s, after the video ends "
            f"({info.duration:.3f} s)."
        )
    if end <= start:
        raise BadInput(f"The window of {shown} ends before the video starts.")
    return start, end, end >= info.duration - EPS


def _poll(should_stop: Callable[[], bool] | None) -> None:
    if should_stop is not None and should_stop():
        raise Cancelled("Frame sampling was cancelled.")


def _list_window(
    reader: _Reader, window: _Window, should_stop: Callable[[], bool] | None
) -> list[int]:
    """The pts of the window's frames in display order: demux only, nothing decoded."""
    found: set[int] = set()
    after = 0
    try:
        for count, packet in enumerate(reader.packets(window, window.start_tick)):
            if count % 64 == 0:
                _poll(should_stop)
            if packet.size == 0 and packet.pts is None:
                break
            pts = packet.pts
            if pts is None or packet.is_discard:
                continue
            if window.contains(pts):
                found.add(pts)
                after = 0
            elif pts > window.end_tick:
                after += 1
                if after > PAST_END_PACKETS or (
                    packet.dts is not None and packet.dts > window.end_tick
                ):
                    break  # later packets cannot come back into the window
    except (av.error.FFmpegError, OSError, EOFError):
        pass  # truncated or damaged: keep what was listed
    return sorted(found)


def _decode_picks(
    reader: _Reader,
    window: _Window,
    wanted: list[int],
    display_hw: tuple[int, int],
    rotation: int,
    should_stop: Callable[[], bool] | None,
) -> tuple[np.ndarray, dict[int, int], set[int]]:
    """Decode straight through from the keyframe and convert the wanted frames.

    Returns (one RGB frame per distinct wanted pts, in display order; pts -> its row; the pts
    that could not be decoded). Rows are written in place: no copy of the whole clip is made.
    """
    unique = sorted(set(wanted))
    row = {pts: i for i, pts in enumerate(unique)}
    out = np.empty((len(unique), *display_hw, 3), np.uint8)
    remaining = set(unique)
    last_wanted = unique[-1]
    packets = reader.packets(window, min(wanted))
    codec = reader.stream.codec_context
    codec.thread_type = "AUTO"
    height, width = coded_size_for(display_hw, rotation)
    errors = 0
    beyond = 0

    def take(frames: list[av.video.frame.VideoFrame]) -> None:
        for frame in frames:
            pts = frame.pts
            if pts is None or pts not in remaining:
                continue
            _poll(should_stop)
            out[row[pts]] = rotate_upright(_to_rgb(frame, width, height), rotation)
            remaining.discard(pts)

    try:
        for packet in packets:
            _poll(should_stop)
            if packet.size == 0 and packet.pts is None:
                break
            # Frames nobody references and nobody asked for need not be decoded at all.
            keep = packet.pts is None or packet.pts in remaining
            codec.skip_frame = "DEFAULT" if keep else "NONREF"
            try:
                take(codec.decode(packet))
            except (av.error.FFmpegError, ValueError):
                errors += 1
                if errors > MAX_DECODE_ERRORS:
                    break
            if not remaining:
                break
            order = packet.dts if packet.dts is not None else packet.pts
            if order is not None and order > last_wanted:
                beyond += 1
                if beyond > PAST_END_PACKETS:
                    break  # a wanted frame was lost (damaged data): stop and drain
    except (av.error.FFmpegError, OSError, EOFError):
        pass  # truncated: drain what the decoder holds
    if remaining:
        codec.skip_frame = "DEFAULT"
        with contextlib.suppress(av.error.FFmpegError, ValueError):
            take(codec.decode(None))
    return out, row, remaining


def _to_rgb(frame: av.video.frame.VideoFrame, width: int, height: int) -> np.ndarray:
    """Scale and convert in one swscale call (bicubic filters properly when shrinking)."""
    kwargs: dict[str, object] = {}
    if frame.color_range:
        kwargs["src_color_range"] = frame.color_range
    return frame.to_ndarray(
        width=width, height=height, format="rgb24", interpolation=INTERPOLATION, **kwargs
    )
