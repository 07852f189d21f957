"""Probing a video file with PyAV: what it holds and how its frames are timed.

Why one module of over 400 lines: every fact about a file's timing (start offsets, rotation,
VFR, edit lists, timecode) is read in one pass here, and every caller relies on one set of
rules.

All times we report are VIDEO times: seconds from the first video frame, with the stream's
start offset (mpegts clocks, edit lists, cameras that start at 3600 s...) removed. `start_time`
says what was removed, so callers that talk to FFmpeg (which counts from the container start)
can convert back: container time = video time + start_time (- container_start_time for -ss).

Probing is cheap on purpose: it decodes one frame, demuxes (without decoding) the first few
hundred packets and the packets after the last keyframe, and never reads the whole file.
"""

from __future__ import annotations

import math
import os
import re
import stat
import statistics
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import av
import av.container
import av.stream
import av.video.frame
import av.video.stream

from marlin_desk.core.errors import BadInput
from marlin_desk.media.geometry import normalise_rotation

HEAD_PACKETS = 600  # packets demuxed from the start: VFR check and exact counts of short files
DECODE_TRIES = 300  # packets fed to the decoder to get the first frame before giving up
TAIL_PACKETS = 20_000  # bound on the packets read after the last keyframe
SEARCH_STEPS = 24  # bisection steps to find where a truncated file's data really ends
VFR_RELATIVE = 0.10  # a frame interval this far from the median is irregular...
VFR_TICKS = 1.5  # ...unless it is within this many time-base ticks (mkv rounds to 1 ms)
VFR_FRACTION = 0.02  # more than this share of irregular intervals makes a stream VFR...
VFR_MIN_IRREGULAR = 3  # ...if there are at least this many (a dropped frame or two is not VFR)
VFR_AVG_MISMATCH = 0.05  # or the average rate differs from the typical interval by this much
TRUNCATION_SLACK = 0.5  # seconds of header duration we may fail to find before saying truncated
STILL_IMAGE_FORMATS = frozenset(
    {
        "image2",
        "png_pipe",
        "jpeg_pipe",
        "bmp_pipe",
        "webp_pipe",
        "tiff_pipe",
        "jpegxl_pipe",
        "qoi_pipe",
        "dpx_pipe",
        "exr_pipe",
    }
)
_AVErrors = (av.error.FFmpegError, OSError, ValueError, EOFError)


@dataclass(frozen=True)
class VideoInfo:
    path: str
    duration: float  # seconds, from the first video frame (start offset removed)
    width: int  # as displayed: rotation applied
    height: int
    coded_width: int
    coded_height: int
    fps: float  # average frame rate
    rotation: int  # degrees clockwise to display upright: 0, 90, 180, 270
    has_audio: bool
    start_time: float  # the container/stream start offset in seconds (removed from all our times)
    video_codec: str
    audio_codec: str | None
    frame_count: int  # exact when known, else estimated from duration x fps
    is_vfr: bool
    pixel_format: str = ""
    sample_aspect_ratio: float = 1.0
    # Added by the media layer (defaults keep older constructors working):
    frame_count_exact: bool = False  # frame_count was counted or declared, not estimated
    container_start_time: float = 0.0  # the container's own start (FFmpeg's -ss origin), seconds
    truncated: bool = False  # the data ends before the header says; duration is what is there
    # The stream's nominal rate as an exact fraction ("30000/1001"; "" when unknown): what NLE
    # timelines are built on (fps above is measured and can be off by a rounding).
    frame_rate: str = ""
    # The start timecode the camera or the encoder recorded (the `timecode` tag of the video
    # stream, the container or a tmcd data track), e.g. "01:00:00;00" (';' means drop-frame).
    timecode: str | None = None
    audio_channels: int = 0  # of the first audio stream (0: none or unknown)
    audio_sample_rate: int = 0  # Hz (0: none or unknown)

    def to_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "duration": round(self.duration, 3),
            "width": self.width,
            "height": self.height,
            "coded_width": self.coded_width,
            "coded_height": self.coded_height,
            "fps": round(self.fps, 3),
            "rotation": self.rotation,
            "has_audio": self.has_audio,
            "start_time": round(self.start_time, 3),
            "video_codec": self.video_codec,
            "audio_codec": self.audio_codec,
            "frame_count": self.frame_count,
            "is_vfr": self.is_vfr,
            "pixel_format": self.pixel_format,
            "sample_aspect_ratio": self.sample_aspect_ratio,
            "frame_count_exact": self.frame_count_exact,
            "container_start_time": round(self.container_start_time, 3),
            "truncated": self.truncated,
            "frame_rate": self.frame_rate,
            "timecode": self.timecode,
            "audio_channels": self.audio_channels,
            "audio_sample_rate": self.audio_sample_rate,
        }


def _audio_int(audio: Any, name: str) -> int:
    """An integer property of an audio stream's codec context (0 when unknown)."""
    ctx = getattr(audio, "codec_context", None) if audio is not None else None
    try:
        return int(getattr(ctx, name, 0) or 0)
    except (TypeError, ValueError):
        return 0


# --------------------------------------------------------------------------- opening


def check_path(path: str | os.PathLike[str]) -> str:
    """The path as a string, after the checks that need no decoder (and cannot hang)."""
    text = os.fspath(path)
    shown = _shown(text)
    try:
        st = os.stat(text)
    except FileNotFoundError:
        raise BadInput(f"{shown} does not exist.") from None
    except PermissionError:
        raise BadInput(f"{shown} cannot be read: permission denied.") from None
    except (OSError, ValueError) as exc:
        raise BadInput(f"{shown} cannot be read ({exc.__class__.__name__}).") from None
    if stat.S_ISDIR(st.st_mode):
        raise BadInput(f"{shown} is a folder, not a video file.")
    if not stat.S_ISREG(st.st_mode):
        # FIFOs, sockets and devices could block forever in the demuxer.
        raise BadInput(f"{shown} is not a regular file.")
    if st.st_size == 0:
        raise BadInput(f"{shown} is empty (0 bytes).")
    if not os.access(text, os.R_OK):
        raise BadInput(f"{shown} cannot be read: permission denied.")
    return text


def open_input(path: str) -> av.container.InputContainer:
    """Open a checked path with PyAV, mapping failures to BadInput.

    The absolute path is passed so that a name such as "concat:x" or "http:y" is never taken
    for an FFmpeg protocol; metadata that is not UTF-8 is replaced rather than failing.
    """
    shown = _shown(path)
    try:
        container = av.open(os.path.abspath(path), "r", metadata_errors="replace")
    except _AVErrors:
        raise BadInput(
            f"{shown} is not a video file that can be read (it may be corrupt, truncated "
            "or not a video at all)."
        ) from None
    if not isinstance(container, av.container.InputContainer):  # pragma: no cover - typing
        container.close()
        raise BadInput(f"{shown} cannot be opened for reading.")
    return container


def video_stream_of(
    container: av.container.InputContainer, path: str
) -> av.video.stream.VideoStream:
    """The first real video stream (cover art in audio files does not count)."""
    for stream in container.streams.video:
        if stream.disposition & av.stream.Disposition.attached_pic:
            continue
        if stream.codec_context is None:
            continue
        return stream
    shown = _shown(path)
    if container.streams.audio:
        raise BadInput(f"{shown} has no video stream (it holds only audio).")
    raise BadInput(f"{shown} has no video stream.")


def _shown(path: str) -> str:
    return f'"{path}"'


# --------------------------------------------------------------------------- probing


@dataclass
class _Head:
    pts: list[int]  # presentation times (ticks) of the decodable packets seen, demux order
    durations: dict[int, int]  # pts -> packet duration (ticks) where the demuxer knows it
    complete: bool  # the whole stream was seen
    packets: int  # packets read, with or without timestamps
    read_error: bool
    first_frame: av.video.frame.VideoFrame | None


def probe(path: str) -> VideoInfo:
    """Probe `path`; raises core.errors.BadInput with one plain sentence for unusable files."""
    text = check_path(path)
    shown = _shown(text)
    container = open_input(text)
    try:
        if container.format is not None and container.format.name in STILL_IMAGE_FORMATS:
            raise BadInput(f"{shown} is a still image, not a video.")
        stream = video_stream_of(container, text)
        tb = stream.time_base
        if tb is None or tb <= 0:
            raise BadInput(f"{shown} has a video stream without timestamps.")
        head = _scan_head(container, stream)
        if not head.pts and head.packets:
            raise BadInput(
                f"{shown} has no timestamps (a raw video stream); put it in an MP4 or MKV "
                "container first."
            )
        if not head.pts:
            raise BadInput(f"{shown} has a video stream with no frames (zero duration).")
        if head.first_frame is None:
            raise BadInput(
                f"{shown} has no video frame that can be decoded (it may be corrupt or truncated)."
            )
        frame = head.first_frame
        origin = _origin(frame, stream, head)
        usable = sorted({p for p in head.pts if p >= origin})
        typical = _typical_interval(usable)
        header_rate = _rate(stream)
        last_end, tail_error = _stream_end(container, stream, head, origin, typical, header_rate)
        duration = float((last_end - origin) * tb)
        if not duration > 0 or not math.isfinite(duration):
            raise BadInput(f"{shown} has a video stream with no frames (zero duration).")

        if head.complete:
            frame_count, exact = len(usable), True
        elif stream.frames and stream.frames > 0:
            frame_count, exact = int(stream.frames), True
        else:
            frame_count, exact = 0, False
        if exact:
            fps = frame_count / duration
        else:
            # The real intervals of the first packets beat a header rate (mkv VFR says 30).
            measured = (
                (len(usable) - 1) / float((usable[-1] - usable[0]) * tb) if len(usable) > 1 else 0.0
            )
            fps = measured or header_rate
            frame_count = max(1, round(duration * fps))

        is_vfr = _is_vfr(usable, typical, tb, fps)
        rotation = _rotation(frame, stream)
        coded_w, coded_h = frame.width, frame.height
        width, height = (coded_h, coded_w) if rotation in (90, 270) else (coded_w, coded_h)
        audio = next(iter(container.streams.audio), None)
        sar = stream.sample_aspect_ratio
        header_end = _header_end(container, stream)
        truncated = tail_error or (
            header_end is not None and float((last_end - header_end) * tb) < -TRUNCATION_SLACK
        )
        return VideoInfo(
            path=text,
            duration=duration,
            width=width,
            height=height,
            coded_width=coded_w,
            coded_height=coded_h,
            fps=float(fps),
            rotation=rotation,
            has_audio=audio is not None,
            start_time=float(origin * tb),
            video_codec=stream.codec_context.name,
            audio_codec=audio.codec_context.name
            if audio is not None and audio.codec_context
            else None,
            frame_count=int(frame_count),
            is_vfr=is_vfr,
            pixel_format=frame.format.name if frame.format is not None else "",
            sample_aspect_ratio=float(sar) if sar else 1.0,
            frame_count_exact=exact,
            container_start_time=(container.start_time or 0) / av.time_base,
            truncated=bool(truncated),
            frame_rate=_nominal_rate(stream),
            timecode=_timecode(container, stream),
            audio_channels=_audio_int(audio, "channels"),
            audio_sample_rate=_audio_int(audio, "sample_rate"),
        )
    finally:
        container.close()


def _scan_head(
    container: av.container.InputContainer, stream: av.video.stream.VideoStream
) -> _Head:
    """Demux the first HEAD_PACKETS packets, decoding only until the first frame comes out."""
    head = _Head(
        pts=[], durations={}, complete=False, packets=0, read_error=False, first_frame=None
    )
    codec = stream.codec_context
    tries = 0
    seen = 0
    try:
        for packet in container.demux(stream):
            if packet.size == 0 and packet.pts is None:  # the flush packet: end of stream
                head.complete = True
                if head.first_frame is None:
                    head.first_frame = _first(_decode(codec, None))
                break
            seen += 1
            head.packets = seen
            if packet.pts is not None and not packet.is_discard:
                head.pts.append(packet.pts)
                if packet.duration:
                    head.durations[packet.pts] = packet.duration
            if head.first_frame is None and tries < DECODE_TRIES:
                tries += 1
                head.first_frame = _first(_decode(codec, packet))
            if seen >= HEAD_PACKETS and (head.first_frame is not None or tries >= DECODE_TRIES):
                break
    except _AVErrors:
        head.read_error = True
        head.complete = True  # nothing more can be read
        if head.first_frame is None:
            head.first_frame = _first(_decode(codec, None))
    return head


def _decode(codec: Any, packet: av.Packet | None) -> list[av.video.frame.VideoFrame]:
    try:
        return list(codec.decode(packet))
    except _AVErrors:
        return []


def _first(frames: list[av.video.frame.VideoFrame]) -> av.video.frame.VideoFrame | None:
    return frames[0] if frames else None


def _origin(
    frame: av.video.frame.VideoFrame, stream: av.video.stream.VideoStream, head: _Head
) -> int:
    """The pts of the first frame a decoder shows: our time zero.

    The decoded frame beats the header: leading frames of an open GOP that cannot be decoded
    and edit-list discards are not shown, so they must not count.
    """
    if frame.pts is not None:
        return int(frame.pts)
    if stream.start_time is not None:
        return int(stream.start_time)
    return min(head.pts)


def _nominal_rate(stream: av.video.stream.VideoStream) -> str:
    """The stream's declared rate as "num/den" (guessed_rate: r_frame_rate, the rate of the
    frame grid; then the average), "" when the header has none that is plausible."""
    for rate in (stream.guessed_rate, stream.average_rate, stream.base_rate):
        if rate and 0 < rate < 10_000:
            return f"{rate.numerator}/{rate.denominator}"
    return ""


_TIMECODE = re.compile(r"\d{1,2}[:;.]\d\d[:;.]\d\d[:;.,]\d\d")


def _timecode(
    container: av.container.InputContainer, stream: av.video.stream.VideoStream
) -> str | None:
    """The recorded start timecode: the video stream's `timecode` tag (mov/mp4 put the tmcd
    track's value there), else the container's (mkv, mxf), else a data stream's."""
    tagged = [stream.metadata or {}, container.metadata or {}]
    tagged += [s.metadata or {} for s in container.streams if s.type == "data"]
    for tags in tagged:
        for key, value in tags.items():
            if key.lower() == "timecode" and _TIMECODE.fullmatch(str(value).strip()):
                return str(value).strip()
    return None


def _typical_interval(sorted_pts: list[int]) -> int:
    """The median interval between consecutive presentation times, in ticks (0 if unknown)."""
    deltas = [b - a for a, b in zip(sorted_pts, sorted_pts[1:], strict=False) if b > a]
    return int(statistics.median(deltas)) if deltas else 0


def _rate(stream: av.video.stream.VideoStream) -> float:
    for rate in (stream.average_rate, stream.guessed_rate, stream.base_rate):
        if rate and rate > 0 and float(rate) < 10_000:
            return float(rate)
    return 0.0


def _frame_duration(
    pts: int,
    head_durations: dict[int, int],
    packet_duration: int | None,
    typical: int,
    header_rate: float,
    tb: Fraction,
) -> int:
    if packet_duration:
        return packet_duration
    if pts in head_durations:
        return head_durations[pts]
    if typical:
        return typical
    if header_rate:
        return max(1, round(1 / (header_rate * tb)))
    return 0


def _stream_end(
    container: av.container.InputContainer,
    stream: av.video.stream.VideoStream,
    head: _Head,
    origin: int,
    typical: int,
    header_rate: float,
) -> tuple[int, bool]:
    """(end of the last frame in ticks, whether reading the tail hit missing or broken data)."""
    tb = stream.time_base
    assert tb is not None
    last = max(head.pts)
    if head.complete:
        return last + _frame_duration(
            last, head.durations, None, typical, header_rate, tb
        ), head.read_error

    # Jump to the last keyframe and read to the end: packets only, no decoding.
    header_end = _header_end(container, stream)
    target = header_end if header_end is not None else origin + round(24 * 3600 / tb)
    tail = _read_from(container, stream, target)
    error = tail.error
    if not tail.packets:
        # The index points past the data (a truncated file): bisect for the last spot that
        # still reads, then read from there.
        lo, hi = last, target
        for _ in range(SEARCH_STEPS):
            if hi - lo <= max(typical, 1):
                break
            mid = (lo + hi) // 2
            if _read_from(container, stream, mid, limit=4).packets:
                lo = mid
            else:
                hi = mid
        tail = _read_from(container, stream, lo)
        error = True
    if tail.packets and (tail.reached_end or header_end is None):
        pts, packet_duration = max(tail.packets)
        if pts >= last:
            dur = _frame_duration(pts, head.durations, packet_duration, typical, header_rate, tb)
            return pts + dur, error
    if header_end is not None and header_end > last:
        return header_end, error  # the tail could not be read to its end: trust the header
    return last + _frame_duration(last, head.durations, None, typical, header_rate, tb), True


@dataclass
class _Tail:
    packets: list[tuple[int, int]]  # (pts, duration) in ticks
    reached_end: bool
    error: bool


def _read_from(
    container: av.container.InputContainer,
    stream: av.video.stream.VideoStream,
    target: int,
    limit: int = TAIL_PACKETS,
) -> _Tail:
    """Seek to the keyframe at or before `target` and demux up to `limit` packets."""
    tail = _Tail(packets=[], reached_end=False, error=False)
    try:
        container.seek(target, stream=stream, backward=True, any_frame=False)
        for packet in container.demux(stream):
            if packet.size == 0 and packet.pts is None:
                tail.reached_end = True
                break
            if packet.pts is not None and not packet.is_discard:
                tail.packets.append((packet.pts, packet.duration or 0))
            if packet.is_corrupt:
                tail.error = True
            if len(tail.packets) >= limit:
                break
    except _AVErrors:
        tail.error = True
        tail.reached_end = True
    return tail


def _header_end(
    container: av.container.InputContainer, stream: av.video.stream.VideoStream
) -> int | None:
    """Where the header says the video ends, in ticks (None when it does not say)."""
    tb = stream.time_base
    assert tb is not None
    if stream.duration:
        return (stream.start_time or 0) + stream.duration
    if container.duration:
        seconds = Fraction(container.duration, av.time_base)
        fmt = container.format.name if container.format is not None else ""
        if "matroska" not in fmt and "webm" not in fmt:
            # Matroska's duration is an end time; elsewhere it counts from the start.
            seconds += Fraction(container.start_time or 0, av.time_base)
        return round(seconds / tb)
    return None


def _is_vfr(sorted_pts: list[int], typical: int, tb: Fraction, fps: float) -> bool:
    """Irregular intervals in the first packets, or an average rate the intervals contradict."""
    if not typical or len(sorted_pts) < 3:
        return False
    tolerance = max(VFR_RELATIVE * typical, VFR_TICKS)
    deltas = [b - a for a, b in zip(sorted_pts, sorted_pts[1:], strict=False)]
    irregular = sum(1 for d in deltas if abs(d - typical) > tolerance)
    if irregular >= VFR_MIN_IRREGULAR and irregular > VFR_FRACTION * len(deltas):
        return True
    typical_rate = 1.0 / float(typical * tb)
    return bool(fps) and abs(typical_rate - fps) / fps > VFR_AVG_MISMATCH


def _rotation(frame: av.video.frame.VideoFrame, stream: av.video.stream.VideoStream) -> int:
    """Clockwise degrees to upright, from the display matrix, else the legacy `rotate` tag.

    FFmpeg's display matrix angle (VideoFrame.rotation) is counter-clockwise, so negate it.
    """
    try:
        ccw = frame.rotation
    except _AVErrors:  # pragma: no cover - defensive
        ccw = 0
    if ccw:
        return normalise_rotation(-float(ccw))
    tag = (stream.metadata or {}).get("rotate")
    if tag:
        try:
            return normalise_rotation(float(tag))
        except ValueError:
            return 0
    return 0
