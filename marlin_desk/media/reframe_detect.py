"""Subjects and cuts of a clip's span, for its reframing path: one FFmpeg pass, one detector.

FFmpeg decodes the span once (`-copyts`, from the keyframe at or before the start, our own
`trim`, as the exporter does) and splits the picture in two branches:
- samples: a `select` keeps one source frame every 1/detect_fps seconds (real frames with their
  own times, so VFR sources are fine), scaled to about detect_size pixels on the long side (the
  upright, square-pixel picture: FFmpeg's autorotate has already turned it), piped to us as raw
  BGR; `showinfo` logs each one's pts;
- cuts: media/shots' own scene filter, so the cuts are the ones `marlin-desk shots` finds, at
  the exact frame. Skipped when the caller already has the video's cuts (the shots cache).
The faces of each sample are found here while FFmpeg decodes the next ones (two processes: both
cores work), and where the picture moves (media/motion_subject: the subject of a shot without
faces). Measured by bench/reframe.py; numbers in docs/reframe.md.
"""

from __future__ import annotations

import collections
import re
import subprocess
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import IO, Any

import av
import numpy as np

from marlin_desk.core.errors import BadInput, Cancelled
from marlin_desk.core.reframe import ReframeSettings
from marlin_desk.media import face_detector, motion_subject
from marlin_desk.media.export_keyframes import keyframe_at_or_before, seek_arg
from marlin_desk.media.export_run import CancelToken, plain_error, read_lines, stop_process
from marlin_desk.media.face_detector import FaceBox
from marlin_desk.media.ffmpeg_bin import FFmpegBinary, find_ffmpeg
from marlin_desk.media.probe import VideoInfo
from marlin_desk.media.shots import ShotSettings, filter_graph, parse_cuts

# Packets read past the first at or after the start: B-frames arrive out of presentation
# order, never by more than a GOP's reorder depth (16 in H.264 and HEVC).
_REORDER_WINDOW = 32
_TIME_BASE = r"\[Parsed_showinfo_{} @ [^\]]+\] config in time_base: (\d+)/(\d+)"
_FRAME = r"\[Parsed_showinfo_{} @ [^\]]+\] n:\s*\d+ pts:\s*(-?\d+)"


@dataclass(frozen=True)
class Sample:
    """One analysed frame: its video time, the faces in it and the box of what moved since
    the sample before (fractions of the frame; None when nothing, or everything, moved)."""

    t: float
    faces: tuple[FaceBox, ...]
    moving: FaceBox | None = None

    def to_json(self) -> list[Any]:
        row: list[Any] = [round(self.t, 6), [f.to_json() for f in self.faces]]
        return row + [self.moving.to_json()] if self.moving is not None else row

    @classmethod
    def from_json(cls, row: list[Any]) -> Sample:
        moving = FaceBox.from_json(row[2]) if len(row) > 2 and row[2] else None
        return cls(float(row[0]), tuple(FaceBox.from_json(f) for f in row[1]), moving)


@dataclass(frozen=True)
class SpanDetections:
    """What the path is computed from: samples and cuts of [start, end] (video times) of a
    frame of frame_w x frame_h pixels (upright, square pixels, as the export's filters see it).
    `note` says why no face was looked for (no detector on this machine), else None.
    `speech`: when the video's transcript is known, the stretches in which someone speaks
    (core.transcript.speech_spans); None when it is not. Not cached with the detections: the
    transcript has its own store and may come later."""

    start: float
    end: float
    frame_w: int
    frame_h: int
    samples: tuple[Sample, ...]
    cuts: tuple[float, ...]
    detector: str
    note: str | None = None
    first_frame: float | None = None  # video time of the span's first frame (the clip's t=0)
    speech: tuple[tuple[float, float], ...] | None = None

    def to_json(self) -> dict[str, Any]:
        return {"start": self.start, "end": self.end, "first_frame": self.first_frame,
                "frame": [self.frame_w, self.frame_h],
                "cuts": list(self.cuts), "detector": self.detector, "note": self.note,
                "samples": [s.to_json() for s in self.samples]}

    def within(self, start: float, end: float, first: float | None) -> SpanDetections:
        """The detections of a part of this span (a trimmed clip), with that part's first
        frame: what a pass over the part alone would have found, on this pass's samples."""
        if not self.start <= start < end <= self.end:
            raise ValueError(f"{start:g}-{end:g} is not inside {self.start:g}-{self.end:g}")
        return SpanDetections(start, end, self.frame_w, self.frame_h,
                              tuple(s for s in self.samples if start <= s.t <= end),
                              _inside(self.cuts, start, end), self.detector, self.note, first,
                              None if self.speech is None else
                              tuple((a, b) for a, b in self.speech if b >= start and a <= end))

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> SpanDetections:
        w, h = (int(v) for v in d["frame"])
        samples = tuple(Sample.from_json(row) for row in d["samples"])
        first = d.get("first_frame")
        return cls(float(d["start"]), float(d["end"]), w, h, samples,
                   tuple(float(c) for c in d["cuts"]), str(d["detector"]), d.get("note"),
                   None if first is None else float(first))


def frame_size(info: VideoInfo) -> tuple[int, int]:
    """The picture the export's filters crop (presets.apply_video_filters): upright, square
    pixels, even sides."""
    sar = info.sample_aspect_ratio if info.sample_aspect_ratio > 0 else 1.0
    return max(2, int(info.width * sar) // 2 * 2), max(2, info.height // 2 * 2)


def detection_size(frame_w: int, frame_h: int, long_side: int) -> tuple[int, int]:
    """The analysed picture: the long side at most `long_side`, the aspect kept, even sides."""
    scale = min(1.0, long_side / max(frame_w, frame_h))
    return max(2, round(frame_w * scale / 2) * 2), max(2, round(frame_h * scale / 2) * 2)


def detector_name() -> str:
    """What looked at the samples (part of the cache key: installing the face detector later
    makes the spans be looked at again)."""
    motion = f"motion {motion_subject.MOTION_VERSION}"
    if face_detector.available() is not None:
        return motion
    return f"{face_detector.DETECTOR} {face_detector.DETECTOR_VERSION}, {motion}"


def first_frame(video: str, info: VideoInfo, start: float) -> float:
    """Video time of the first frame the export keeps for a clip starting at `start` (pts at or
    after start less the exporter's half millisecond), from packet times: no decoding."""
    target = Fraction(info.start_time + start - 0.0005).limit_denominator(10**9)
    key = keyframe_at_or_before(video, float(target))
    with av.open(video) as container:
        stream = container.streams.video[0]
        tb = stream.time_base or Fraction(1, 1_000_000)
        container.seek(int(key / tb), stream=stream, backward=True)
        best: Fraction | None = None
        after = 0
        for packet in container.demux(stream):
            if packet.pts is None:
                continue
            pts = packet.pts * tb
            if pts >= target:
                best = pts if best is None else min(best, pts)
            if best is not None:
                after += 1
                if after > _REORDER_WINDOW:
                    break
    return float(best) - info.start_time if best is not None else start


def command(binary: FFmpegBinary, video: str, info: VideoInfo, start: float, end: float,
            settings: ReframeSettings, *, find_cuts: bool,
            shot_settings: ShotSettings | None = None) -> tuple[list[str], int | None, int]:
    """(FFmpeg arguments, showinfo index of the cut branch or None, of the sample branch)."""
    origin = info.start_time
    seek, seek_s = seek_arg(keyframe_at_or_before(video, origin + start))
    dw, dh = detection_size(*frame_size(info), settings.detect_size)
    # The exporter's own slack (clip_export.plan_clip): the same first frame on both sides.
    a, b = max(0.0, origin + start - 0.0005), origin + end
    step = 1.0 / settings.detect_fps
    # Frames at least one step apart (a thousandth less: 25 fps gives exactly 5 a second).
    sample = [f"select='isnan(prev_selected_t)+gte(t-prev_selected_t,{step - 1e-3:.6f})'",
              f"scale={dw}:{dh}:flags=bilinear", "showinfo"]
    head = f"[0:v]trim=start={a:.6f}:end={b:.6f}"
    if find_cuts:
        shots = filter_graph(shot_settings or ShotSettings())
        graph = f"{head},split=2[c][s];[c]{shots}[co];[s]{','.join(sample)}[so]"
        # FFmpeg numbers the parsed filters in order: trim 0, split 1, then the cut chain.
        cut_index: int | None = 2 + _count_filters(shots) - 1
        sample_index = 2 + _count_filters(shots) + len(sample) - 1
        maps = ["-map", "[co]", "-f", "null", "-"]
    else:
        graph = f"{head},{','.join(sample)}[so]"
        cut_index, sample_index = None, len(sample)
        maps = []
    # With the cuts known, only the sampled frames matter: skipping the frames nothing refers
    # to (most B-frames) decodes about 40 % less (bench/reframe.py, "cuts known").
    skip = [] if find_cuts else ["-skip_frame", "noref"]
    duration = max(0.0, b - seek_s) + 1.0  # read a little past the end: trim stops exactly
    args = [binary.path, "-hide_banner", "-nostdin", "-nostats", "-v", "info", "-copyts",
            "-seek_timestamp", "1", "-ss", seek, "-noaccurate_seek", "-t", f"{duration:.6f}",
            *skip, "-i", "file:" + video, "-filter_complex", graph, *maps,
            "-map", "[so]", "-fps_mode", "passthrough", "-f", "rawvideo", "-pix_fmt", "bgr24",
            "pipe:1"]
    return args, cut_index, sample_index


def _count_filters(chain: str) -> int:
    """Filters in a comma-separated chain, not counting commas inside quotes."""
    count, quoted = 1, False
    for ch in chain:
        if ch == "'":
            quoted = not quoted
        elif ch == "," and not quoted:
            count += 1
    return count


def frame_times(lines: Sequence[str], index: int, start_time: float) -> list[float]:
    """Video times of the frames one showinfo instance logged, in order."""
    tb_re, frame_re = re.compile(_TIME_BASE.format(index)), re.compile(_FRAME.format(index))
    tb: Fraction | None = None
    times: list[float] = []
    for line in lines:
        m = tb_re.search(line)
        if m:
            tb = Fraction(int(m.group(1)), int(m.group(2)))
            continue
        m = frame_re.search(line)
        if m and tb is not None:
            times.append(float(int(m.group(1)) * tb) - start_time)
    return times


def detect_span(video: str, info: VideoInfo, start: float, end: float,
                settings: ReframeSettings | None = None, *, cuts: Sequence[float] | None = None,
                binary: FFmpegBinary | None = None, cancel: CancelToken | None = None,
                on_progress: Callable[[float], None] | None = None) -> SpanDetections:
    """Faces at detect_fps and the cuts (unless given) of [start, end] of `video`.

    Progress in [0, 1]; core.errors.Cancelled when `cancel` is set (FFmpeg is stopped at once);
    MarlinError / BadInput with FFmpeg's reason when it fails. Without a face detector on
    this machine the samples have no faces, only motion, and `note` says why."""
    settings = settings or ReframeSettings()
    if not end > start >= 0:
        raise BadInput(f"reframing needs a forward span, not {start:g}-{end:g}")
    fw, fh = frame_size(info)
    missing = face_detector.available()
    note = f"{missing}; following what moves instead" if missing else None
    first = first_frame(video, info, start)
    binary = binary or find_ffmpeg()
    args, cut_index, sample_index = command(binary, video, info, start, end, settings,
                                            find_cuts=cuts is None)
    dw, dh = detection_size(fw, fh, settings.detect_size)
    faces = _run(args, dw, dh, (end - start) * settings.detect_fps, settings.min_confidence,
                 missing is None, cancel, on_progress)
    lines = faces.lines
    times = frame_times(lines, sample_index, info.start_time)
    if len(times) != len(faces.found):
        raise BadInput(f"FFmpeg gave {len(faces.found)} frames for {len(times)} sample times "
                       f"of {video}: cannot place the faces in time")
    found = _inside(parse_cuts([ln for ln in lines if f"Parsed_showinfo_{cut_index} " in ln],
                               info.start_time), start, end) if cut_index is not None else None
    samples = tuple(Sample(round(t, 6), tuple(f), m)
                    for t, f, m in zip(times, faces.found, faces.moving, strict=True))
    return SpanDetections(start, end, fw, fh, samples,
                          found if found is not None else _inside(cuts or [], start, end),
                          detector_name(), note, first)


def _inside(cuts: Sequence[float], start: float, end: float) -> tuple[float, ...]:
    return tuple(sorted(c for c in cuts if start + 1e-6 < c < end - 1e-6))


@dataclass
class _Pass:
    found: list[list[FaceBox]]
    moving: list[FaceBox | None]
    lines: list[str]


def _run(args: list[str], dw: int, dh: int, expected: float, min_confidence: float,
         look: bool, cancel: CancelToken | None,
         on_progress: Callable[[float], None] | None) -> _Pass:
    """Run the pass, detecting faces (when `look`) and motion in each frame as it arrives."""
    creationflags = getattr(subprocess, "CREATE_NO_WINDOW", 0)
    proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, creationflags=creationflags)
    lines: list[str] = []
    tail: collections.deque[str] = collections.deque(maxlen=40)
    reader = threading.Thread(target=read_lines, args=(proc.stderr, tail, lines, "showinfo"),
                              daemon=True)
    reader.start()
    size = dw * dh * 3
    found: list[list[FaceBox]] = []
    moving: list[FaceBox | None] = []
    motion = motion_subject.MotionFinder()
    try:
        assert proc.stdout is not None
        while True:
            if cancel is not None and cancel.is_set():
                raise Cancelled("reframing cancelled")
            data = _read_exactly(proc.stdout, size)
            if data is None:
                break
            frame = np.frombuffer(data, np.uint8).reshape(dh, dw, 3)
            faces = face_detector.detect_faces(frame, min_confidence) if look else []
            moving.append(motion.feed(frame))
            if len(faces) > 1:  # who speaks, should they not fit in one crop
                faces = [replace(f, talk=motion.mouth_motion(f)) for f in faces]
            found.append(faces)
            if on_progress is not None and expected > 0:
                on_progress(min(0.99, len(found) / expected))
        proc.wait()
    except BaseException:
        stop_process(proc, unblock_stdout=True)
        raise
    finally:
        reader.join(timeout=5)
    if proc.returncode != 0:
        if cancel is not None and cancel.is_set():
            raise Cancelled("reframing cancelled")
        raise plain_error(list(tail), proc.returncode)
    if on_progress is not None:
        on_progress(1.0)
    return _Pass(found, moving, lines)


def _read_exactly(stream: IO[bytes], size: int) -> bytes | None:
    chunks: list[bytes] = []
    got = 0
    while got < size:
        chunk = stream.read(size - got)
        if not chunk:
            return None  # end of the pipe (a partial frame only when FFmpeg failed)
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)
