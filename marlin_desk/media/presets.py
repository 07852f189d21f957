"""Export presets: the output size, codecs and encoder settings of each destination.

Every re-encoding preset gives square pixels (SAR 1:1), even width and height (4:2:0 chroma needs
them), a constant frame rate (variable-rate phone footage is resampled with the `fps` filter),
yuv420p and `+faststart` (the index first, so uploads and web players start at once). Rotation is
honoured by FFmpeg's autorotate, which turns the frames upright before our filters see them, so
the filters below work on displayed sizes.

Sources: YouTube's "Recommended upload encoding settings" (H.264 High, progressive, closed GOP of
half the frame rate, 4:2:0, AAC-LC 48 kHz stereo, moov at the front; 8 Mbps for 1080p up to 30 fps,
12 Mbps above); Instagram Reels / YouTube Shorts / TikTok all take 1080x1920 H.264 + AAC.
Audio keeps the source's channel layout (every platform takes mono AAC; upmixing it to stereo
only cost 3 dB, issue #20 defect 10): the social presets bring more than two channels down to
stereo and resample to 48 kHz. ExportOptions.audio_channels asks for mono or stereo (media.audio).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, Any, Literal

from marlin_desk.core.errors import BadInput

if TYPE_CHECKING:  # kept light: the CLI reads the choices below without loading PyAV
    from marlin_desk.media.probe import VideoInfo

Fill = Literal["crop", "blur", "pad"]
FILLS: tuple[str, ...] = ("crop", "blur", "pad")

# Export modes (clip_export says what each does) and subtitle choices: the one list the CLI and
# the GUI read. `smart` is the default where the picture is kept as it is (the `original`
# preset); presets that resize or crop re-encode every frame anyway, so they default to `exact`.
Mode = Literal["exact", "smart", "fast"]
SubtitleMode = Literal["none", "srt", "vtt", "soft", "burn"]
MODES: tuple[str, ...] = ("exact", "smart", "fast")
MODE_LABELS: dict[str, str] = {
    "exact": "Exact (re-encode everything, frame-accurate)",
    "smart": "Smart (re-encode to the first keyframe, copy the rest; frame-accurate)",
    "fast": "Fast (copy streams, starts on a keyframe)",
}
SUBTITLE_MODES: tuple[str, ...] = ("none", "srt", "vtt", "soft", "burn")
DEFAULT_MODE: Mode = "smart"


@dataclass(frozen=True)
class Preset:
    """What one destination needs. `width`/`height` None keeps the source size."""

    name: str
    label: str
    width: int | None
    height: int | None
    fill: Fill  # the default way to reach a different aspect ratio
    profile: str | None  # H.264 profile; None: the encoder's choice for the codec family
    max_fps: float | None
    gop_seconds: float  # keyframe interval
    maxrate_kbps: int | None  # caps the bit rate (and lets us estimate the size)
    audio_rate: int | None  # None keeps the source sample rate
    max_audio_channels: int | None  # more are downmixed to this many; None keeps them all
    audio_kbps: int = 192


PRESETS: dict[str, Preset] = {
    "original": Preset("original", "Original (same size and codec family)", None, None, "pad",
                       None, None, 2.0, None, None, None),
    "youtube": Preset("youtube", "YouTube 16:9 1080p", 1920, 1080, "pad", "high", 60.0, 0.5,
                      12_000, 48_000, 2),
    "reels": Preset("reels", "Reels / Shorts / TikTok 9:16 1080x1920", 1080, 1920, "crop", "high",
                    60.0, 2.0, 10_000, 48_000, 2),
    "square": Preset("square", "Square 1:1 1080x1080", 1080, 1080, "crop", "high", 60.0, 2.0,
                     8_000, 48_000, 2),
}
# The presets whose fill the export can choose (crop or blur); the others keep their own.
FILLED_PRESETS = ("reels", "square")

# Frame rates a constant-rate output snaps to when the source's average is within 1% of one.
_STANDARD_RATES = [Fraction(24000, 1001), Fraction(24), Fraction(25), Fraction(30000, 1001),
                   Fraction(30), Fraction(48), Fraction(50), Fraction(60000, 1001), Fraction(60)]

# x264 speed. `ultrafast` silently drops to Constrained Baseline whatever profile is asked for, so
# it is refused; `veryfast` keeps High profile and is about 3x faster than `medium`.
X264_SPEEDS = ("superfast", "veryfast", "faster", "fast", "medium", "slow", "slower", "veryslow")
DEFAULT_SPEED = "veryfast"


def default_mode(preset: str) -> Mode:
    """The mode an export uses unless told otherwise: smart for presets that keep the source
    picture (it falls back to exact, with the reason, when the source does not allow it),
    exact for presets that resize or crop."""
    keeps_picture = get_preset(preset).width is None
    return DEFAULT_MODE if keeps_picture else "exact"


def get_preset(name: str) -> Preset:
    try:
        return PRESETS[name]
    except KeyError:
        raise BadInput(f"unknown preset {name!r}; use one of {', '.join(PRESETS)}") from None


def output_fps(info: VideoInfo, preset: Preset) -> Fraction:
    """The constant frame rate of a re-encoded clip: the source's, snapped to a standard rate."""
    fps = info.fps if info.fps and info.fps > 0 else 30.0
    if preset.max_fps and fps > preset.max_fps * 1.01:
        fps = preset.max_fps
    nearest = min(_STANDARD_RATES, key=lambda r: abs(fps - float(r)))
    if abs(fps - float(nearest)) <= 0.01 * float(nearest):
        return nearest
    return Fraction(fps).limit_denominator(1001)


def video_codec(info: VideoInfo, preset: Preset, has_x265: bool) -> str:
    """H.264 everywhere, except that `original` keeps HEVC sources in HEVC when x265 exists."""
    if preset.name == "original" and info.video_codec in ("hevc", "h265") and has_x265:
        return "libx265"
    return "libx264"


def apply_video_filters(stream: Any, preset: Preset, fill: Fill, fps: Fraction,
                        crop_xy: tuple[str, str] | None = None,
                        cropped_when: str | None = None) -> Any:
    """The filter chain (ffmpeg-python nodes) from the decoded, upright frames to the output.
    `crop_xy`: x and y expressions of a moving crop (media.reframe_render); with the blur or
    pad fill, `cropped_when` (an `enable` expression) says which frames get that crop, the
    others keep the fill."""
    stream = stream.filter("fps", fps=str(fps))
    # Square pixels and even sizes first: all later arithmetic can assume SAR 1:1.
    stream = stream.filter("scale", w="trunc(iw*sar/2)*2", h="trunc(ih/2)*2")
    stream = stream.filter("setsar", "1")
    if preset.width and preset.height:
        stream = _fit(stream, preset.width, preset.height, fill, crop_xy, cropped_when)
    return stream.filter("setsar", "1")


def _fit(stream: Any, w: int, h: int, fill: Fill,
         crop_xy: tuple[str, str] | None = None, cropped_when: str | None = None) -> Any:
    if fill != "crop" and crop_xy is not None and cropped_when is not None:
        # Both pictures, the cropped one laid over the fill where a subject was found. Costs
        # both chains on every frame, only for clips that mix the two.
        import ffmpeg

        parts = stream.split()
        base = _fit(parts[0], w, h, fill)
        moving = _fit(parts[1], w, h, "crop", crop_xy)
        return ffmpeg.overlay(base, moving, x=0, y=0, enable=cropped_when)
    if fill == "crop":
        # Crop to the target aspect first (cheaper than scaling the whole frame): the centre,
        # or where the reframing path puts the window at each frame.
        where = {} if crop_xy is None else {"x": crop_xy[0], "y": crop_xy[1]}
        stream = stream.filter("crop", w=f"trunc(min(iw,ih*{w}/{h})/2)*2",
                               h=f"trunc(min(ih,iw*{h}/{w})/2)*2", **where)
        return stream.filter("scale", w, h)
    fg_src = stream
    if fill == "blur":
        parts = stream.split()
        fg_src = parts[1]
        # Blur at quarter size: the same look for a fraction of the cost.
        bg = (parts[0].filter("scale", w // 4, h // 4, force_original_aspect_ratio="increase")
              .filter("crop", w // 4, h // 4)
              .filter("boxblur", luma_radius=12, luma_power=2)
              .filter("scale", w, h))
    fg = fg_src.filter("scale", w, h, force_original_aspect_ratio="decrease",
                       force_divisible_by=2)
    if fill == "pad":
        return fg.filter("pad", w, h, "(ow-iw)/2", "(oh-ih)/2", color="black")
    import ffmpeg  # local: only this branch needs the module-level overlay function

    return ffmpeg.overlay(bg, fg, x="trunc((W-w)/4)*2", y="trunc((H-h)/4)*2")


def video_args(preset: Preset, codec: str, fps: Fraction, speed: str) -> dict[str, Any]:
    """Encoder options for the video stream."""
    if speed not in X264_SPEEDS:
        raise BadInput(f"unknown encoder speed {speed!r}; use one of {', '.join(X264_SPEEDS)}")
    gop = max(1, round(float(fps) * preset.gop_seconds))
    args: dict[str, Any] = {"c:v": codec, "preset": speed, "crf": 18 if codec == "libx264" else 22,
                            "pix_fmt": "yuv420p", "g": gop, "flags": "+cgop"}
    if codec == "libx264":
        args["profile:v"] = preset.profile or "high"
        args["bf"] = 2
    else:
        args["tag:v"] = "hvc1"  # Apple players need this tag for HEVC in MP4
        args["x265-params"] = "log-level=error"
    if preset.maxrate_kbps:
        args["maxrate"] = f"{preset.maxrate_kbps}k"
        args["bufsize"] = f"{preset.maxrate_kbps * 2}k"
    return args


def estimated_kbps(preset: Preset, info: VideoInfo, source_kbps: float) -> float:
    """A generous bit-rate guess for the free-space check (capped presets use their cap)."""
    video = preset.maxrate_kbps or max(source_kbps * 1.5, 4000.0)
    return video + (preset.audio_kbps if info.has_audio else 0)
