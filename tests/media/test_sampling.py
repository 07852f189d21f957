"""Fidelity of sample_window: the right number of frames, at the right size, and every reported
time belongs to the frame returned with it (read back from the frame code painted in it)."""

from __future__ import annotations

import av
import numpy as np
import pytest

from marlin_desk.core.budget import TRAINING_BUDGET, VideoBudget
from marlin_desk.core.errors import Cancelled
from marlin_desk.dev.videos import (
    ffmpeg_autorotated_first_frame,
    frame_schedule,
    marker_corner,
    read_frame_code,
)
from marlin_desk.media.probe import probe
from marlin_desk.media.sampling import (
    SampledFrames,
    choose_indices,
    frame_count_for,
    frame_size_for,
    sample_window,
)
from tests.media.conftest import MakeVideo

pytestmark = pytest.mark.timeout(60)


def assert_codes_match(sampled: SampledFrames, rotation: int = 0, offset: float = 0.0) -> None:
    """Each frame shows the time reported for it (to the millisecond)."""
    for frame, t in zip(sampled.frames, sampled.times, strict=True):
        code = read_frame_code(frame, rotation)
        assert code is not None, f"unreadable frame code at {t:.3f} s"
        assert abs(code - round((t - offset) * 1000)) <= 1, (code, t)


def assert_model_ready(sampled: SampledFrames, budget: VideoBudget = TRAINING_BUDGET) -> None:
    t, h, w, c = sampled.frames.shape
    assert sampled.frames.dtype == np.uint8 and c == 3
    assert t == len(sampled.times) == len(sampled.source_indices)
    assert t % budget.temporal_patch_size == 0
    assert h % budget.factor == 0 and w % budget.factor == 0
    assert h * w <= budget.max_pixels
    assert budget.tokens_per_frame(h, w) <= 98
    assert sampled.times == sorted(sampled.times)


@pytest.mark.parametrize(
    ("duration", "fps", "expected"),
    [(10.0, 30, 20), (1.0, 30, 4), (120.0, 5, 240), (130.0, 5, 240)],
)
def test_frame_counts_for_whole_files(
    video: MakeVideo, duration: float, fps: int, expected: int
) -> None:
    path = video("count.mp4", duration=duration, fps=fps, gop=250)
    info = probe(str(path))
    sampled = sample_window(str(path), 0.0, info.duration, info=info)
    assert len(sampled.times) == expected
    assert_model_ready(sampled)
    assert_codes_match(sampled)
    assert sampled.times[0] == 0.0
    assert sampled.times[-1] == pytest.approx(info.duration - 1 / fps, abs=1e-6)  # the last
    if duration > 120:  # 240 frames over 130 s: a lower rate than 2 per second
        gaps = np.diff(sampled.times)
        assert gaps.mean() == pytest.approx(130 / 240, rel=0.01)


def test_one_frame_file_gives_the_frame_twice(video: MakeVideo) -> None:
    path = video("one.mp4", duration=1 / 30, fps=30)
    sampled = sample_window(str(path), 0.0, 1.0)
    assert sampled.frames.shape[0] == 2
    assert sampled.times == [0.0, 0.0]
    assert sampled.source_indices == [0, 0]
    assert np.array_equal(sampled.frames[0], sampled.frames[1])
    assert_codes_match(sampled)


def test_size_tokens_and_qwen_bookkeeping(video: MakeVideo) -> None:
    path = video("hd.mp4", duration=2.0, size=(640, 360), fps=25)
    sampled = sample_window(str(path), 0.0, 2.0)
    assert sampled.size == frame_size_for(360, 640) == (320, 576)
    assert TRAINING_BUDGET.tokens_per_frame(*sampled.size) == 90
    assert sampled.window_frame_count == 50 and sampled.window_fps == pytest.approx(25.0)
    assert sampled.sample_fps == pytest.approx(len(sampled.times) / 50 * 25)
    assert sampled.source_indices == choose_indices(50, frame_count_for(50, 25.0))


def test_window_offsets(video: MakeVideo) -> None:
    path = video("thirty.mp4", duration=30.0, fps=30, gop=250, audio=True)
    info = probe(str(path))
    sampled = sample_window(str(path), 10.0, 20.0, info=info)
    assert len(sampled.times) == 20
    assert all(10.0 <= t < 20.0 for t in sampled.times)
    assert sampled.times[0] == pytest.approx(10.0)
    assert sampled.relative_times[0] == pytest.approx(0.0)
    assert sampled.relative_times[-1] == pytest.approx(sampled.times[-1] - 10.0)
    assert (sampled.window_start, sampled.window_end) == (10.0, 20.0)
    assert_codes_match(sampled)
    # Consecutive windows share no frame and miss none.
    counts = [
        sample_window(str(path), a, b, info=info).window_frame_count
        for a, b in [(0.0, 10.0), (10.0, 20.0), (20.0, 30.0)]
    ]
    assert counts == [300, 300, 300] and sum(counts) == info.frame_count


def test_window_past_the_end_includes_the_last_frame(video: MakeVideo) -> None:
    path = video("thirty.mp4", duration=30.0, fps=30, gop=250, audio=True)
    sampled = sample_window(str(path), 25.0, 40.0)
    assert sampled.window_frame_count == 150
    assert sampled.times[-1] == pytest.approx(30.0 - 1 / 30)
    assert sampled.window_end == pytest.approx(30.0)
    assert len(sampled.times) == 10
    assert_codes_match(sampled)


@pytest.mark.parametrize(("suffix", "pattern"), [(".mp4", "alternate"), (".mkv", "jitter")])
def test_vfr_times_are_the_real_ones(video: MakeVideo, suffix: str, pattern: str) -> None:
    path = video(f"vfr{suffix}", duration=20.0, fps=30, vfr=pattern, seed=7, gop=250)
    truth = frame_schedule(20.0, 30, pattern, seed=7)
    info = probe(str(path))
    sampled = sample_window(str(path), 5.0, 15.0, info=info)
    in_window = [t for t in truth if 5.0 <= t < 15.0]
    assert sampled.window_frame_count == len(in_window)
    expected = [in_window[i] for i in choose_indices(len(in_window), len(sampled.times))]
    assert sampled.times == pytest.approx(expected, abs=1e-3)  # mkv keeps milliseconds
    assert_codes_match(sampled)
    # Index / average fps would be wrong here: the real times are irregular.
    naive = [sampled.times[0] + i / info.fps for i in sampled.source_indices]
    assert max(abs(a - b) for a, b in zip(naive, sampled.times, strict=True)) > 0.01


@pytest.mark.parametrize("suffix", [".mkv", ".ts", ".mp4"])
def test_start_offset_removed(video: MakeVideo, suffix: str) -> None:
    path = video(f"offset{suffix}", duration=12.0, fps=30, start_offset=5.0, gop=250)
    info = probe(str(path))
    whole = sample_window(str(path), 0.0, info.duration, info=info)
    assert whole.times[0] == pytest.approx(0.0, abs=1e-3)
    assert len(whole.times) == 24
    assert_codes_match(whole)
    later = sample_window(str(path), 6.0, 9.0, info=info)  # the seek path, mpegts included
    assert later.times[0] == pytest.approx(6.0, abs=1e-3)
    assert all(6.0 <= t < 9.0 for t in later.times)
    assert_codes_match(later)


@pytest.mark.parametrize(
    ("rotation", "corner"),
    [(0, "top-left"), (90, "top-right"), (180, "bottom-right"), (270, "bottom-left")],
)
def test_rotation_applied(video: MakeVideo, rotation: int, corner: str) -> None:
    magenta = (255, 0, 255)
    path = video("rot.mp4", duration=2.0, size=(160, 96), rotation=rotation, marker=magenta)
    sampled = sample_window(str(path), 0.0, 2.0)
    h, w = sampled.size
    assert (h > w) == (rotation in (90, 270))  # landscape coded, portrait displayed
    assert sampled.size == frame_size_for(*((160, 96) if rotation in (90, 270) else (96, 160)))
    for frame in sampled.frames:
        assert marker_corner(frame, magenta) == corner
    assert_codes_match(sampled, rotation=rotation)


@pytest.mark.parametrize("rotation", [90, 270])
def test_rotation_matches_ffmpeg_autorotate(video: MakeVideo, rotation: int) -> None:
    """FFmpeg's own player turns the picture the same way we do."""
    import shutil

    ffmpeg = shutil.which("ffmpeg")
    if ffmpeg is None:
        pytest.skip("no ffmpeg command line")
    magenta = (255, 0, 255)
    path = video("rot.mp4", duration=2.0, size=(160, 96), rotation=rotation, marker=magenta)
    reference = ffmpeg_autorotated_first_frame(path, ffmpeg)
    ours = sample_window(str(path), 0.0, 2.0).frames[0]
    assert reference.shape[0] > reference.shape[1]
    assert marker_corner(reference, magenta) == marker_corner(ours, magenta) is not None


def _reference_sample(path: str, start: float, end: float) -> tuple[list[float], np.ndarray]:
    """The obvious, slow way: decode every frame, keep the window's, pick, convert."""
    info = probe(path)
    with av.open(path) as container:
        stream = container.streams.video[0]
        frames = [
            f
            for f in container.decode(stream)
            if start - 1e-6 <= float(f.pts * stream.time_base) - info.start_time < end - 1e-6
        ]
        n = frame_count_for(len(frames), len(frames) / (min(end, info.duration) - start))
        picks = [frames[i] for i in choose_indices(len(frames), n)]
        h, w = frame_size_for(info.height, info.width)
        times = [float(f.pts * stream.time_base) - info.start_time for f in picks]
        arrays = [
            f.to_ndarray(width=w, height=h, format="rgb24", interpolation="BICUBIC") for f in picks
        ]
    return times, np.stack(arrays)


@pytest.mark.parametrize("window", [(0.0, 10.0), (3.3, 8.1)])
def test_identical_to_decoding_everything(video: MakeVideo, window: tuple[float, float]) -> None:
    """Skipping unneeded frames and seeking once changes no pixel and no time."""
    path = str(video("textured.mp4", duration=10.0, fps=30, gop=120, texture=True))
    times, arrays = _reference_sample(path, *window)
    sampled = sample_window(path, *window)
    assert sampled.times == pytest.approx(times, abs=1e-9)
    assert np.array_equal(sampled.frames, arrays)


def test_cancellation(video: MakeVideo) -> None:
    path = video("thirty.mp4", duration=30.0, fps=30, gop=250, audio=True)
    polls = 0

    def stop() -> bool:
        nonlocal polls
        polls += 1
        return polls > 20

    with pytest.raises(Cancelled):
        sample_window(str(path), 0.0, 30.0, should_stop=stop)
    assert polls == 21


def test_custom_budget(video: MakeVideo) -> None:
    path = video("thirty.mp4", duration=30.0, fps=30, gop=250, audio=True)
    budget = VideoBudget(fps=1.0, max_frames=16, max_pixels=64 * 32 * 32, min_pixels=16 * 32 * 32)
    sampled = sample_window(str(path), 0.0, 30.0, budget=budget)
    assert len(sampled.times) == 16
    assert_model_ready(sampled, budget)
    assert_codes_match(sampled)


@pytest.mark.parametrize("codec_suffix", [("libvpx-vp9", ".webm"), ("mpeg4", ".avi")])
def test_other_codecs(video: MakeVideo, codec_suffix: tuple[str, str]) -> None:
    codec, suffix = codec_suffix
    path = video(f"codec{suffix}", duration=6.0, fps=30, codec=codec, gop=90)
    sampled = sample_window(str(path), 2.0, 6.0)
    assert len(sampled.times) == 8
    assert_codes_match(sampled)


def test_real_files(data_dir) -> None:  # type: ignore[no-untyped-def]
    bunny = sample_window(str(data_dir / "bigbuckbunny.mp4"), 0.0, 100.0)
    assert len(bunny.times) == 10 and bunny.size == (320, 576)
    assert bunny.source_indices == [0, 15, 29, 44, 58, 73, 87, 102, 116, 131]
    assert bunny.times == pytest.approx([i / 25 for i in bunny.source_indices])
    assert_model_ready(bunny)
    bikes = sample_window(str(data_dir / "bikes.mp4"), 2.0, 6.0)
    assert len(bikes.times) == 8 and bikes.size == (256, 640)
    assert bikes.times[0] == pytest.approx(2.0) and bikes.times[-1] == pytest.approx(5.96)
    assert_model_ready(bikes)
    assert float(bikes.frames.std()) > 10  # real pictures, not blank frames
