"""marlin_desk/dev/videos.py is itself tested: the truth it claims is the truth it writes."""

from __future__ import annotations

from pathlib import Path

import av
import numpy as np
import pytest

from marlin_desk.dev.videos import frame_schedule, make_video, paint_frame_code, read_frame_code

pytestmark = pytest.mark.timeout(60)


@pytest.mark.parametrize("value", [0, 1, 999, 65_535, 130_000, 1_048_575])
@pytest.mark.parametrize("size", [(1080, 1920), (96, 160), (320, 576), (40, 64)])
def test_frame_code_round_trip(value: int, size: tuple[int, int]) -> None:
    img = np.full((*size, 3), 90, np.uint8)
    paint_frame_code(img, value)
    assert read_frame_code(img) == value


def test_frame_code_rejects_plain_pictures() -> None:
    rng = np.random.default_rng(0)
    misreads = sum(
        read_frame_code(rng.integers(0, 256, (96, 160, 3), np.uint8)) is not None
        for _ in range(200)
    )
    assert misreads < 30  # a 4-bit checksum: about 1 in 16 random pictures pass
    assert read_frame_code(np.zeros((96, 160, 3), np.uint8)) == 0  # all-black reads as 0 ms


@pytest.mark.parametrize(
    ("suffix", "vfr"), [(".mp4", "alternate"), (".mkv", "jitter"), (".mp4", False)]
)
def test_written_pts_are_the_schedule(tmp_path: Path, suffix: str, vfr: bool | str) -> None:
    path = make_video(tmp_path / f"v{suffix}", duration=2.0, fps=30, vfr=vfr, start_offset=1.0)
    truth = frame_schedule(2.0, 30, vfr)
    with av.open(str(path)) as container:
        stream = container.streams.video[0]
        decoded = [
            (float(f.pts * stream.time_base) - 1.0, read_frame_code(f.to_ndarray(format="rgb24")))
            for f in container.decode(stream)
        ]
    assert [t for t, _ in decoded] == pytest.approx(truth, abs=1e-3)
    assert all(
        code == round(t * 1000) for t, code in zip(truth, (c for _, c in decoded), strict=True)
    )


def test_segments_audio_and_sizes(tmp_path: Path) -> None:
    red, green = (220, 30, 30), (30, 200, 40)
    path = make_video(
        tmp_path / "seg.mp4", segments=[(1.0, red), (1.0, green)], size=(128, 72), audio=True
    )
    with av.open(str(path)) as container:
        assert [s.type for s in container.streams] == ["video", "audio"]
        assert container.streams.audio[0].codec_context.name == "aac"
        frames = [f.to_ndarray(format="rgb24") for f in container.decode(video=0)]
    assert len(frames) == 60 and frames[0].shape == (72, 128, 3)
    for index, colour in [(10, red), (50, green)]:
        centre = frames[index][20:30, 50:70].reshape(-1, 3).mean(0)
        assert np.abs(centre - np.array(colour)).max() < 20
