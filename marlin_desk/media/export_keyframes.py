"""Keyframe look-up and output measurement with PyAV, for stream-copy (fast) cuts.

A stream copy can only start on a keyframe, so FFmpeg's `-ss` with `-c copy` silently starts at
the keyframe before the asked time. We find that keyframe ourselves (demuxing packets, no
decoding: milliseconds) and ask FFmpeg for exactly it, so the start we report is the real one.
"""

from __future__ import annotations

import math
from fractions import Fraction

import av

from marlin_desk.core.errors import BadInput

# How far back to seek before scanning packets; widened until a keyframe is found.
_BACKOFFS = (0.0, 10.0, 60.0, math.inf)


def keyframe_at_or_before(path: str, t_abs: float) -> Fraction:
    """Presentation time (container seconds, exact) of the last video keyframe at or before
    `t_abs`; the first keyframe when there is none before it."""
    try:
        container = av.open(path)
    except (av.FFmpegError, OSError) as exc:
        raise BadInput(f"cannot read {path}: {exc}") from exc
    with container:
        stream = container.streams.video[0]
        tb = stream.time_base or Fraction(1, 1_000_000)
        target = Fraction(t_abs).limit_denominator(10**9)
        first_key: Fraction | None = None
        for back in _BACKOFFS:
            seek_to = target - Fraction(back) if math.isfinite(back) else None
            best = _scan(container, stream, tb, target, seek_to)
            if best is not None:
                return best
            if seek_to is None:
                break
        # Nothing at or before t_abs: the stream's first keyframe is the earliest possible start.
        container.seek(0, stream=stream, backward=True)
        for packet in container.demux(stream):
            if packet.is_keyframe and packet.pts is not None:
                first_key = packet.pts * tb
                break
        if first_key is None:
            raise BadInput(f"{path} has no video keyframe")
        return first_key


def _scan(container: av.container.InputContainer, stream: av.video.stream.VideoStream,
          tb: Fraction, target: Fraction, seek_to: Fraction | None) -> Fraction | None:
    if seek_to is None or seek_to <= 0:
        container.seek(0, stream=stream, backward=True)
    else:
        container.seek(int(seek_to / tb), stream=stream, backward=True)
    best: Fraction | None = None
    for packet in container.demux(stream):
        if packet.pts is None:
            continue
        pts = packet.pts * tb
        if packet.is_keyframe:
            if pts > target:
                break  # keyframes come in presentation order: nothing later can qualify
            best = pts
        elif packet.dts is not None and packet.dts * tb > target:
            break
    return best


def seek_arg(key: Fraction) -> tuple[str, float]:
    """FFmpeg's `-ss` (with `-seek_timestamp 1`) for a keyframe time, and that time in seconds.

    Rounded up to the microsecond so FFmpeg's seek lands on this keyframe, not the one before.
    """
    us = math.ceil(key * 1_000_000)
    text = f"{'-' if us < 0 else ''}{abs(us) // 1_000_000}.{abs(us) % 1_000_000:06d}"
    return text, us / 1_000_000


def video_duration(path: str) -> float:
    """Seconds a player shows of the first video stream of a file we wrote: from the first
    frame's time to the end of the last one.

    Packet times, not the track header: a stream copy that ends inside a B-frame group keeps a
    reference frame or two past the cut, and the header's sum of durations misses that.
    """
    with av.open(path) as container:
        stream = container.streams.video[0]
        tb = stream.time_base or Fraction(1, 1_000_000)
        first: int | None = None
        end: int | None = None
        for packet in container.demux(stream):
            if packet.pts is None:
                continue
            first = packet.pts if first is None else min(first, packet.pts)
            stop = packet.pts + (packet.duration or 0)
            end = stop if end is None else max(end, stop)
        if first is None or end is None:
            return 0.0
        return float((end - first) * tb)
