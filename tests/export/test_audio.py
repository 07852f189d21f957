"""Audio of exported clips: the level and the channel layout are kept (issue #20 defect 10: a
mono source came out stereo and 3 dB quieter in the Reels preset), the channels can be chosen,
and loudness normalisation lands on its target. Checked with FFmpeg's own meters, not the code."""

from __future__ import annotations

import json
import re
import subprocess
import threading
from pathlib import Path

import pytest

from marlin_desk.cli.main import main
from marlin_desk.core.errors import BadInput, Cancelled
from marlin_desk.media.audio import parse_channels, parse_loudness
from marlin_desk.media.clip_export import ClipSpec, ExportOptions, export_clip
from marlin_desk.media.ffmpeg_bin import find_ffmpeg

from .conftest import FPS, Videos

LEVEL_DB = -17.0  # a sine of amplitude 0.2: RMS 0.2/sqrt(2) = -17.0 dBFS


def _ffmpeg(*args: str) -> None:
    subprocess.run([find_ffmpeg().path, "-v", "error", "-y", *args], check=True)


def _source(path: Path, layout: str, amp: float = 0.2, dur: float = 3.0) -> Path:
    """x264 video with an AAC tone of a known level, the same in every channel."""
    chans = 1 if layout == "mono" else 2
    expr = "|".join([f"{amp}*sin(2*PI*440*t)"] * chans)
    _ffmpeg("-f", "lavfi", "-i", f"testsrc2=s=160x120:r={FPS}:d={dur}",
            "-f", "lavfi", "-i", f"aevalsrc={expr}:s=44100:d={dur}",
            "-c:v", "libx264", "-preset", "veryfast", "-pix_fmt", "yuv420p", "-g", str(FPS),
            "-bf", "2", "-c:a", "aac", "-b:a", "128k", "-shortest", str(path))
    return path


@pytest.fixture(scope="module")
def mono(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _source(tmp_path_factory.mktemp("audio") / "mono.mp4", "mono")


@pytest.fixture(scope="module")
def stereo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _source(tmp_path_factory.mktemp("audio") / "stereo.mp4", "stereo")


def _volume(path: Path) -> tuple[int, float]:
    """(channels, mean volume in dB) of the first audio stream, by volumedetect."""
    proc = subprocess.run([find_ffmpeg().path, "-hide_banner", "-nostdin", "-i", str(path),
                           "-map", "0:a:0", "-af", "volumedetect", "-f", "null", "-"],
                          capture_output=True, text=True, check=True)
    mean = float(re.search(r"mean_volume: (-?[\d.]+) dB", proc.stderr).group(1))
    chans = re.search(r"Audio: [^\n]*?, (mono|stereo|(\d+) channels)", proc.stderr)
    n = {"mono": 1, "stereo": 2}.get(chans.group(1)) or int(chans.group(2))
    return n, mean


def _lufs(path: Path) -> float:
    """Integrated loudness of the file's audio (EBU R128, FFmpeg's ebur128 meter)."""
    proc = subprocess.run([find_ffmpeg().path, "-hide_banner", "-nostdin", "-i", str(path),
                           "-map", "0:a:0", "-af", "ebur128", "-f", "null", "-"],
                          capture_output=True, text=True, check=True)
    return float(re.findall(r"I:\s+(-?[\d.]+) LUFS", proc.stderr)[-1])


def test_source_level_is_what_the_tests_assume(mono: Path) -> None:
    assert _volume(mono) == (1, pytest.approx(LEVEL_DB, abs=0.3))


@pytest.mark.parametrize(("preset", "mode"), [("original", "smart"), ("original", "exact"),
                                              ("original", "fast"), ("youtube", "exact"),
                                              ("reels", "exact"), ("square", "exact")])
def test_mono_keeps_its_level_and_layout(mono: Path, out_dir: Path, preset: str,
                                         mode: str) -> None:
    r = export_clip(mono, ClipSpec(0.5, 1.7, preset=preset, mode=mode), ExportOptions(out_dir))
    channels, mean = _volume(r.path)
    assert channels == 1
    assert mean == pytest.approx(_volume(mono)[1], abs=0.5)


def test_stereo_stays_stereo_and_can_become_mono_at_the_same_level(stereo: Path,
                                                                   out_dir: Path) -> None:
    level = _volume(stereo)[1]
    r = export_clip(stereo, ClipSpec(0.5, 1.7, preset="reels"), ExportOptions(out_dir))
    assert _volume(r.path) == (2, pytest.approx(level, abs=0.5))
    r = export_clip(stereo, ClipSpec(0.5, 1.7, mode="exact"),
                    ExportOptions(out_dir, audio_channels=1))
    assert _volume(r.path) == (1, pytest.approx(level, abs=0.5))


def test_mono_to_stereo_on_request_keeps_the_level(mono: Path, out_dir: Path) -> None:
    r = export_clip(mono, ClipSpec(0.5, 1.7, mode="smart"),
                    ExportOptions(out_dir, audio_channels=2))
    assert r.mode_used == "smart"  # the video is still copied; only the audio is re-encoded
    assert _volume(r.path) == (2, pytest.approx(LEVEL_DB, abs=0.5))


@pytest.mark.parametrize("mode", ["smart", "exact"])
def test_loudness_lands_on_the_target(stereo: Path, out_dir: Path, mode: str) -> None:
    r = export_clip(stereo, ClipSpec(0.0, 3.0, mode=mode), ExportOptions(out_dir, loudness=-14))
    assert r.mode_used == mode
    assert _lufs(r.path) == pytest.approx(-14.0, abs=1.0)
    loud = r.audio["loudness"]
    assert loud["target"] == -14 and loud["method"].startswith("two-pass")
    assert loud["input"]["I"] == pytest.approx(_lufs(stereo), abs=1.0)
    assert loud["output"]["I"] == pytest.approx(-14.0, abs=1.0)
    assert loud["output"]["TP"] <= -1.0 + 0.3  # true-peak limit
    assert _volume(r.path)[0] == 2


def test_loudness_is_skipped_with_a_note_without_audio(videos: Videos, stereo: Path,
                                                       tmp_path: Path, out_dir: Path) -> None:
    r = export_clip(videos.no_audio, ClipSpec(0.0, 1.0, mode="exact"),
                    ExportOptions(out_dir, loudness=-14))
    assert r.status == "done" and r.audio["loudness"] is None and "no audio" in r.audio["note"]
    silent = tmp_path / "silent.mp4"
    _source(silent, "mono", amp=0.0, dur=2.0)
    r = export_clip(silent, ClipSpec(0.0, 1.5, mode="exact"), ExportOptions(out_dir,
                                                                            loudness=-14))
    assert r.status == "done" and r.audio["loudness"] is None and "silent" in r.audio["note"]
    assert _volume(r.path)[0] == 1


def test_cli_loudness_and_channels(mono: Path, out_dir: Path, capsys) -> None:
    rc = main(["export", str(mono), "--clip", "0-3", "--mode", "exact", "--loudness", "-16",
               "--audio-channels", "keep", "--out", str(out_dir), "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert rc == 0
    clip = doc["clips"][0]
    assert clip["audio"]["channels"] == 1
    assert clip["audio"]["loudness"]["output"]["I"] == pytest.approx(-16.0, abs=1.0)
    assert clip["audio"]["loudness"]["input"]["I"] < -16.0


@pytest.mark.parametrize(("text", "value"), [("keep", None), ("-14", -14.0), (-23, -23.0),
                                             ("podcast (-16 LUFS)", -16.0)])
def test_parse_loudness(text, value) -> None:
    assert parse_loudness(text) == value


@pytest.mark.parametrize("bad", ["loud", "0", "-90"])
def test_parse_loudness_rejects(bad: str) -> None:
    with pytest.raises(BadInput):
        parse_loudness(bad)


def test_parse_channels() -> None:
    assert [parse_channels(t) for t in ("keep", "1", "2", "mono", 2)] == [None, 1, 2, 1, 2]
    with pytest.raises(BadInput):
        parse_channels("6")


def test_cancel_stops_the_loudness_measurement(stereo: Path, out_dir: Path) -> None:
    cancel = threading.Event()
    cancel.set()
    with pytest.raises(Cancelled):
        export_clip(stereo, ClipSpec(0.0, 3.0, mode="exact"),
                    ExportOptions(out_dir, loudness=-14), cancel=cancel)
    assert not any(out_dir.iterdir())
