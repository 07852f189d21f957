"""probe() on synthetic files (every field against the truth they were written with) and on the
real files in tests/data."""

from __future__ import annotations

import pytest

from marlin_desk.dev.videos import frame_schedule
from marlin_desk.media.probe import VideoInfo, probe
from tests.media.conftest import MakeVideo

pytestmark = pytest.mark.timeout(60)


def test_cfr_mp4_every_field(video: MakeVideo) -> None:
    path = video("cfr.mp4", duration=4.0, fps=30, size=(160, 96), audio=True)
    info = probe(str(path))
    assert info == VideoInfo(
        path=str(path),
        duration=pytest.approx(4.0, abs=1e-6),
        width=160,
        height=96,
        coded_width=160,
        coded_height=96,
        fps=pytest.approx(30.0, rel=1e-6),
        rotation=0,
        has_audio=True,
        start_time=0.0,
        video_codec="h264",
        audio_codec="aac",
        frame_count=120,
        is_vfr=False,
        pixel_format="yuv420p",
        sample_aspect_ratio=1.0,
        frame_count_exact=True,
        container_start_time=pytest.approx(info.container_start_time),
        truncated=False,
        frame_rate="30/1",
        timecode=None,
        audio_channels=1,
        audio_sample_rate=48_000,
    )
    # AAC priming starts the audio a little before the video: the container starts earlier,
    # our video time does not.
    assert -0.05 <= info.container_start_time <= 0.0
    json = info.to_json()
    assert json["duration"] == 4.0 and json["fps"] == 30.0 and json["frame_count"] == 120


def test_ntsc_rate_and_no_audio(video: MakeVideo) -> None:
    from fractions import Fraction

    path = video("ntsc.mp4", duration=2.0, fps=Fraction(30000, 1001))
    info = probe(str(path))
    frames = len(frame_schedule(2.0, Fraction(30000, 1001)))
    assert info.frame_count == frames == 60
    assert info.fps == pytest.approx(30000 / 1001, rel=1e-6)
    assert info.duration == pytest.approx(frames * 1001 / 30000, abs=1e-6)
    assert not info.has_audio and info.audio_codec is None
    assert not info.is_vfr
    assert info.frame_rate == "30000/1001"  # exact, where fps is measured


@pytest.mark.parametrize("suffix", [".mp4", ".mkv", ".ts"])
def test_start_offset_is_removed(video: MakeVideo, suffix: str) -> None:
    path = video(f"offset{suffix}", duration=3.0, fps=30, start_offset=5.0)
    info = probe(str(path))
    assert info.start_time == pytest.approx(5.0, abs=1e-3)
    assert info.duration == pytest.approx(3.0, abs=2e-3)  # not 8 s: counted from the first frame
    assert info.frame_count == 90
    assert info.fps == pytest.approx(30.0, rel=2e-3)
    assert not info.is_vfr


@pytest.mark.parametrize(("suffix", "pattern"), [(".mp4", "alternate"), (".mkv", "jitter")])
def test_vfr_detected_with_real_average(video: MakeVideo, suffix: str, pattern: str) -> None:
    path = video(f"vfr{suffix}", duration=6.0, fps=30, vfr=pattern, seed=3)
    times = frame_schedule(6.0, 30, pattern, seed=3)
    info = probe(str(path))
    assert info.is_vfr
    assert info.frame_count == len(times)
    # The duration ends one (irregular) frame after the last frame starts.
    assert times[-1] + 0.4 / 30 <= info.duration <= times[-1] + 1.6 / 30
    assert info.fps == pytest.approx(len(times) / info.duration, rel=1e-6)


def test_cfr_mkv_with_millisecond_rounding_is_not_vfr(video: MakeVideo) -> None:
    info = probe(str(video("cfr.mkv", duration=3.0, fps=30)))
    assert not info.is_vfr
    assert info.frame_count == 90
    assert info.fps == pytest.approx(30.0, rel=2e-3)


@pytest.mark.parametrize("rotation", [90, 180, 270])
def test_rotation_and_displayed_size(video: MakeVideo, rotation: int) -> None:
    info = probe(str(video("rot.mp4", duration=1.0, size=(160, 96), rotation=rotation)))
    assert info.rotation == rotation
    assert (info.coded_width, info.coded_height) == (160, 96)
    if rotation == 180:
        assert (info.width, info.height) == (160, 96)
    else:
        assert (info.width, info.height) == (96, 160)  # landscape coded, portrait displayed


def test_one_frame_file(video: MakeVideo) -> None:
    info = probe(str(video("one.mp4", duration=1 / 30, fps=30)))
    assert info.frame_count == 1
    assert info.duration == pytest.approx(1 / 30, abs=1e-6)


def test_long_file_reads_only_head_and_tail(video: MakeVideo) -> None:
    # More packets than the head scan: the end comes from the tail after the last keyframe.
    path = video("count.mp4", duration=130.0, fps=5, gop=250)  # shared with the sampling tests
    info = probe(str(path))
    assert info.duration == pytest.approx(130.0, abs=1e-6)
    assert info.frame_count == 650 and info.frame_count_exact
    long_mkv = probe(str(video("long.mkv", duration=130.0, fps=5, gop=250)))
    assert long_mkv.duration == pytest.approx(130.0, abs=2e-3)
    assert long_mkv.frame_count == 650 and not long_mkv.frame_count_exact  # estimated
    assert long_mkv.fps == pytest.approx(5.0, rel=1e-3)


def test_other_codecs(video: MakeVideo) -> None:
    vp9 = probe(str(video("vp9.webm", duration=1.0, codec="libvpx-vp9")))
    assert vp9.video_codec == "vp9" and vp9.frame_count == 30
    mpeg4 = probe(str(video("mpeg4.avi", duration=1.0, codec="mpeg4")))
    assert mpeg4.video_codec == "mpeg4" and mpeg4.frame_count == 30


def test_real_files(data_dir) -> None:  # type: ignore[no-untyped-def]
    bunny = probe(str(data_dir / "bigbuckbunny.mp4"))
    assert (bunny.width, bunny.height, bunny.frame_count) == (1280, 720, 132)
    assert bunny.fps == pytest.approx(25.0) and bunny.duration == pytest.approx(5.28)
    assert bunny.has_audio and bunny.audio_codec == "aac" and bunny.video_codec == "h264"
    assert not bunny.is_vfr and bunny.rotation == 0 and bunny.start_time == 0.0
    bikes = probe(str(data_dir / "bikes.mp4"))
    assert (bikes.width, bikes.height, bikes.frame_count) == (640, 272, 250)
    assert bikes.duration == pytest.approx(10.0) and not bikes.has_audio
    assert bikes.pixel_format == "yuv420p" and bikes.sample_aspect_ratio == 1.0


@pytest.mark.parametrize(("suffix", "timecode"), [(".mp4", "01:00:00;00"), (".mov", "10:00:00:00"),
                                                  (".mkv", "23:59:59:24")])
def test_start_timecode_tag(tmp_path, suffix: str, timecode: str) -> None:
    """FFmpeg's `-timecode` lands in a tmcd track (mp4/mov: also the video stream's tag) or in
    the container's tags (mkv): probe finds it in each."""
    import subprocess

    rate = "30000/1001" if ";" in timecode else "25"
    path = tmp_path / f"tc{suffix}"
    subprocess.run(["ffmpeg", "-v", "error", "-f", "lavfi", "-i",
                    f"testsrc2=size=32x32:rate={rate}:duration=0.4", "-timecode", timecode,
                    "-c:v", "libx264", "-preset", "ultrafast", str(path)], check=True)
    info = probe(str(path))
    assert info.timecode == timecode
    assert info.frame_rate == ("30000/1001" if ";" in timecode else "25/1")
    assert info.to_json()["timecode"] == timecode
