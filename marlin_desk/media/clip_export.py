"""Export one clip with FFmpeg: plan, build the command, run it, place the file safely.

Why one module of over 400 lines: it is the one place that turns a ClipSpec into an FFmpeg run
and a placed file for all three modes; the mode-specific parts already live in smart_cut, audio
and presets.

Modes (presets.MODES; the default is presets.default_mode(preset)):
- `smart` (the default for the `original` preset): frame-exact like `exact`, nearly as fast as
  `fast`. Only the frames from the start to the next keyframe (and, where a copy cannot stop on
  the end, from the last keyframe to the end) are re-encoded with the source's codec and
  settings; the rest is copied (smart_cut). When the source does not allow it (another codec,
  VFR, open GOPs, a clip inside one GOP, a result that does not check out...) the clip is
  re-encoded in `exact` mode and ExportResult.fallback says why.
- `exact` (the default for presets that resize): re-encode. The first frame is the first source
  frame at or after the start and the duration is the asked one to within a frame; the presets
  (resize, crop, constant frame rate) and burned subtitles need decoded frames anyway.
- `fast`: stream copy. Nearly instant and lossless, but a copy can only begin on a keyframe, so the
  clip starts at the keyframe at or before the asked start (up to a GOP, often 2-10 s early). We
  find that keyframe first and report the real start and duration; sidecar and soft subtitles are
  shifted to them. Only the `original` preset, and no burned subtitles.

Safety: FFmpeg writes to a hidden partial name in the output folder (`-n`: it never overwrites),
and only a complete file is renamed to its final name, never over an existing file or the source.
"""

from __future__ import annotations

import os
import secrets
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from fractions import Fraction
from pathlib import Path
from typing import Any, Literal, cast

import ffmpeg

from marlin_desk.core.errors import BadInput, Cancelled, MarlinError
from marlin_desk.core.timeline import Event
from marlin_desk.core.transcript import Transcript
from marlin_desk.media import probe as _probe
from marlin_desk.media.audio import (
    AudioPlan,
    check_options,
    measure_loudness,
    output_loudness,
    plan_audio,
    with_loudnorm,
)
from marlin_desk.media.clip_subtitles import ClipSources, notes, work_files, write_sidecars
from marlin_desk.media.encoders import (
    Encoder,
    choose_encoder,
    hardware_args,
    input_args,
    upload_filters,
)
from marlin_desk.media.export_keyframes import keyframe_at_or_before, seek_arg, video_duration
from marlin_desk.media.export_run import CancelToken, run_ffmpeg
from marlin_desk.media.export_spec import ClipSpec, ExportOptions, ExportResult, validate_clip
from marlin_desk.media.ffmpeg_bin import FFmpegBinary, find_ffmpeg
from marlin_desk.media.naming import (
    place_without_overwrite,
    render_name,
    temp_name,
)
from marlin_desk.media.presets import (
    DEFAULT_MODE,
    MODES,
    SUBTITLE_MODES,
    Fill,
    Mode,
    Preset,
    apply_video_filters,
    get_preset,
    output_fps,
    video_args,
    video_codec,
)
from marlin_desk.media.probe import VideoInfo
from marlin_desk.media.reframe import DetectionSource, clip_path
from marlin_desk.media.reframe_render import MovingCrop, shot_is_cropped
from marlin_desk.media.smart_cut import (
    SmartFallback,
    SmartPlan,
    copy_audio,
    plan_smart,
    smart_blocker,
    write_smart,
)
from marlin_desk.media.subtitle_sources import (
    SoftTrack,
    check_inputs,
    clip_tracks,
    sidecar_path,
    soft_track_args,
)
from marlin_desk.media.subtitles import (
    SubtitleStyle,
    render,
    write_new_file,
)

__all__ = [  # the spec types live in export_spec; importing them from here keeps working
    "DEFAULT_MODE", "MODES", "SUBTITLE_MODES", "ClipPlan", "ClipSpec", "ExportOptions",
    "ExportResult", "build_command", "export_clip", "plan_clip", "validate_clip",
    "write_clip_subtitles",
]

# Codecs an MP4 can carry when streams are copied; anything else is copied into Matroska.
_MP4_VIDEO = {"h264", "hevc", "av1", "vp9", "mpeg4", "mpeg2video", "mjpeg"}
_MP4_AUDIO = {"aac", "mp3", "ac3", "eac3", "opus", "flac", "alac"}


@dataclass(frozen=True)
class ClipPlan:
    """Everything decided before FFmpeg starts."""

    spec: ClipSpec  # with `end` clipped to the video
    real_start: float  # video time of the first frame
    duration: float  # planned output duration
    seek: str  # FFmpeg `-ss` (absolute timestamp, with `-seek_timestamp 1`): a keyframe
    skip: float  # seconds decoded after `seek` and dropped (exact mode)
    ext: str
    muxer: str
    subtitle_codec: str
    fps: Fraction | None  # constant output rate; None for stream copy
    copy_audio: bool


def plan_clip(video: str, spec: ClipSpec, info: VideoInfo) -> ClipPlan:
    """Decide the real start, container and rates of one clip (spec already validated).

    Both modes seek FFmpeg to the keyframe at or before the start, found with PyAV: a copy can
    only start there, and an exact cut decodes from there and drops the frames before the start
    with its own `trim` filter. That is frame-exact whatever the container: FFmpeg's own seek
    lands after the start in index-less formats such as MPEG-TS, losing frames.
    """
    preset = get_preset(spec.preset)
    origin = info.start_time
    key = keyframe_at_or_before(video, origin + spec.start)
    seek, seek_s = seek_arg(key)
    if spec.mode == "fast":
        real_start = max(0.0, float(key) - origin)
        mp4_ok = info.video_codec in _MP4_VIDEO
        ext, muxer, sub_codec = (".mp4", "mp4", "mov_text") if mp4_ok else (".mkv", "matroska",
                                                                          "srt")
        copy_audio = not mp4_ok or (info.audio_codec or "") in _MP4_AUDIO
        return ClipPlan(spec, real_start, spec.end - real_start, seek, 0.0, ext, muxer,
                        sub_codec, None, copy_audio)
    # Frames reach the filters at (source time - seek). Half a millisecond of slack keeps a
    # frame that sits exactly on the start from being lost to rounding.
    skip = max(0.0, origin + spec.start - seek_s - 0.0005)
    return ClipPlan(spec, spec.start, spec.end - spec.start, seek, skip, ".mp4", "mp4",
                    "mov_text", output_fps(info, preset), False)


def output_size(info: VideoInfo, spec: ClipSpec) -> tuple[int, int]:
    """Width and height of the re-encoded output (displayed size, square pixels, even)."""
    preset = get_preset(spec.preset)
    if preset.width and preset.height:
        return preset.width, preset.height
    sar = info.sample_aspect_ratio if info.sample_aspect_ratio > 0 else 1.0
    return int(info.width * sar) // 2 * 2, info.height // 2 * 2


def build_command(binary: FFmpegBinary, video: str, plan: ClipPlan, info: VideoInfo,
                  out_path: Path, options: ExportOptions, *,
                  soft_subs: Sequence[SoftTrack] = (), burn_subs: Path | None = None,
                  encoder: Encoder | None = None, audio: AudioPlan | None = None,
                  crop: MovingCrop | None = None) -> list[str]:
    """The FFmpeg argument list (executable first) writing `out_path`; a re-encode uses
    `encoder` (a hardware one from media.encoders) or, when None, libx264/libx265. `audio`
    (media.audio) says how the sound is written; None: as the options ask, no loudness.
    `crop`: the reframing crop (media.reframe_render), rendered frame by frame."""
    spec = plan.spec
    preset = get_preset(spec.preset)
    if audio is None:
        audio = audio_plan(preset, info, options, loudness=False)
    in_args: dict[str, Any] = {"seek_timestamp": 1, "ss": plan.seek}
    if plan.fps is not None:
        in_args["noaccurate_seek"] = None  # our own trim cuts, the same on every FFmpeg version
    src = ffmpeg.input(_url(video), **in_args)
    streams: list[Any] = []
    out_args: dict[str, Any] = {"t": f"{plan.duration:.6f}", "f": plan.muxer,
                                "map_chapters": -1}
    if plan.muxer in ("mp4", "mov"):
        out_args["movflags"] = "+faststart"
    if plan.fps is None:  # stream copy
        streams.append(src["v:0"])
        out_args["c:v"] = "copy"
        if info.has_audio and plan.copy_audio and not audio.changes:
            streams.append(src["a:0"])
            out_args["c:a"] = "copy"
        elif info.has_audio:  # the video is still copied; the sound is re-encoded
            streams.append(_audio_filters(src["a:0"], audio))
            out_args.update(audio.encode)
    else:
        fill = (spec.fill or preset.fill) if crop is None else (crop.fill_elsewhere or "crop")
        v = src["v:0"].filter("trim", start=f"{plan.skip:.6f}").filter("setpts", "PTS-STARTPTS")
        crop_xy = None if crop is None else crop.expressions(float(plan.fps))
        when = None if crop is None else crop.cropped_when(float(plan.fps))
        v = apply_video_filters(v, preset, cast(Fill, fill), plan.fps, crop_xy, when)
        if burn_subs is not None:
            v = v.filter("subtitles", filename=str(burn_subs))
        codec = video_codec(info, preset, binary.has_encoder("libx265"))
        v_args = video_args(preset, codec, plan.fps, options.speed)
        if encoder is not None and encoder.is_hardware:
            for name, opts in upload_filters(encoder.family):
                v = v.filter(name, **opts)
            v_args = hardware_args(v_args, encoder, "hevc" if codec == "libx265" else "h264")
        streams.append(v)
        out_args.update(v_args)
        out_args["max_muxing_queue_size"] = 1024
        if info.has_audio:
            streams.append(_audio_filters(src["a:0"].filter("atrim", start=f"{plan.skip:.6f}")
                                          .filter("asetpts", "PTS-STARTPTS"), audio))
            out_args.update(audio.encode)
    for track in soft_subs:
        streams.append(ffmpeg.input(_url(str(track.path)))["s:0"])
        out_args["c:s"] = plan.subtitle_codec
    out = ffmpeg.output(*streams, _url(str(out_path)), **out_args)
    cmd = list(ffmpeg.compile(out, cmd=binary.path))
    # Per-stream titles repeat option names, which ffmpeg-python's keywords cannot: before the
    # output file (the last argument).
    cmd[-1:-1] = soft_track_args(soft_subs, options.subtitle_language)
    # The encoder's global options (a VAAPI device) go first, before any input or filter.
    return [cmd[0], *(input_args(encoder.family) if encoder else []), *cmd[1:]]


def audio_plan(preset: Preset, info: VideoInfo, options: ExportOptions, *,
               loudness: bool = True) -> AudioPlan:
    """The clip's audio as the options ask (loudness still to be measured: with_loudnorm)."""
    return plan_audio(preset, info, channels=options.audio_channels, kbps=options.audio_kbps,
                      loudness=options.loudness if loudness else None)


def _audio_filters(stream: Any, audio: AudioPlan) -> Any:
    for name, opts in audio.filters:
        stream = stream.filter(name, **opts)
    return stream


def _url(path: str) -> str:
    """An absolute `file:` URL: names starting with `-` or holding `:` are never misread."""
    return "file:" + os.path.abspath(path)


def export_clip(video: str | os.PathLike[str], spec: ClipSpec, options: ExportOptions, *,
                index: int = 1, events: Sequence[Event] | None = None,
                transcript: Transcript | None = None, info: VideoInfo | None = None,
                binary: FFmpegBinary | None = None,
                on_progress: Callable[[float], None] | None = None,
                cancel: CancelToken | None = None,
                detections: DetectionSource | None = None) -> ExportResult:
    """Export one clip; returns a `done` result or raises Cancelled / MarlinError / BadInput.

    `events` (video time) are needed for subtitles from the events, `transcript` for subtitles
    from the speech (options.subtitle_source) and for captions. A cancel or failure leaves no
    file under the final name (the partial file is deleted). `detections` gives a reframed
    clip's subject detections (workflows.reframe's cache); else they are made here.
    """
    t0 = time.monotonic()
    video = os.path.abspath(os.fspath(video))
    info = info or _probe.probe(video)
    spec = validate_clip(spec, info)
    check_options(options.loudness, options.audio_channels, options.audio_kbps)
    binary = binary or find_ffmpeg()
    check_inputs(spec.subtitles, options.subtitle_source, spec.captions,
                 has_events=events is not None, has_transcript=transcript is not None)
    _check_tools(binary, spec)
    out_dir = Path(os.path.abspath(options.out_dir))
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise BadInput(f"cannot create the output folder {out_dir}: "
                       f"{exc.strerror or exc}") from None
    rising = _Rising(on_progress)
    crop, reframe = _reframe(video, info, spec, detections, rising, cancel)
    job = _Job(video, info, binary, options, index, ClipSources(events, transcript), out_dir,
               rising if crop is None else (lambda f: rising(_DETECT_SHARE
                                                             + (1 - _DETECT_SHARE) * f)),
               cancel, crop)
    fallback = None
    if spec.mode == "smart":
        fallback = ("burned captions change every frame, so every frame is re-encoded"
                    if spec.captions else
                    smart_blocker(get_preset(spec.preset), spec.subtitles, info, binary))
        if fallback is None:
            try:
                result = job.write(spec, "smart", plan_smart(video, info, spec.start, spec.end))
            except SmartFallback as exc:
                fallback = str(exc)
            else:
                result.seconds = time.monotonic() - t0
                result.reframe = reframe
                return result
    result = job.write(spec, "fast" if spec.mode == "fast" else "exact")
    result.fallback = fallback
    result.reframe = reframe
    result.seconds = time.monotonic() - t0
    return result


# The share of a reframed clip's progress bar that the subject detection fills (it costs about
# a fifth of the encode: bench/reframe.py).
_DETECT_SHARE = 0.2


def _reframe(video: str, info: VideoInfo, spec: ClipSpec, detections: DetectionSource | None,
             progress: Callable[[float], None], cancel: CancelToken | None,
             ) -> tuple[MovingCrop | None, dict[str, Any] | None]:
    """The clip's moving crop or None (the preset's own picture), and its report."""
    if spec.mode == "fast":
        return None, None
    preset = get_preset(spec.preset)
    fill = spec.fill or preset.fill
    path, first, report = clip_path(
        video, info, spec.start, spec.end, preset, fill, spec.reframe,
        spec.pins, detections=detections, cancel=cancel,
        on_progress=lambda f: progress(_DETECT_SHARE * f))
    if path is None or path.axis is None or first is None:
        return None, report
    cropped = [shot_is_cropped(path, shot) for shot in path.shots]
    if not any(cropped):
        return None, report  # nobody found: the preset's own picture (the centre crop)
    return MovingCrop(path, first, None if fill == "crop" or all(cropped) else fill), report


@dataclass
class _Job:
    """One clip's export, shared by the smart attempt and the exact or fast run."""

    video: str
    info: VideoInfo
    binary: FFmpegBinary
    options: ExportOptions
    index: int
    sources: ClipSources
    out_dir: Path
    on_progress: Callable[[float], None]
    cancel: CancelToken | None
    crop: MovingCrop | None = None  # the reframing crop (media.reframe_render)

    def write(self, spec: ClipSpec, mode: Mode, smart: SmartPlan | None = None) -> ExportResult:
        """Write the clip in `mode` (smart needs its plan) and place it under its final name."""
        info, options = self.info, self.options
        plan = plan_clip(self.video, replace(spec, mode=mode if mode == "fast" else "exact"), info)
        if smart is not None:
            plan = replace(plan, duration=float(len(smart.frames) * smart.step
                                                * smart.source.time_base))
        final = self.out_dir / render_name(
            options.name_template, video=self.video, index=self.index,
            description=spec.description, start=plan.real_start,
            end=plan.real_start + plan.duration, preset=spec.preset, mode=mode, ext=plan.ext)
        tmp = temp_name(final, secrets.token_hex(4))
        fps = float(plan.fps) if plan.fps else (info.fps or 24.0)
        details = None
        used: Encoder | None = None
        audio = self._audio(spec, plan)
        try:
            with tempfile.TemporaryDirectory(prefix="marlin-export-") as work:
                files = work_files(spec, options, self.sources, plan.real_start,
                                   plan.duration, output_size(info, spec), fps, Path(work))
                soft, burn = files.soft, files.burn
                if smart is not None:
                    details = write_smart(
                        self.binary, self.video, smart, info, get_preset(spec.preset), tmp,
                        Path(work), speed=options.speed, audio=audio, soft_subs=soft,
                        subtitle_codec=plan.subtitle_codec,
                        subtitle_language=options.subtitle_language,
                        on_progress=self.on_progress, cancel=self.cancel).details
                    used = Encoder(details["encoder"], "x264", "smart cut matches the source "
                                   "with the software encoder of its codec")
                else:
                    used = self._run(spec, plan, tmp, soft, burn, audio)
            real_duration = video_duration(str(tmp))
            audio_json = self._audio_result(audio, plan, mode, tmp)
            try:
                path = place_without_overwrite(tmp, final)
            except OSError as exc:
                raise MarlinError(f"cannot name the finished clip {final.name} in "
                                  f"{self.out_dir}: {exc.strerror or exc}") from None
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
        result = ExportResult(self.index, spec, "done", path, plan.real_start, real_duration,
                              mode_used=mode, smart=details,
                              encoder=None if used is None else used.to_json(),
                              audio=audio_json)
        sidecars, note = write_sidecars(spec, options, self.sources, path, plan.real_start,
                                        real_duration, fps)
        result.subtitle_paths, result.subtitle_path = sidecars, next(iter(sidecars), None)
        result.subtitle_note = notes(files.note, note)
        return result

    def _audio(self, spec: ClipSpec, plan: ClipPlan) -> AudioPlan:
        """How the clip's sound is written; with a loudness target, its first loudnorm pass
        (a decode of the clip's audio only) measures the span the clip will hold."""
        audio = audio_plan(get_preset(spec.preset), self.info, self.options)
        if audio.loudness is None:
            return audio
        measured = measure_loudness(self.binary, self.video,
                                    start=self.info.start_time + plan.real_start,
                                    duration=plan.duration, filters=audio.filters,
                                    target=audio.loudness["target"], cancel=self.cancel)
        return with_loudnorm(audio, measured)

    def _audio_result(self, audio: AudioPlan, plan: ClipPlan, mode: Mode,
                      path: Path) -> dict[str, Any] | None:
        """What the result says about the sound; a normalised clip's loudness is measured."""
        if not audio.has_audio:
            return {**audio.to_json(), "codec": None}
        copied = (copy_audio(self.info, audio) if mode == "smart" else
                  mode == "fast" and plan.copy_audio and not audio.changes)
        doc = {**audio.to_json(), "codec": "copy" if copied else "aac"}
        if audio.loudness is not None:
            doc["loudness"] = {**audio.loudness, "output": output_loudness(
                self.binary, str(path), audio.loudness["target"], self.cancel)}
        return doc

    def _run(self, spec: ClipSpec, plan: ClipPlan, tmp: Path, soft: Sequence[SoftTrack],
             burn: Path | None, audio: AudioPlan) -> Encoder | None:
        """Run the exact or fast FFmpeg command; a hardware encoder that fails is replaced by
        the software one. Returns the encoder that wrote the file (None for a copy)."""
        encoder = None
        if plan.fps is not None:
            software = video_codec(self.info, get_preset(spec.preset),
                                   self.binary.has_encoder("libx265"))
            encoder = choose_encoder(self.binary, software, self.options.encoder)
        cmd = build_command(self.binary, self.video, plan, self.info, tmp, self.options,
                            soft_subs=soft, burn_subs=burn, encoder=encoder, audio=audio,
                            crop=self.crop)
        try:
            run_ffmpeg(cmd, plan.duration, self.on_progress, self.cancel)
        except Cancelled:
            raise
        except MarlinError as exc:
            if encoder is None or not encoder.is_hardware:
                raise
            tmp.unlink(missing_ok=True)
            encoder = Encoder(software, "x264", f"{encoder.name} failed ({exc}); using "
                                                f"{software}")
            cmd = build_command(self.binary, self.video, plan, self.info, tmp, self.options,
                                soft_subs=soft, burn_subs=burn, encoder=encoder,
                                audio=audio, crop=self.crop)
            run_ffmpeg(cmd, plan.duration, self.on_progress, self.cancel)
        return encoder


class _Rising:
    """Progress that never goes back (a smart attempt that falls back to exact restarts)."""

    def __init__(self, report: Callable[[float], None] | None) -> None:
        self.report = report
        self.last = -1.0

    def __call__(self, fraction: float) -> None:
        if self.report is not None and fraction > self.last:
            self.last = fraction
            self.report(fraction)


def write_clip_subtitles(events: Sequence[Event], clip_path: Path, fmt: Literal["srt", "vtt"],
                         real_start: float, real_duration: float, style: SubtitleStyle,
                         fps: float) -> Path | None:
    """The events' sidecar subtitle file beside a clip, in clip time; returns its path, or None
    when no event overlaps the clip (an empty file would only look like a broken one)."""
    (track,) = clip_tracks("events", real_start, real_duration, style, fps, events=events)
    if not track.cues:
        return None
    return write_new_file(sidecar_path(clip_path, "events", fmt, False), render(track.cues, fmt))


def _check_tools(binary: FFmpegBinary, spec: ClipSpec) -> None:
    if spec.mode != "fast" and not binary.has_encoder("libx264"):
        raise MarlinError(f"the FFmpeg at {binary.path} has no libx264 encoder: install a full "
                          "FFmpeg build or set MARLIN_DESK_FFMPEG")
    if (spec.subtitles == "burn" or spec.captions) and not binary.has_filter("subtitles"):
        raise MarlinError(f"the FFmpeg at {binary.path} was built without libass, so it cannot "
                          "burn subtitles: choose soft or sidecar subtitles")
