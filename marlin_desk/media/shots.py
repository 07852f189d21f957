"""Shot boundaries of a video: the times of hard cuts, found with FFmpeg's scene score.

How: one FFmpeg pass over a downscaled copy of the picture (`scale` to at most `width` pixels
wide: the score is a mean absolute difference between consecutive frames, which a cut changes
just as much at 320 px as at 1080p), `select='gt(scene,T)'` keeps the frames whose score passes
the threshold and `showinfo` logs their exact pts. Measured (bench/shots.py, 60 s of 1080p30
H.264, 2 shared cores): 4.8 s with the 320 px copy, 4.6 s at full size: decoding is the cost,
so the downscale buys no speed at 1080p; it is kept because it costs nothing measurable and
keeps the filter's share flat for 4K sources. (`-skip_loop_filter all` saved about 10 % in a
trial: not worth decoding different pixels.) The
`select` filter is in every FFmpeg build (Debian's 5.1 and imageio-ffmpeg's static 9.0 both
have it, and `scdet` too; `scdet` only logs a rounded time, so `select` + `showinfo`, which logs
the integer pts and the time base, is what gives exact frame times).

Times are VIDEO times (probe.VideoInfo): `-copyts` keeps the decoder's own timestamps, the same
ones PyAV decodes, so a cut is (pts x time base) - start_time: exactly the time of the first
frame of the new shot, as a decoder shows it.

The threshold, SCENE_THRESHOLD = 0.35: FFmpeg's documentation suggests 0.3 to 0.5. Below 0.3
fast pans, camera flashes and hand-held shake start to count as cuts; above 0.4 cuts between two
shots of the same set (a reverse angle, the same light) are missed. 0.35 keeps every hard cut of
our test material and none of the motion, and a user who wants fewer or more sets it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from marlin_desk.core.errors import Cancelled, MarlinError
from marlin_desk.media.export_run import CancelToken, run_ffmpeg
from marlin_desk.media.ffmpeg_bin import FFmpegBinary, find_ffmpeg
from marlin_desk.media.probe import VideoInfo, probe

SCENE_THRESHOLD = 0.35  # see the module docstring
ANALYSIS_WIDTH = 320  # pixels: the picture is scaled down to this width (never up)
DETECTOR = "ffmpeg-scene"
DETECTOR_VERSION = 1  # bump when the way times are computed changes: cached cuts then miss

_TIME_BASE = re.compile(r"\[Parsed_showinfo_\d+ @ [^\]]+\] config in time_base: (\d+)/(\d+)")
_FRAME = re.compile(r"\[Parsed_showinfo_\d+ @ [^\]]+\] n:\s*\d+ pts:\s*(-?\d+)")


@dataclass(frozen=True)
class ShotSettings:
    """What the cuts depend on: the detector and its parameters (part of the cache key)."""

    threshold: float = SCENE_THRESHOLD
    width: int = ANALYSIS_WIDTH

    def __post_init__(self) -> None:
        if not 0.0 < self.threshold < 1.0:
            raise ValueError(f"scene threshold {self.threshold} must be between 0 and 1")
        if self.width < 16:
            raise ValueError(f"analysis width {self.width} must be at least 16 pixels")

    def to_json(self) -> dict[str, Any]:
        return {"detector": DETECTOR, "version": DETECTOR_VERSION,
                "threshold": round(float(self.threshold), 6), "width": int(self.width)}


def filter_graph(settings: ShotSettings) -> str:
    """The -vf text: downscale (never upscale), score, keep the cuts, log their pts."""
    w = int(settings.width)
    return (f"scale='min({w},iw)':-2:flags=fast_bilinear,"
            f"select='gt(scene,{settings.threshold:g})',showinfo")


def ffmpeg_args(binary: FFmpegBinary, video: str, settings: ShotSettings) -> list[str]:
    """The whole command (run_ffmpeg adds its global options after the executable). `-v info`
    after them is what lets showinfo's lines through; -copyts keeps the source timestamps."""
    return [binary.path, "-v", "info", "-copyts", "-i", video, "-map", "0:v:0", "-an", "-sn",
            "-dn", "-vf", filter_graph(settings), "-f", "null", "-"]


def parse_cuts(lines: list[str], start_time: float) -> list[float]:
    """Cut times (video time, seconds, ascending, > 0) from showinfo's log lines."""
    tb: Fraction | None = None
    cuts: set[float] = set()
    for line in lines:
        m = _TIME_BASE.search(line)
        if m:
            tb = Fraction(int(m.group(1)), int(m.group(2)))
            continue
        m = _FRAME.search(line)
        if m and tb is not None:
            t = float(int(m.group(1)) * tb) - start_time
            if t > 1e-9:  # a "cut" at the first frame is no cut
                cuts.add(round(t, 9))
    return sorted(cuts)


def detect_shots(video: str, *, settings: ShotSettings | None = None,
                 info: VideoInfo | None = None, binary: FFmpegBinary | None = None,
                 cancel: CancelToken | None = None,
                 on_progress: Callable[[float], None] | None = None) -> list[float]:
    """The video's hard cuts: the VIDEO time of the first frame of each new shot, ascending.

    One FFmpeg pass over the whole file (bench/shots.py times it); reports fractions in [0, 1];
    raises core.errors.Cancelled when `cancel` is set and MarlinError when FFmpeg fails.
    """
    settings = settings or ShotSettings()
    info = info if info is not None else probe(video)
    binary = binary or find_ffmpeg()
    lines: list[str] = []
    try:
        run_ffmpeg(ffmpeg_args(binary, video, settings), info.duration,
                   on_progress=on_progress, cancel=cancel, stderr_lines=lines)
    except Cancelled:
        raise Cancelled("shot detection cancelled") from None
    if not any(_TIME_BASE.search(line) for line in lines):
        raise MarlinError("FFmpeg's scene detection gave no frame information (showinfo)")
    return parse_cuts(lines, info.start_time)
