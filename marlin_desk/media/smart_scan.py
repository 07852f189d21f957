"""Smart cut, step 1: read the source's video packets (no decoding) and plan the cut, or say why
it cannot be smart.

A smart cut re-encodes the frames from the in-point to the next keyframe K (the head), copies the
packets from K on, and, when a copy cannot stop exactly at the out-point, re-encodes the last
partial GOP from the last keyframe K2 before the out-point (the tail). A copy stops exactly when
the frames before the out-point are a prefix of the packets in decode order: always at the end
of the video and without B-frames; with B-frames, a B-frame before the out-point often needs a
reference frame after it, and that frame would show.

Everything is in the source's time base (integer ticks), so the joined stream's times are the
source's own, shifted so that the first frame of the clip is at 0.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Literal

import av
import av.stream

from marlin_desk.media.export_keyframes import keyframe_at_or_before
from marlin_desk.media.probe import VideoInfo, open_input, video_stream_of
from marlin_desk.media.smart_params import SmartFallback, StreamParams, stream_params

SMART_ENCODERS = {"h264": "libx264", "hevc": "libx265"}
# NAL unit types of a random-access keyframe a new coded sequence can start with.
_H264_IDR = 5
_HEVC_IRAP = range(16, 22)  # BLA, IDR, CRA (a CRA only without leading pictures: checked)
SLACK_S = Fraction(1, 2000)  # a frame this close to a cut point counts as on it (as exact mode)
_EXTRA_PACKETS = 48  # packets read past the out-point: enough for any reorder depth


@dataclass(frozen=True)
class Packet:
    pts: int
    key: bool
    nal_headers: tuple[int, ...]  # keyframes only (empty for other packets)


@dataclass(frozen=True)
class Segment:
    """Frames [first, end) of the source (pts in ticks), re-encoded or copied."""

    kind: Literal["encode", "copy"]
    frames: tuple[int, ...]  # source pts of every frame, ascending

    @property
    def first(self) -> int:
        return self.frames[0]


@dataclass(frozen=True)
class SmartPlan:
    source: StreamParams
    zero: int  # source pts of the clip's first frame (output time 0)
    frames: tuple[int, ...]  # source pts of every output frame, ascending
    step: int  # ticks per frame
    head: Segment | None
    copy: Segment
    tail: Segment | None
    seek_key: Fraction  # keyframe at or before the in-point (container seconds), for FFmpeg
    # Decode times are made anew (containers such as Matroska store none): the k-th packet of
    # the clip in decode order decodes at the k-th frame time minus `delay`, the copy's reorder
    # depth in ticks, so that no packet decodes after it is shown.
    delay: int

    @property
    def segments(self) -> list[Segment]:
        return [s for s in (self.head, self.copy, self.tail) if s is not None]

    def seconds(self, seg: Segment | None) -> float:
        return 0.0 if seg is None else float(len(seg.frames) * self.step * self.source.time_base)


def plan_smart(path: str, info: VideoInfo, start: float, end: float) -> SmartPlan:
    """The segments of a smart cut of [start, end) (video seconds), or SmartFallback."""
    if info.video_codec not in SMART_ENCODERS:
        raise SmartFallback(f"the video is {info.video_codec}; smart cut re-encodes the start "
                            "with the same codec and knows H.264 and HEVC only")
    if info.is_vfr:
        raise SmartFallback("the video has a variable frame rate, so re-encoded frames cannot "
                            "line up with copied ones")
    origin = Fraction(info.start_time).limit_denominator(10**9)
    t_in = origin + Fraction(start).limit_denominator(10**9)
    t_out = origin + Fraction(end).limit_denominator(10**9)
    seek_key = keyframe_at_or_before(path, float(t_in))
    container = open_input(path)
    try:
        streams = [s for s in container.streams.video
                   if not s.disposition & av.stream.Disposition.attached_pic]
        if len(streams) != 1:
            raise SmartFallback(f"the file has {len(streams)} video streams; smart cut copies "
                                "exactly one")
        stream = video_stream_of(container, path)
        params = stream_params(stream)
        params.check_suitable()
        packets = _scan(container, stream, seek_key, t_out, params.time_base,
                        params.length_size)
    finally:
        container.close()
    return _plan(params, packets, t_in, t_out, seek_key)


def _scan(container: Any, stream: Any, seek_key: Fraction, t_out: Fraction, tb: Fraction,
          length_size: int) -> list[Packet]:
    """Packets in decode order from the keyframe at or before the in-point to a little past the
    out-point."""
    container.seek(int(seek_key / tb), stream=stream, backward=True)
    out: list[Packet] = []
    past = 0
    for p in container.demux(stream):
        if p.pts is None:
            if p.size == 0:
                break
            raise SmartFallback("a video packet has no timestamp")
        nals = tuple(nal_headers(bytes(p), length_size)) if p.is_keyframe else ()
        out.append(Packet(p.pts, p.is_keyframe, nals))
        if p.pts * tb >= t_out:
            past += 1
            if past > _EXTRA_PACKETS:
                break
    return out


def nal_headers(data: bytes, length_size: int = 4) -> list[int]:
    """The first header byte of each NAL unit of a length-prefixed (MP4/Matroska) packet: the
    unit type is its low 5 bits in H.264, bits 1-6 in HEVC."""
    types = []
    i = 0
    while i + length_size < len(data):
        size = int.from_bytes(data[i:i + length_size], "big")
        types.append(data[i + length_size])
        i += length_size + size
    return types


def _is_random_access(codec: str, first_bytes: Sequence[int]) -> bool:
    if codec == "h264":
        return any(b & 0x1F == _H264_IDR for b in first_bytes)
    return any((b >> 1) & 0x3F in _HEVC_IRAP for b in first_bytes)


def _plan(params: StreamParams, packets: list[Packet], t_in: Fraction, t_out: Fraction,
          seek_key: Fraction) -> SmartPlan:
    tb = params.time_base
    lo, hi = (t_in - SLACK_S) / tb, (t_out - SLACK_S) / tb
    frames = tuple(sorted(p.pts for p in packets if lo <= p.pts < hi))
    if len(frames) < 2:
        raise SmartFallback("the clip is too short to be worth a smart cut")
    steps = {b - a for a, b in zip(frames, frames[1:], strict=False)}
    step = min(steps)
    if max(steps) - step > 1:  # Matroska rounds to the millisecond: one tick of jitter is fine
        raise SmartFallback("the frames of the clip are not evenly spaced")
    order = {p.pts: i for i, p in enumerate(packets)}
    key = next((p for p in packets if p.key and frames[0] <= p.pts <= frames[-1]), None)
    if key is None:
        raise SmartFallback("there is no keyframe between the in and out points (the clip lies "
                            "inside one group of pictures), so all of it is re-encoded")
    _check_keyframe(params.codec, packets, order[key.pts], "the first keyframe in the clip")
    head_frames = tuple(f for f in frames if f < key.pts)
    rest = [f for f in frames if f >= key.pts]
    copy_frames, tail_frames = _split_end(params.codec, packets, order, rest, frames[-1])
    head = Segment("encode", head_frames) if head_frames else None
    copy = Segment("copy", copy_frames)
    tail = Segment("encode", tail_frames) if tail_frames else None
    start = order[copy.first]
    decode_order = [p.pts for p in packets[start:start + len(copy_frames)]]
    delay = max(s - d for s, d in zip(copy_frames, decode_order, strict=True))
    return SmartPlan(params, frames[0], frames, step, head, copy, tail, seek_key, delay)


def _split_end(codec: str, packets: list[Packet], order: dict[int, int], rest: list[int],
               last: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """(copied frames, re-encoded tail frames) of the frames from the first keyframe on."""
    wanted = set(rest)
    start = order[rest[0]]
    stop = max(order[f] for f in rest)
    if all(packets[i].pts in wanted for i in range(start, stop + 1)):
        return tuple(rest), ()  # the copy ends exactly on the out-point
    k2 = next((packets[order[f]] for f in reversed(rest)
               if f > rest[0] and packets[order[f]].key), None)
    if k2 is None:
        raise SmartFallback("the out-point falls inside the group of pictures the copy would "
                            "start with, so there is nothing to copy exactly")
    _check_keyframe(codec, packets, order[k2.pts], "the last keyframe in the clip")
    copied = tuple(f for f in rest if f < k2.pts)
    if sorted(packets[i].pts for i in range(start, order[k2.pts])) != list(copied):
        raise SmartFallback("the packets before the last keyframe are not a closed group of "
                            "pictures")
    return copied, tuple(f for f in rest if f >= k2.pts)


def _check_keyframe(codec: str, packets: list[Packet], index: int, what: str) -> None:
    """SmartFallback unless packets[index] starts a closed GOP a decoder can begin with."""
    key = packets[index]
    if not _is_random_access(codec, key.nal_headers):
        raise SmartFallback(f"{what} is not an IDR picture (an open GOP), so the copied frames "
                            "may refer to frames before it")
    for p in packets[index + 1:]:
        if p.key:
            break
        if p.pts < key.pts:
            raise SmartFallback(f"{what} has leading pictures (an open GOP), so the copied "
                                "frames refer to frames before it")
