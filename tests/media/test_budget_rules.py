"""The budget rules against the trainer's own code: qwen-vl-utils 0.0.14 and torch.linspace.

The media layer re-implements them (it must not import torch); these tests import the originals
as oracles when they are installed.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from marlin_desk.core.budget import TRAINING_BUDGET
from marlin_desk.core.errors import BadInput
from marlin_desk.media.geometry import normalise_rotation, rotate_upright
from marlin_desk.media.sampling import choose_indices, frame_count_for, frame_size_for

pytestmark = pytest.mark.timeout(120)


@pytest.fixture(scope="module")
def qwen():  # type: ignore[no-untyped-def]
    return pytest.importorskip("qwen_vl_utils.vision_process")


@pytest.fixture(scope="module")
def torch():  # type: ignore[no-untyped-def]
    return pytest.importorskip("torch")


@pytest.mark.parametrize(
    ("frames", "fps", "expected"),
    [
        (300, 30.0, 20),  # 10 s
        (3600, 30.0, 240),  # 120 s: the cap is exactly 2 per second
        (3900, 30.0, 240),  # 130 s: capped, so a lower rate
        (30, 30.0, 4),  # 1 s: the minimum
        (5, 30.0, 4),
        (3, 30.0, 2),  # fewer frames than the minimum: all there are, floored to even
        (2, 30.0, 2),
        (1, 30.0, 2),  # one frame: repeated (documented rule)
        (301, 30.0, 20),
        (100, 29.97, 6),
        (300, 300 / sum([1 / 30] * 300), 20),  # 19.99999999999995: float noise keeps the pair
    ],
)
def test_frame_count_table(frames: int, fps: float, expected: int) -> None:
    assert frame_count_for(frames, fps, TRAINING_BUDGET) == expected


def test_frame_count_rejects_empty_windows() -> None:
    with pytest.raises(BadInput):
        frame_count_for(0, 30.0)
    with pytest.raises(BadInput):
        frame_count_for(10, 0.0)


@settings(max_examples=300, deadline=None)
@given(
    frames=st.integers(min_value=2, max_value=20_000),
    fps=st.sampled_from([5.0, 10.0, 23.976, 24.0, 25.0, 29.97, 30.0, 50.0, 59.94, 60.0, 120.0]),
)
def test_frame_count_matches_smart_nframes(qwen, frames: int, fps: float) -> None:  # type: ignore[no-untyped-def]
    ele = {"fps": 2.0, "min_frames": 4, "max_frames": 240}
    assert frame_count_for(frames, fps) == qwen.smart_nframes(ele, frames, fps)


@pytest.mark.parametrize(
    ("height", "width", "expected"),
    [
        (1080, 1920, (320, 576)),
        (1920, 1080, (576, 320)),
        (720, 1280, (320, 576)),
        (2160, 3840, (320, 576)),
        (479, 853, (320, 576)),
        (272, 640, (256, 640)),
        (96, 160, (288, 480)),  # small frames grow to the minimum area
        (33, 17, (512, 288)),  # tiny and odd
        (1, 1, (384, 384)),
        (100, 8000, (32, 4000)),  # very wide
    ],
)
def test_frame_size_table(height: int, width: int, expected: tuple[int, int]) -> None:
    h, w = frame_size_for(height, width)
    assert (h, w) == expected
    assert h % 32 == 0 and w % 32 == 0 and h * w <= TRAINING_BUDGET.max_pixels


def test_frame_size_rejects_extreme_aspect_ratio() -> None:
    with pytest.raises(BadInput, match="aspect ratio"):
        frame_size_for(8, 2048)


def test_frame_size_near_the_ratio_limit_never_gives_zero() -> None:
    # qwen-vl-utils would return a 0-pixel side here; we keep one grid step.
    assert frame_size_for(100, 20_000) == (32, 6272)
    assert frame_size_for(20_000, 100) == (6272, 32)


@settings(max_examples=400, deadline=None)
@given(
    height=st.integers(min_value=1, max_value=8192),
    width=st.integers(min_value=1, max_value=8192),
)
def test_frame_size_matches_smart_resize(qwen, height: int, width: int) -> None:  # type: ignore[no-untyped-def]
    if max(height, width) / min(height, width) > 150:
        return  # extreme ratios: covered above
    expected = qwen.smart_resize(
        height, width, factor=32, min_pixels=128 * 32 * 32, max_pixels=200_704
    )
    got = frame_size_for(height, width)
    assert got == expected
    if max(height, width) / min(height, width) <= 30:
        # Beyond that, tiny frames can overshoot max_pixels when grown to min_pixels (1x76
        # gives 64x3168): qwen-vl-utils does the same, so we keep it identical.
        assert got[0] * got[1] <= TRAINING_BUDGET.max_pixels
        assert TRAINING_BUDGET.tokens_per_frame(*got) <= 98


def test_choose_indices_matches_torch_linspace(torch) -> None:  # type: ignore[no-untyped-def]
    for total in [*range(1, 400), 899, 900, 901, 1799, 3600, 3601, 7200, 14_401, 47_189, 100_003]:
        for nframes in {2, 4, 6, 20, 38, 120, 196, 238, 240}:
            if nframes > max(total, 2):
                continue
            expected = torch.linspace(0, total - 1, nframes).round().long().tolist()
            assert choose_indices(total, nframes) == expected, (total, nframes)


@settings(max_examples=300, deadline=None)
@given(total=st.integers(min_value=1, max_value=50_000), half=st.integers(1, 120))
def test_choose_indices_property(torch, total: int, half: int) -> None:  # type: ignore[no-untyped-def]
    nframes = 2 * half
    got = choose_indices(total, nframes)
    assert got == torch.linspace(0, total - 1, nframes).round().long().tolist()
    assert got[0] == 0 and got[-1] == total - 1 and got == sorted(got)


def test_rotation_helpers() -> None:
    import numpy as np

    assert [normalise_rotation(d) for d in (0, 90, -90, 180, -180, 270, 360, 89.6)] == [
        0,
        90,
        270,
        180,
        180,
        270,
        0,
        90,
    ]
    img = np.zeros((2, 3, 1), np.uint8)
    img[0, 0] = 1  # top-left
    turned = rotate_upright(img, 90)  # clockwise: top-left goes to top-right
    assert turned.shape == (3, 2, 1) and turned[0, 1, 0] == 1
    assert rotate_upright(img, 270)[2, 0, 0] == 1  # counter-clockwise: to bottom-left
    assert rotate_upright(img, 180)[1, 2, 0] == 1
    assert math.isclose(float(rotate_upright(img, 0).sum()), 1.0)
