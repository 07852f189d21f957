"""The trainer's own reader (qwen-vl-utils 0.0.14 + torchcodec) and ours pick the same frames
of real files, at the same size, with nearly the same pixels (the resamplers differ slightly:
torchvision's antialiased bicubic there, swscale's bicubic here)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from marlin_desk.media.sampling import sample_window

pytestmark = [pytest.mark.timeout(120), pytest.mark.slow]


@pytest.fixture(scope="module")
def fetch_video():  # type: ignore[no-untyped-def]
    vision = pytest.importorskip("qwen_vl_utils.vision_process")
    pytest.importorskip("torchcodec")
    try:
        from torchcodec.decoders import VideoDecoder  # noqa: F401  (loads FFmpeg libraries)
    except Exception as exc:  # pragma: no cover - depends on the machine's FFmpeg
        pytest.skip(f"torchcodec cannot load FFmpeg here: {exc}")
    return vision.fetch_video


@pytest.mark.parametrize("name", ["bigbuckbunny.mp4", "bikes.mp4"])
def test_same_frames_as_the_trainer(fetch_video, data_dir: Path, name: str) -> None:  # type: ignore[no-untyped-def]
    path = str(data_dir / name)
    element = {
        "video": path,
        "fps": 2.0,
        "min_frames": 4,
        "max_frames": 240,
        "min_pixels": 128 * 32 * 32,
        "max_pixels": 200_704,
    }
    (video, meta), sample_fps = fetch_video(
        element, image_patch_size=16, return_video_sample_fps=True, return_video_metadata=True
    )
    theirs = video.round().clamp(0, 255).byte().permute(0, 2, 3, 1).numpy()
    ours = sample_window(path, 0.0, 1e9)
    assert ours.source_indices == list(meta["frames_indices"])
    assert ours.frames.shape == theirs.shape
    assert ours.sample_fps == pytest.approx(sample_fps)
    diff = np.abs(ours.frames.astype(np.int16) - theirs.astype(np.int16))
    assert float(diff.mean()) < 2.0
    assert float(np.percentile(diff, 99)) <= 12
