"""Synthetic test videos whose truth is known, written with PyAV.

`make_video` writes solid-colour segments, optionally with a *frame code*: the frame's own
presentation time in milliseconds painted as black/white blocks, so a test can read back from a
decoded (even downscaled or rotated) frame which source frame it is. That is how the fidelity
tests prove that the times a sampler reports belong to the frames it returns.

Container notes (PyAV 18.1, libavformat 62), checked when this file was written:
- mp4/mov keep irregular pts (time base 1/90000) and a start offset (an edit list: the stream's
  start_time is the offset), and carry the display matrix used for rotation.
- mkv keeps irregular pts and offsets but rounds every time to 1 ms (time base 1/1000).
- mpegts keeps an offset, but when the first pts is 0 the muxer shifts everything by the B-frame
  delay (about 0.075 s), so use an offset > 1 s with .ts.
Times painted in the frame code are VIDEO times: the start offset is not included.
"""

from __future__ import annotations

import math
import subprocess
from collections.abc import Sequence
from fractions import Fraction
from pathlib import Path

import av
import numpy as np

Colour = tuple[int, int, int]

TIME_BASE = Fraction(1, 90_000)
CODE_BITS = 20  # milliseconds: up to about 17 minutes
CHECK_BITS = 4
CODE_COLS = 8
CODE_ROWS = (CODE_BITS + CHECK_BITS) // CODE_COLS  # 3 rows of 8 blocks
CODE_HEIGHT_FRACTION = 0.25  # the code strip fills the bottom quarter of the coded frame
MARKER_FRACTION = 0.2  # the corner marker is this fraction of each side
# Encoders that accept a 1/90000 time base; others (mpeg4: 16-bit denominators) get 1/1000.
FINE_TIME_BASE_CODECS = frozenset({"libx264", "libx265", "libvpx", "libvpx-vp9", "libaom-av1"})


def frame_schedule(
    duration: float, fps: float | Fraction, vfr: bool | str = False, seed: int = 0
) -> list[float]:
    """The presentation times (video time, seconds, on the 1/90000 grid) make_video writes.

    vfr=False: regular 1/fps steps. vfr=True or "alternate": steps alternate 1.5/fps and
    0.5/fps (average still fps). vfr="jitter": steps drawn uniformly in [0.5, 1.5]/fps.
    Always at least one frame; frames start at 0 and stay below `duration`.
    """
    step = 1.0 / float(fps)
    if not vfr:
        count = max(1, math.ceil(duration * fps - 1e-9))
        return [_on_grid(i * step) for i in range(count)]
    rng = np.random.default_rng(seed)
    times: list[float] = []
    t = 0.0
    i = 0
    while t < duration - 1e-9 or not times:
        times.append(_on_grid(t))
        if vfr == "jitter":
            t += step * float(rng.uniform(0.5, 1.5))
        else:
            t += step * (1.5 if i % 2 == 0 else 0.5)
        i += 1
    return times


def _on_grid(t: float) -> float:
    return round(t / TIME_BASE) * float(TIME_BASE)


def make_video(
    path: str | Path,
    *,
    segments: Sequence[tuple[float, Colour]] | None = None,
    duration: float = 2.0,
    size: tuple[int, int] = (160, 96),
    fps: float | Fraction = 30,
    vfr: bool | str = False,
    start_offset: float = 0.0,
    rotation: int = 0,
    audio: bool = False,
    codec: str = "libx264",
    gop: int | None = None,
    frame_code: bool = True,
    marker: Colour | None = None,
    texture: bool = False,
    preset: str = "veryfast",
    crf: int = 18,
    pix_fmt: str = "yuv420p",
    seed: int = 0,
) -> Path:
    """Write a synthetic video and return its path.

    size is (width, height) as CODED; `rotation` (0/90/180/270, degrees clockwise to display
    upright, the VideoInfo convention) is stored as a display matrix, so a 160x96 file with
    rotation=90 displays 96x160. `marker` paints a square of that colour in the coded top-left
    corner (to check orientation). `texture` adds a moving pattern so the encoder has real work
    (benchmarks). The container comes from the suffix (.mp4, .mov, .mkv, .ts, .webm...).
    """
    path = Path(path)
    if segments:
        duration = float(sum(seconds for seconds, _ in segments))
    else:
        segments = [(duration, (40, 90, 160))]
    width, height = size
    times = frame_schedule(duration, fps, vfr, seed)
    rate = Fraction(fps).limit_denominator(1001)

    container = av.open(str(path), "w")
    try:
        stream = container.add_stream(codec, rate=rate)
        stream.width = width
        stream.height = height
        stream.pix_fmt = pix_fmt
        time_base = TIME_BASE if codec in FINE_TIME_BASE_CODECS else Fraction(1, 1000)
        stream.time_base = time_base
        stream.codec_context.time_base = time_base
        if gop is not None:
            stream.codec_context.gop_size = gop
        if codec == "libx264":
            stream.options = {"preset": preset, "crf": str(crf)}
        if rotation % 360:
            # PyAV's helper takes counter-clockwise degrees (as VideoFrame.rotation reads back).
            stream.set_display_rotation(-(rotation % 360))
        audio_stream = None
        if audio:
            audio_stream = container.add_stream("aac", rate=48_000, layout="mono")
        step = 1.0 / float(fps)
        painter = _Painter(width, height, segments, frame_code, marker, texture, seed)
        samples_done = 0
        for index, t in enumerate(times):
            frame = av.VideoFrame.from_ndarray(painter.paint(index, t), format="rgb24")
            frame.pts = round((t + start_offset) / time_base)
            frame.time_base = time_base
            container.mux(stream.encode(frame))
            if audio_stream is not None:
                samples_done = _write_audio(
                    container, audio_stream, samples_done, t + step, start_offset
                )
        container.mux(stream.encode(None))
        if audio_stream is not None:
            container.mux(audio_stream.encode(None))
    finally:
        container.close()
    return path


def _write_audio(
    container: av.container.OutputContainer,
    stream: av.AudioStream,
    samples_done: int,
    until: float,
    start_offset: float,
) -> int:
    """A 440 Hz tone up to `until` seconds, in 1024-sample frames."""
    rate = 48_000
    target = int(until * rate)
    offset_samples = round(start_offset * rate)
    while samples_done + 1024 <= target:
        n = np.arange(samples_done, samples_done + 1024)
        wave = (0.2 * np.sin(2 * np.pi * 440 * n / rate)).astype(np.float32)[None, :]
        frame = av.AudioFrame.from_ndarray(wave, format="fltp", layout="mono")
        frame.sample_rate = rate
        frame.pts = samples_done + offset_samples
        frame.time_base = Fraction(1, rate)
        container.mux(stream.encode(frame))
        samples_done += 1024
    return samples_done


class _Painter:
    """Paints one RGB frame: segment colour, optional texture, marker and frame code."""

    def __init__(
        self,
        width: int,
        height: int,
        segments: Sequence[tuple[float, Colour]],
        frame_code: bool,
        marker: Colour | None,
        texture: bool,
        seed: int,
    ) -> None:
        self.width, self.height = width, height
        self.ends = np.cumsum([seconds for seconds, _ in segments])
        self.colours = [np.array(colour, np.int16) for _, colour in segments]
        self.frame_code = frame_code
        self.marker = marker
        self.pattern: np.ndarray | None = None
        if texture:
            rng = np.random.default_rng(seed)
            yy, xx = np.mgrid[0:height, 0 : width * 2]
            wave = 30 * np.sin(xx / 23.0) * np.cos(yy / 17.0) + rng.normal(0, 4, xx.shape)
            self.pattern = wave.astype(np.int16)

    def paint(self, index: int, t: float) -> np.ndarray:
        segment = min(int(np.searchsorted(self.ends, t, side="right")), len(self.colours) - 1)
        colour = self.colours[segment]
        if self.pattern is None:
            img = np.empty((self.height, self.width, 3), np.uint8)
            img[:] = colour.astype(np.uint8)
        else:
            shift = (index * 7) % self.width
            base = self.pattern[:, shift : shift + self.width, None] + colour[None, None, :]
            img = np.clip(base, 0, 255).astype(np.uint8)
        if self.marker is not None:
            mh = max(2, int(self.height * MARKER_FRACTION))
            mw = max(2, int(self.width * MARKER_FRACTION))
            img[:mh, :mw] = self.marker
        if self.frame_code:
            paint_frame_code(img, round(t * 1000))
        return img


def _checksum(value: int) -> int:
    return sum((value >> shift) & 0xF for shift in range(0, CODE_BITS, 4)) & 0xF


def _code_bits(value: int) -> list[int]:
    word = (value & ((1 << CODE_BITS) - 1)) | (_checksum(value) << CODE_BITS)
    return [(word >> bit) & 1 for bit in range(CODE_BITS + CHECK_BITS)]


def _block_box(img_h: int, img_w: int, bit: int) -> tuple[int, int, int, int]:
    """(top, bottom, left, right) of a bit's block in a frame of this size."""
    strip_top = img_h - int(round(img_h * CODE_HEIGHT_FRACTION))
    row, col = divmod(bit, CODE_COLS)
    row_h = (img_h - strip_top) / CODE_ROWS
    col_w = img_w / CODE_COLS
    top = strip_top + row * row_h
    left = col * col_w
    return int(round(top)), int(round(top + row_h)), int(round(left)), int(round(left + col_w))


def paint_frame_code(img: np.ndarray, value_ms: int) -> None:
    """Paint `value_ms` (0..2^20-1) with a 4-bit checksum into the bottom strip of `img`."""
    h, w = img.shape[:2]
    for bit, on in enumerate(_code_bits(value_ms)):
        top, bottom, left, right = _block_box(h, w, bit)
        img[top:bottom, left:right] = 255 if on else 0


def read_frame_code(img: np.ndarray, rotation: int = 0) -> int | None:
    """Read the painted time (ms) back from a decoded frame, or None if it does not check out.

    `img` is (H, W, 3) uint8 RGB at any size; `rotation` is the clockwise rotation that was
    applied to the coded frame to display it upright (undone here before reading).
    """
    if rotation % 360:
        img = np.rot90(img, k=(rotation % 360) // 90)
    h, w = img.shape[:2]
    luma = img.astype(np.float32).mean(axis=2)
    word = 0
    for bit in range(CODE_BITS + CHECK_BITS):
        top, bottom, left, right = _block_box(h, w, bit)
        dy = max(1, (bottom - top) // 4)
        dx = max(1, (right - left) // 4)
        centre = luma[top + dy : bottom - dy, left + dx : right - dx]
        if centre.size == 0:
            return None
        if float(centre.mean()) > 127.5:
            word |= 1 << bit
    value = word & ((1 << CODE_BITS) - 1)
    if (word >> CODE_BITS) != _checksum(value):
        return None
    return value


def marker_corner(img: np.ndarray, colour: Colour, tolerance: int = 60) -> str | None:
    """Which corner ("top-left", "top-right", "bottom-left", "bottom-right") shows `colour`."""
    h, w = img.shape[:2]
    ph, pw = max(1, int(h * MARKER_FRACTION / 2)), max(1, int(w * MARKER_FRACTION / 2))
    corners = {
        "top-left": img[:ph, :pw],
        "top-right": img[:ph, w - pw :],
        "bottom-left": img[h - ph :, :pw],
        "bottom-right": img[h - ph :, w - pw :],
    }
    target = np.array(colour, np.float32)
    found = [
        name
        for name, patch in corners.items()
        if np.abs(patch.reshape(-1, 3).astype(np.float32).mean(0) - target).max() < tolerance
    ]
    return found[0] if len(found) == 1 else None


def ffmpeg_autorotated_first_frame(path: str | Path, ffmpeg: str = "ffmpeg") -> np.ndarray:
    """The first frame as the FFmpeg command line displays it (autorotation on): the reference
    for which way a display matrix turns the picture."""
    probe = av.open(str(path))
    try:
        frame = next(probe.decode(video=0))
        rot = (-frame.rotation) % 360
        w, h = (frame.width, frame.height) if rot in (0, 180) else (frame.height, frame.width)
    finally:
        probe.close()
    raw = subprocess.run(
        [
            ffmpeg,
            "-v",
            "error",
            "-i",
            str(path),
            "-frames:v",
            "1",
            "-f",
            "rawvideo",
            "-pix_fmt",
            "rgb24",
            "-",
        ],
        check=True,
        capture_output=True,
        timeout=60,
    ).stdout
    return np.frombuffer(raw, np.uint8).reshape(h, w, 3)
