"""Smart cut (the `smart` export mode): frame-exact like `exact`, nearly as fast as `fast`.

Only the frames from the in-point to the next keyframe (and, when a copy cannot stop exactly on
the out-point, those from the last keyframe to the out-point) are re-encoded, with the source's
codec, profile, level, pixel format and colour tags; everything between is copied packet for
packet (smart_scan plans it, smart_params matches the encoder, smart_join joins). AAC audio is
copied from the packet holding the first frame's time, the MP4 edit list skipping the samples
before it; other audio, and any audio whose channels or loudness the export changes (media.audio:
the whole clip's sound is re-encoded while the video is still copied), is re-encoded to AAC from
that time: either way it starts in sync, to the sample. The head and the tail encode at once, as
do the two decode checks. The result is checked (frame count and times, codec, profile, pixel
format, and a decode of each join without a single error) and any doubt raises SmartFallback:
the caller then re-encodes the clip in `exact` mode and reports the reason.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

import av

from marlin_desk.core.errors import Cancelled, MarlinError
from marlin_desk.media.audio import AudioPlan, filter_text
from marlin_desk.media.export_keyframes import seek_arg
from marlin_desk.media.export_run import CancelToken, run_ffmpeg
from marlin_desk.media.ffmpeg_bin import FFmpegBinary
from marlin_desk.media.presets import Preset
from marlin_desk.media.probe import VideoInfo
from marlin_desk.media.smart_join import join_video
from marlin_desk.media.smart_params import SmartFallback, encoder_args, stream_params
from marlin_desk.media.smart_scan import SMART_ENCODERS, Segment, SmartPlan, plan_smart
from marlin_desk.media.subtitle_sources import SoftTrack, soft_track_args

__all__ = ["SmartFallback", "SmartPlan", "plan_smart", "smart_blocker", "write_smart"]

_FULL_DECODE_S = 12.0  # clips up to this long are decoded whole to check them; longer: joins
_JOIN_MARGIN_S = 1.0  # seconds decoded on each side of a join


@dataclass(frozen=True)
class SmartOutcome:
    duration: float  # seconds of video written
    details: dict[str, Any]


def smart_blocker(preset: Preset, subtitles: str, info: VideoInfo,
                  binary: FFmpegBinary) -> str | None:
    """Why smart cut cannot even be tried for this clip (cheap checks), or None."""
    if preset.width is not None:
        return (f"the {preset.name} preset resizes the picture, so every frame is re-encoded")
    if subtitles == "burn":
        return "burned subtitles change every frame, so every frame is re-encoded"
    encoder = SMART_ENCODERS.get(info.video_codec)
    if encoder is None:
        return (f"the video is {info.video_codec}; smart cut re-encodes the start with the same "
                "codec and knows H.264 and HEVC only")
    if not binary.has_encoder(encoder):
        return f"the FFmpeg at {binary.path} has no {encoder} encoder to match the source"
    if info.is_vfr:
        return ("the video has a variable frame rate, so re-encoded frames cannot line up with "
                "copied ones")
    return None


def write_smart(binary: FFmpegBinary, video: str, plan: SmartPlan, info: VideoInfo,
                preset: Preset, out: Path, work: Path, *, speed: str,
                audio: AudioPlan | None = None, soft_subs: Sequence[SoftTrack] = (),
                subtitle_codec: str = "mov_text",
                subtitle_language: str = "eng",
                on_progress: Callable[[float], None] | None = None,
                cancel: CancelToken | None = None) -> SmartOutcome:
    """Write the smart cut planned by `plan` to `out` (MP4), checked; or raise SmartFallback.
    `audio` (media.audio) says how the sound is written; None: copied or re-encoded as is."""
    tb = plan.source.time_base
    n_frames = len(plan.frames)
    progress = _Stages(on_progress, sum(len(s.frames) for s in plan.segments
                                        if s.kind == "encode") + 0.1 * n_frames + 1.0)
    encoded: dict[str, Path] = {}
    jobs = []
    for name, seg in (("head", plan.head), ("tail", plan.tail)):
        if seg is None:
            continue
        encoded[name] = work / f"{name}.mp4"
        seek = plan.seek_key if name == "head" else Fraction(seg.first) * tb
        cmd = _encode_command(binary, video, plan, seg, seek, encoded[name], speed)
        jobs.append((cmd, plan.seconds(seg), f"re-encoding the {name} of the clip",
                     progress.stage(len(seg.frames))))
    # The head and the tail are short, so one encoder alone cannot keep the cores busy: both
    # run at once (progress is reported here, on the calling thread, as each one ends).
    with ThreadPoolExecutor(max_workers=2) as pool:
        running = {pool.submit(_run, cmd, secs, None, cancel, what): report
                   for cmd, secs, what, report in jobs}
        for done in as_completed(running):
            done.result()
            running[done](1.0)
    joined = work / "joined.mp4"
    join_stage = progress.stage(0.1 * n_frames)
    try:
        join_video(video, plan, encoded, joined, cancel, lambda n: join_stage(n / n_frames))
    except av.FFmpegError as exc:
        raise SmartFallback(f"joining the copied and re-encoded frames failed: {exc}") from exc
    duration = n_frames * plan.step * tb
    cmd = _mux_command(binary, video, plan, info, audio, joined, out, duration, soft_subs,
                       subtitle_codec, subtitle_language)
    _run(cmd, float(duration), progress.stage(1.0), cancel, "writing the joined clip")
    check_result(binary, out, plan)
    progress.stage(0.0)(1.0)
    details = {
        "keyframe": round(float(plan.copy.first * tb) - info.start_time, 6),
        "reencoded_head_s": round(plan.seconds(plan.head), 6),
        "copied_s": round(plan.seconds(plan.copy), 6),
        "reencoded_tail_s": round(plan.seconds(plan.tail), 6),
        "encoder": SMART_ENCODERS[plan.source.codec],
        "audio": None if not info.has_audio else "copied" if copy_audio(info, audio) else "aac",
    }
    return SmartOutcome(float(duration), details)


def _run(cmd: list[str], duration: float, on_progress: Callable[[float], None] | None,
         cancel: CancelToken | None, what: str) -> None:
    """run_ffmpeg, with a failure (not a cancel) turned into a reason to re-encode exactly."""
    try:
        run_ffmpeg(cmd, duration, on_progress, cancel)
    except Cancelled:
        raise
    except MarlinError as exc:
        raise SmartFallback(f"{what} failed: {exc}") from exc


class _Stages:
    """One 0..1 progress over stages of known weights (encoding weighs more than copying)."""

    def __init__(self, report: Callable[[float], None] | None, total: float) -> None:
        self.report, self.total, self.done = report, max(total, 1e-9), 0.0

    def stage(self, weight: float) -> Callable[[float], None]:
        """The progress callback of the next stage (the previous ones count as done)."""
        base = self.done
        self.done += weight

        def report(fraction: float) -> None:
            if self.report is not None:
                self.report(min(1.0, (base + fraction * weight) / self.total))

        return report


def _encode_command(binary: FFmpegBinary, video: str, plan: SmartPlan, seg: Segment,
                    seek: Fraction, out: Path, speed: str) -> list[str]:
    """FFmpeg re-encoding exactly the frames of `seg` (source times kept, from 0)."""
    tb = plan.source.time_base
    seek_text, seek_s = seek_arg(seek)
    start = float(seg.first * tb) - seek_s - 0.0005
    end = float((seg.frames[-1] + plan.step) * tb) - seek_s - 0.0005
    return [binary.path, "-seek_timestamp", "1", "-ss", seek_text, "-noaccurate_seek",
            "-noautorotate", "-i", _url(video), "-map", "0:V:0",
            "-vf", f"trim=start={max(0.0, start):.6f}:end={end:.6f},setpts=PTS-STARTPTS",
            "-fps_mode", "passthrough", "-enc_time_base", f"1/{tb.denominator}",
            "-c:v", *encoder_args(plan.source, speed),
            "-an", "-sn", "-dn", "-map_metadata", "-1", "-map_chapters", "-1",
            "-video_track_timescale", str(tb.denominator), "-f", "mp4", _url(str(out))]


def copy_audio(info: VideoInfo, audio: AudioPlan | None = None) -> bool:
    """Whether the audio is copied (AAC, cut on the sample by the MP4 edit list, and nothing
    asks to change it) rather than re-encoded to AAC from the first frame's time."""
    return info.audio_codec == "aac" and (audio is None or not audio.changes)


def _mux_command(binary: FFmpegBinary, video: str, plan: SmartPlan, info: VideoInfo,
                 audio: AudioPlan | None, joined: Path, out: Path, duration: Fraction,
                 soft_subs: Sequence[SoftTrack], subtitle_codec: str,
                 language: str) -> list[str]:
    """FFmpeg putting the joined video, the audio cut at the first frame's time and the soft
    subtitles into the (partial) output file."""
    cmd = [binary.path, "-i", _url(str(joined))]
    maps = ["-map", "0:v:0", "-c:v", "copy"]
    if info.has_audio and copy_audio(info, audio):
        # AAC is copied from the packet that holds the first frame's time on; the MP4 edit
        # list skips the samples before it, so the sound starts on that time to the sample.
        t0 = float(plan.zero * plan.source.time_base)
        cmd += ["-seek_timestamp", "1", "-ss", f"{t0:.6f}", "-t", f"{float(duration):.6f}",
                "-i", _url(video)]
        maps += ["-map", "1:a:0", "-c:a", "copy", "-copypriorss:a", "1"]
    elif info.has_audio:
        seek_text, seek_s = seek_arg(plan.seek_key)
        start = float(plan.zero * plan.source.time_base) - seek_s
        cmd += ["-seek_timestamp", "1", "-ss", seek_text, "-noaccurate_seek", "-i", _url(video)]
        # Shift by the first frame's time, not by the first sample's: audio that starts after
        # the in-point keeps its offset from the picture.
        chain = (f"atrim=start={max(0.0, start):.6f}:end={start + float(duration):.6f},"
                 f"asetpts=PTS-{start:.6f}/TB")
        if audio is not None and audio.filters:
            chain += "," + filter_text(audio.filters)
        maps += ["-map", "1:a:0", "-af", chain]
        encode = audio.encode if audio is not None else {
            "c:a": "aac", "profile:a": "aac_low", "b:a": "192k"}
        for key, value in encode.items():
            maps += [f"-{key}", str(value)]
    first = 2 if info.has_audio else 1
    for i, track in enumerate(soft_subs):
        cmd += ["-i", _url(str(track.path))]
        maps += ["-map", f"{first + i}:s:0"]
    if soft_subs:
        maps += ["-c:s", subtitle_codec, *soft_track_args(soft_subs, language)]
    return [*cmd, *maps, "-map_metadata", "-1", "-map_chapters", "-1",
            "-movflags", "+faststart", "-f", "mp4", _url(str(out))]


def check_result(binary: FFmpegBinary, path: Path, plan: SmartPlan) -> None:
    """SmartFallback unless `path` has the planned frames at the planned times, the source's
    codec, profile and pixel format, and decodes without an error across every join."""
    src = plan.source
    with av.open(str(path)) as c:
        stream = c.streams.video[0]
        got = stream_params(stream)
        otb = Fraction(stream.time_base)
        pts = sorted(p.pts for p in c.demux(stream) if p.pts is not None)
    for name in ("codec", "profile", "pix_fmt", "width", "height"):
        if getattr(got, name) != getattr(src, name):
            raise SmartFallback(f"the joined clip has {name} {getattr(got, name)}, the source "
                                f"{getattr(src, name)}")
    want = [(f - plan.zero) * src.time_base for f in plan.frames]
    have = [(p - pts[0]) * otb for p in pts] if pts else []
    if len(have) != len(want) or any(abs(a - b) > otb for a, b in zip(have, want, strict=True)):
        raise SmartFallback(f"the joined clip has {len(have)} frames, {len(want)} were planned "
                            "(or at other times)")
    clip_s = len(plan.frames) * plan.step * src.time_base
    if clip_s <= _FULL_DECODE_S:
        windows: list[tuple[float, float | None]] = [(0.0, None)]
    else:
        windows = []
        if plan.head is not None:
            windows.append((0.0, plan.seconds(plan.head) + _JOIN_MARGIN_S))
        if plan.tail is not None:
            t = float((plan.tail.first - plan.zero) * src.time_base) - _JOIN_MARGIN_S
            windows.append((max(0.0, t), None))
    with ThreadPoolExecutor(max_workers=2) as pool:  # two short decodes: both at once
        found = list(pool.map(lambda w: decode_errors(binary, path, *w), windows))
    for errors in found:
        if errors:
            raise SmartFallback(f"decoding the joined clip gave errors ({errors[0]})")


def decode_errors(binary: FFmpegBinary, path: Path, start: float = 0.0,
                  length: float | None = None) -> list[str]:
    """The lines FFmpeg prints at `-v error` while decoding the video of `path`."""
    cmd = [binary.path, "-hide_banner", "-nostdin", "-v", "error"]
    if start > 0:
        cmd += ["-ss", f"{start:.6f}"]
    cmd += ["-i", _url(str(path)), "-map", "0:v:0"]
    if length is not None:
        cmd += ["-t", f"{length:.6f}"]
    proc = subprocess.run([*cmd, "-f", "null", "-"], capture_output=True, text=True,
                          timeout=600, check=False)
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    if proc.returncode != 0 and not lines:
        lines = [f"FFmpeg exited with {proc.returncode}"]
    return lines


def _url(path: str) -> str:
    return "file:" + os.path.abspath(path)
