"""Smart cut, step 3: join the re-encoded and copied video packets into one stream (PyAV, no
decoding).

The output stream is made from the source stream's parameters (codec record, display matrix,
time base), so the copied part, nearly all of the clip, is described by its own record. Every
keyframe that does not carry its parameter sets gets its segment's sets written in-band in front
of it, so a decoder (or a player seeking) always meets the right SPS/PPS before the frames that
use them. Decode times are made anew for the whole clip (SmartPlan.delay): the k-th packet in
decode order decodes at the k-th frame time minus the copy's reorder depth. Re-encoded segments
have no B-frames, so theirs are their frame times minus that depth, and decode times rise by one
frame across each join.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from fractions import Fraction
from pathlib import Path

import av

from marlin_desk.core.errors import Cancelled
from marlin_desk.media.export_run import CancelToken
from marlin_desk.media.probe import video_stream_of
from marlin_desk.media.smart_params import SmartFallback, StreamParams, stream_params
from marlin_desk.media.smart_scan import Segment, SmartPlan, nal_headers

_CHECK_EVERY = 64  # packets between looks at the cancel token


def join_video(source: str, plan: SmartPlan, encoded: dict[str, Path], out: Path,
               cancel: CancelToken | None = None,
               on_packet: Callable[[int], None] | None = None) -> int:
    """Write the clip's video (only) to `out` (MP4); returns the number of packets written.

    `encoded` maps "head"/"tail" to the files the encoder wrote for those segments.
    """
    src_params = plan.source
    tb = src_params.time_base
    written = 0
    last_dts: int | None = None
    with av.open(source) as src, av.open(str(out), "w", format="mp4") as dst:
        in_stream = video_stream_of(src, source)
        out_stream = dst.add_stream_from_template(in_stream)
        out_stream.time_base = tb
        parts: list[tuple[Segment, Iterator[tuple[bytes, int, int, bool]], list[bytes]]] = []
        for name, seg in (("head", plan.head), ("copy", plan.copy), ("tail", plan.tail)):
            if seg is None:
                continue
            if seg.kind == "copy":
                parts.append((seg, _copied(src, in_stream, seg, plan),
                              src_params.parameter_sets()))
            else:
                params, packets = _encoded(encoded[name], seg, plan)
                parts.append((seg, packets, params.parameter_sets()))
        for _seg, packets, sets in parts:
            for data, pts, dts, key in packets:
                if last_dts is not None and dts <= last_dts:
                    raise SmartFallback("the decode times do not rise across a join")
                last_dts = dts
                if key:
                    data = _with_parameter_sets(data, sets, src_params)
                packet = av.Packet(data)
                packet.stream = out_stream
                packet.time_base = tb
                packet.pts, packet.dts, packet.duration = pts, dts, plan.step
                packet.is_keyframe = key
                dst.mux(packet)
                written += 1
                if written % _CHECK_EVERY == 0:
                    if cancel is not None and cancel.is_set():
                        raise Cancelled("export cancelled")
                    if on_packet is not None:
                        on_packet(written)
    return written


def _copied(src: av.container.InputContainer, stream: av.video.stream.VideoStream,
            seg: Segment, plan: SmartPlan) -> Iterator[tuple[bytes, int, int, bool]]:
    """The source packets of a copied segment, in decode order, shifted to clip time."""
    wanted = set(seg.frames)
    src.seek(seg.first, stream=stream, backward=True)
    started = False
    left = len(wanted)
    n = 0
    for p in src.demux(stream):
        if p.pts is None:
            continue
        if not started:
            if p.pts != seg.first:
                continue  # packets before the keyframe we seeked to
            started = True
        if p.pts not in wanted:
            raise SmartFallback("the copied packets are not the ones planned")
        dts = seg.frames[n] - plan.delay - plan.zero
        yield bytes(p), p.pts - plan.zero, dts, bool(p.is_keyframe)
        n += 1
        left -= 1
        if left == 0:
            return
    raise SmartFallback("the source ended before the planned copy did")


def _encoded(path: Path, seg: Segment, plan: SmartPlan
             ) -> tuple[StreamParams, Iterator[tuple[bytes, int, int, bool]]]:
    """The re-encoded segment's settings (checked against the source) and its packets."""
    with av.open(str(path)) as c:
        stream = c.streams.video[0]
        params = stream_params(stream)
        etb = Fraction(stream.time_base)
        raw = [(bytes(p), p.pts, bool(p.is_keyframe)) for p in c.demux(stream)
               if p.pts is not None]
    why = plan.source.mismatch(params)
    if why:
        raise SmartFallback(why)
    raw.sort(key=lambda r: r[1])  # no B-frames: display order is decode order
    times = [round((pts - raw[0][1]) * etb / plan.source.time_base) + seg.first
             for _, pts, _ in raw]
    if tuple(times) != seg.frames:
        raise SmartFallback(f"the re-encoder wrote {len(times)} frames for the "
                            f"{len(seg.frames)} planned, or at other times")
    if not raw[0][2]:
        raise SmartFallback("the re-encoded segment does not start with a keyframe")

    def packets() -> Iterator[tuple[bytes, int, int, bool]]:
        for (data, _, key), t in zip(raw, times, strict=True):
            pts = t - plan.zero
            yield data, pts, pts - plan.delay, key

    return params, packets()


def _with_parameter_sets(data: bytes, sets: list[bytes], src: StreamParams) -> bytes:
    """`data` with the parameter sets in front unless it already carries an SPS."""
    headers = nal_headers(data, src.length_size)
    if src.codec == "h264":
        has_sps = any(h & 0x1F == 7 for h in headers)
    else:
        has_sps = any((h >> 1) & 0x3F == 33 for h in headers)
    if has_sps:
        return data
    n = src.length_size
    return b"".join(len(s).to_bytes(n, "big") + s for s in sets) + data
