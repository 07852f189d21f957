"""Presets checked with ffprobe: sizes, H.264 profile, pixel format, SAR, AAC, moov before mdat."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from marlin_desk.core.errors import BadInput
from marlin_desk.media.clip_export import ClipSpec, ExportOptions, export_clip
from marlin_desk.media.presets import PRESETS, get_preset, output_fps, video_args
from marlin_desk.media.probe import probe

from .conftest import Videos
from .verify import ffprobe_json, frames, keyframe_times, stream, top_level_atoms

CASES = [("youtube", None, (1920, 1080)), ("reels", "crop", (1080, 1920)),
         ("reels", "blur", (1080, 1920)), ("square", "crop", (1080, 1080))]


@pytest.mark.parametrize(("preset", "fill", "size"), CASES)
def test_preset_output(videos: Videos, out_dir: Path, ffprobe: str, preset: str,
                       fill: str | None, size: tuple[int, int]) -> None:
    r = export_clip(videos.main, ClipSpec(1.0, 2.0, preset=preset, fill=fill),
                    ExportOptions(out_dir))
    doc = ffprobe_json(ffprobe, r.path)
    v, a = stream(doc, "video"), stream(doc, "audio")
    assert (v["width"], v["height"]) == size
    assert v["codec_name"] == "h264" and v["profile"] == "High"
    assert v["pix_fmt"] == "yuv420p"
    assert v.get("sample_aspect_ratio", "1:1") == "1:1"
    assert a["codec_name"] == "aac" and a["profile"] == "LC" and a["sample_rate"] == "48000"
    assert a["channels"] == 2
    atoms = top_level_atoms(r.path)
    assert atoms.index("moov") < atoms.index("mdat")
    if preset == "youtube":  # closed GOP of half the frame rate
        keys = keyframe_times(r.path)
        assert max(np.diff(keys)) <= 0.5 + 1e-6


def test_youtube_pads_a_4_3_source_without_cropping(videos: Videos, out_dir: Path) -> None:
    r = export_clip(videos.main, ClipSpec(1.0, 1.2, preset="youtube"), ExportOptions(out_dir))
    img = frames(r.path, limit=1)[0][1]
    # 320x240 fits 1440x1080: 240-pixel black bars left and right.
    assert img[:, :200].mean() < 20 and img[:, -200:].mean() < 20
    assert img[:, 300:1600].mean() > 40


def test_original_preset_keeps_size_and_codec(videos: Videos, out_dir: Path) -> None:
    r = export_clip(videos.main, ClipSpec(0.0, 0.4), ExportOptions(out_dir))
    info = probe(str(r.path))
    assert (info.width, info.height, info.video_codec) == (320, 240, "h264")


def test_fast_mode_refuses_resizing_presets(videos: Videos, out_dir: Path) -> None:
    with pytest.raises(BadInput, match="exact mode"):
        export_clip(videos.main, ClipSpec(0, 1, preset="reels", mode="fast"),
                    ExportOptions(out_dir))
    assert not any(out_dir.iterdir())


def test_ultrafast_is_not_offered() -> None:
    # ultrafast silently gives Constrained Baseline whatever profile is asked for.
    with pytest.raises(BadInput):
        video_args(get_preset("youtube"), "libx264", output_fps(_info(30), PRESETS["youtube"]),
                   "ultrafast")


@pytest.mark.parametrize(("fps", "expected"), [(29.97, "30000/1001"), (29.87, "30000/1001"),
                                                (25.0, "25"), (120.0, "60"), (14.3, "143/10")])
def test_output_frame_rate_snaps_to_standard_rates(fps: float, expected: str) -> None:
    assert str(output_fps(_info(fps), PRESETS["reels"])) == expected


def test_unknown_preset_is_a_plain_error() -> None:
    with pytest.raises(BadInput, match="unknown preset"):
        get_preset("tiktok4k")


def _info(fps: float):
    from marlin_desk.media.probe import VideoInfo

    return VideoInfo("x", 10.0, 1920, 1080, 1920, 1080, fps, 0, True, 0.0, "h264", "aac", 300,
                     False)
