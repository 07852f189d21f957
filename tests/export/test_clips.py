"""Clip export against the files it writes: frame accuracy, fast-mode snapping, rotation, VFR,
no audio, anamorphic pixels, and the source left untouched."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from marlin_desk.media.clip_export import ClipSpec, ExportOptions, export_clip
from marlin_desk.media.probe import probe

from .conftest import FPS, Videos
from .verify import diff, ffprobe_json, frame_times, frames, sha256, stream, video_duration

FRAME = 1 / FPS


def _best_match(img: np.ndarray, candidates: dict[int, np.ndarray]) -> int:
    return min(candidates, key=lambda k: diff(img, candidates[k]))


@pytest.fixture(scope="module")
def source_frames(videos: Videos) -> list[tuple[float, np.ndarray]]:
    return frames(videos.main)


def test_exact_clip_is_frame_accurate(videos: Videos, out_dir: Path, source_frames) -> None:
    before = sha256(videos.main)
    progress: list[float] = []
    r = export_clip(videos.main, ClipSpec(1.51, 3.51, mode="exact"), ExportOptions(out_dir),
                    on_progress=progress.append)
    assert r.status == "done" and r.path is not None and r.path.parent == out_dir
    assert r.real_start == pytest.approx(1.51)
    # Duration to within one frame, checked on the file itself.
    assert abs(video_duration(r.path) - 2.0) <= FRAME + 1e-6
    assert abs(r.real_duration - 2.0) <= FRAME + 1e-6
    times = frame_times(r.path)
    assert times[0] == pytest.approx(0.0, abs=1e-6)
    assert len(times) == 50
    # The first frame is the first source frame at or after 1.51 s: frame 38 (1.52 s).
    first = frames(r.path, limit=1)[0][1]
    k = math.ceil(1.51 * FPS)
    assert _best_match(first, {i: source_frames[i][1] for i in (k - 1, k, k + 1)}) == k
    last = frames(r.path)[-1][1]
    assert _best_match(last, {i: source_frames[i][1] for i in (k + 48, k + 49, k + 50)}) == k + 49
    assert progress and progress[-1] == 1.0 and progress == sorted(progress)
    assert sha256(videos.main) == before


def test_fast_clip_reports_the_keyframe_it_starts_on(videos: Videos, out_dir: Path,
                                                     source_frames) -> None:
    r = export_clip(videos.main, ClipSpec(2.7, 4.5, mode="fast"), ExportOptions(out_dir))
    assert r.real_start == pytest.approx(2.0)  # keyframes every 2 s
    first = frames(r.path, limit=1)[0][1]
    assert _best_match(first, {i: source_frames[i][1] for i in (49, 50, 51, 67)}) == 50
    assert r.real_duration == pytest.approx(probe(str(r.path)).duration, abs=1e-3)
    assert r.real_start + r.real_duration >= 4.5 - 1e-6
    assert "00m02.000s" in r.path.name  # named after the real start


def test_fast_clip_on_a_keyframe_starts_there(videos: Videos, out_dir: Path) -> None:
    r = export_clip(videos.main, ClipSpec(4.0, 5.0, mode="fast"), ExportOptions(out_dir))
    assert r.real_start == pytest.approx(4.0)
    assert 1.0 - 1e-6 <= r.real_duration <= 1.0 + 4 * FRAME  # a copy may end a few frames late


def test_rotated_phone_video_comes_out_upright(videos: Videos, out_dir: Path, ffprobe) -> None:
    info = probe(str(videos.rotated))
    assert info.rotation in (90, 270) and (info.width, info.height) == (240, 320)
    r = export_clip(videos.rotated, ClipSpec(0.0, 1.0, mode="exact"), ExportOptions(out_dir))
    v = stream(ffprobe_json(ffprobe, r.path), "video")
    assert (v["width"], v["height"]) == (240, 320)
    assert not any("rotation" in sd and sd["rotation"] for sd in v.get("side_data_list", []))
    # Same picture as the source turned the way its display matrix says (PyAV, not FFmpeg CLI).
    out = frames(r.path, limit=1)[0][1]
    src_coded = frames(videos.rotated, limit=1)[0][1]  # helper applies the display rotation
    assert diff(out, src_coded) < 8
    assert diff(out, np.rot90(src_coded, 2)) > 2 * diff(out, src_coded)


def test_fast_mode_keeps_rotation_metadata(videos: Videos, out_dir: Path) -> None:
    r = export_clip(videos.rotated, ClipSpec(0.0, 1.0, mode="fast"), ExportOptions(out_dir))
    info = probe(str(r.path))
    assert (info.width, info.height) == (240, 320)


def test_variable_frame_rate_becomes_constant(videos: Videos, out_dir: Path) -> None:
    src = probe(str(videos.vfr))
    assert src.is_vfr
    r = export_clip(videos.vfr, ClipSpec(0.5, 2.5), ExportOptions(out_dir))
    times = frame_times(r.path)
    steps = np.diff(times)
    assert np.allclose(steps, steps[0], atol=1e-3)
    out = probe(str(r.path))
    assert not out.is_vfr
    assert abs(out.duration - 2.0) <= steps[0] + 1e-6


@pytest.mark.parametrize("mode", ["exact", "fast"])
def test_video_without_audio(videos: Videos, out_dir: Path, mode: str) -> None:
    r = export_clip(videos.no_audio, ClipSpec(0.0, 1.0, mode=mode), ExportOptions(out_dir))
    info = probe(str(r.path))
    assert not info.has_audio
    assert info.duration == pytest.approx(r.real_duration, abs=FRAME + 1e-6)
    # A stream copy ends on a decode-order boundary: a few frames late, never early.
    assert 1.0 - 1e-6 <= info.duration <= 1.0 + (4 * FRAME if mode == "fast" else FRAME)


def test_audio_is_cut_with_the_video(videos: Videos, out_dir: Path, ffprobe) -> None:
    r = export_clip(videos.main, ClipSpec(1.0, 2.0), ExportOptions(out_dir))
    a = stream(ffprobe_json(ffprobe, r.path), "audio")
    assert a["codec_name"] == "aac" and a["profile"] == "LC"
    assert float(a["duration"]) == pytest.approx(1.0, abs=0.05)


def test_anamorphic_source_gets_square_pixels(videos: Videos, out_dir: Path, ffprobe) -> None:
    r = export_clip(videos.anamorphic, ClipSpec(0.0, 0.5, mode="exact"), ExportOptions(out_dir))
    v = stream(ffprobe_json(ffprobe, r.path), "video")
    assert (v["width"], v["height"]) == (426, 240)
    assert v.get("sample_aspect_ratio", "1:1") in ("1:1", "0:1")


def test_end_past_the_video_is_clipped(videos: Videos, out_dir: Path) -> None:
    r = export_clip(videos.no_audio, ClipSpec(1.5, 10.0), ExportOptions(out_dir))
    assert r.spec.end == pytest.approx(2.0)
    assert r.real_duration == pytest.approx(0.5, abs=FRAME + 1e-6)


@pytest.mark.parametrize(("start", "mode", "first"), [(1.51, "exact", 38), (2.7, "fast", 50)])
def test_transport_stream_with_a_start_offset(videos: Videos, out_dir: Path, start: float,
                                              mode: str, first: int) -> None:
    """No seek index and timestamps from 11.4 s: FFmpeg's own -ss lands after the start here."""
    src = frames(videos.ts)
    assert probe(str(videos.ts)).start_time > 10
    r = export_clip(videos.ts, ClipSpec(start, start + 1.0, mode=mode), ExportOptions(out_dir))
    out = frames(r.path)
    assert _best_match(out[0][1], {i: src[i][1] for i in range(len(src))}) == first
    assert r.real_start == pytest.approx(first / FPS, abs=0.011)
    if mode == "exact":
        assert len(out) == 25
        assert _best_match(out[-1][1], {i: src[i][1] for i in range(len(src))}) == first + 24


def test_codecs_an_mp4_cannot_copy_go_to_matroska(tmp_path: Path, out_dir: Path) -> None:
    """A ProRes + PCM camera file: fast mode copies into .mkv, exact mode re-encodes to MP4."""
    from .conftest import _ffmpeg

    src = tmp_path / "camera.mov"
    _ffmpeg("-f", "lavfi", "-i", "testsrc2=s=320x240:r=25:d=1", "-f", "lavfi", "-i",
            "sine=d=1", "-c:v", "prores_ks", "-c:a", "pcm_s16le", str(src))
    fast = export_clip(src, ClipSpec(0.2, 0.8, mode="fast"), ExportOptions(out_dir))
    assert fast.path.suffix == ".mkv"
    info = probe(str(fast.path))
    assert (info.video_codec, info.audio_codec) == ("prores", "pcm_s16le")
    exact = export_clip(src, ClipSpec(0.2, 0.8), ExportOptions(out_dir))
    info = probe(str(exact.path))
    assert exact.path.suffix == ".mp4" and (info.video_codec, info.audio_codec) == ("h264", "aac")


def test_hevc_keeps_its_codec_family(tmp_path: Path, out_dir: Path) -> None:
    from marlin_desk.media.ffmpeg_bin import find_ffmpeg

    from .conftest import _ffmpeg

    if not find_ffmpeg().has_encoder("libx265"):
        pytest.skip("this FFmpeg has no libx265")
    src = tmp_path / "phone.mp4"
    _ffmpeg("-f", "lavfi", "-i", "testsrc2=s=320x240:r=25:d=1", "-c:v", "libx265",
            "-x265-params", "log-level=error", "-tag:v", "hvc1", str(src))
    r = export_clip(src, ClipSpec(0.2, 0.8), ExportOptions(out_dir))
    info = probe(str(r.path))
    assert info.video_codec == "hevc" and abs(info.duration - 0.6) <= 1 / 25 + 1e-6
