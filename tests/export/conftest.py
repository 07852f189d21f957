"""Test videos for the export tests, made once per session with the FFmpeg CLI (lavfi).

Small and short on purpose (320x240, a few seconds) so the whole folder runs in about a minute
on two cores; the presets still encode at their full 1080p sizes.
"""

from __future__ import annotations

import hashlib
import subprocess
from collections.abc import Iterator
from dataclasses import astuple, dataclass
from pathlib import Path

import pytest

from marlin_desk.media.ffmpeg_bin import find_ffmpeg
from marlin_desk.media.probe import probe

FPS = 25
GOP = 50  # a keyframe every 2 s: fast mode has something to snap to


@dataclass(frozen=True)
class Videos:
    main: Path  # 320x240, 25 fps, 8 s, AAC stereo 44.1 kHz, keyframes at 0, 2, 4, 6 s
    rotated: Path  # coded 320x240, a display matrix turning it to 240x320, 2 s
    vfr: Path  # irregular frame times (average about 14 fps), 3 s, no audio
    no_audio: Path  # 320x240, 2 s, video only
    anamorphic: Path  # 320x240 with SAR 4:3 (displayed 426x240), 1 s
    long: Path  # 64x64, 5 fps, 45 s: for chapters
    ts: Path  # MPEG-TS (no seek index) whose timestamps start at 11.4 s, 4 s, with audio


def _ffmpeg(*args: str) -> None:
    subprocess.run([find_ffmpeg().path, "-v", "error", "-y", *args], check=True)


def _x264(gop: int = GOP) -> list[str]:
    return ["-c:v", "libx264", "-preset", "veryfast", "-pix_fmt", "yuv420p", "-g", str(gop),
            "-keyint_min", str(gop), "-sc_threshold", "0"]


def _src(size: str, dur: float, fps: int = FPS) -> list[str]:
    return ["-f", "lavfi", "-i", f"testsrc2=s={size}:r={fps}:d={dur}"]


def _sine(dur: float) -> list[str]:
    return ["-f", "lavfi", "-i", f"sine=frequency=440:sample_rate=44100:duration={dur}"]


def _rotated(out: Path, work: Path) -> None:
    plain = work / "plain.mp4"
    _ffmpeg(*_src("320x240", 2), *_sine(2), *_x264(), "-c:a", "aac", "-ac", "2", str(plain))
    # FFmpeg 5.1 turns the `rotate` tag into a display matrix on stream copy; 6.0+ has
    # -display_rotation instead. Try both, keep whichever really rotates.
    try:
        _ffmpeg("-i", str(plain), "-c", "copy", "-metadata:s:v:0", "rotate=90", str(out))
        if probe(str(out)).rotation:
            return
    except subprocess.CalledProcessError:
        pass
    _ffmpeg("-display_rotation", "90", "-i", str(plain), "-c", "copy", str(out))


@pytest.fixture(scope="session")
def videos(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Videos]:
    d = tmp_path_factory.mktemp("export-src")
    v = Videos(d / "main.mp4", d / "rotated.mp4", d / "vfr.mp4", d / "no_audio.mp4",
               d / "anamorphic.mp4", d / "long.mp4", d / "offset.ts")
    _ffmpeg(*_src("320x240", 8), *_sine(8), *_x264(), "-bf", "2", "-c:a", "aac", "-ac", "2",
            "-shortest", str(v.main))
    _rotated(v.rotated, d)
    _ffmpeg(*_src("320x240", 3, 30), "-vf", r"select='not(mod(n\,3))+not(mod(n\,5))'",
            "-fps_mode", "vfr", *_x264(30), str(v.vfr))
    _ffmpeg(*_src("320x240", 2), *_x264(), str(v.no_audio))
    _ffmpeg(*_src("320x240", 1), "-vf", "setsar=4/3", *_x264(), str(v.anamorphic))
    _ffmpeg(*_src("64x64", 45, 5), *_x264(10), str(v.long))
    _ffmpeg(*_src("320x240", 4), *_sine(4), *_x264(), "-c:a", "aac", "-output_ts_offset", "10",
            str(v.ts))
    before = {p: _sha256(p) for p in astuple(v)}
    yield v
    # Every export of the session read these files: none may have changed.
    assert {p: _sha256(p) for p in astuple(v)} == before


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()
