"""Frame geometry shared by probing and sampling: the model's resize rule and rotation.

`smart_resize` re-implements qwen-vl-utils 0.0.14's rule (the trainer's path) without importing
it (it pulls in torch and torchvision), so that frames reach the model at the size it was
trained on.
"""

from __future__ import annotations

import math

import numpy as np

from marlin_desk.core.errors import BadInput

MAX_ASPECT_RATIO = 200  # qwen-vl-utils' MAX_RATIO


def _round_by_factor(number: float, factor: int) -> int:
    # Python's round() rounds half to even, exactly like qwen-vl-utils' round_by_factor.
    return round(number / factor) * factor


def _ceil_by_factor(number: float, factor: int) -> int:
    return math.ceil(number / factor) * factor


def _floor_by_factor(number: float, factor: int) -> int:
    return math.floor(number / factor) * factor


def smart_resize(
    height: int, width: int, factor: int, min_pixels: int, max_pixels: int
) -> tuple[int, int]:
    """(height, width) on the `factor` grid, area near [min_pixels, max_pixels], aspect kept.

    Identical to qwen-vl-utils' smart_resize for every input it accepts, quirks included: a
    tiny frame with an aspect ratio above about 35 grown to min_pixels can overshoot
    max_pixels a little (1x76 gives 64x3168), as it did in training. Where qwen-vl-utils would
    produce a zero side (aspect ratios between about 196 and 200 with max_pixels 200,704) we
    keep one `factor` and shrink the other side onto the grid so the area stays in budget.
    Raises BadInput for empty sizes and aspect ratios above 200 (qwen-vl-utils' ValueError).
    """
    if height <= 0 or width <= 0:
        raise BadInput(f"A frame of {width}x{height} pixels cannot be resized.")
    if max_pixels < min_pixels:
        raise BadInput(f"The pixel budget is inconsistent: max {max_pixels} < min {min_pixels}.")
    ratio = max(height, width) / min(height, width)
    if ratio > MAX_ASPECT_RATIO:
        raise BadInput(
            f"A frame of {width}x{height} pixels has an aspect ratio of {ratio:.0f}:1, "
            f"above the model's limit of {MAX_ASPECT_RATIO}:1."
        )
    h_bar = max(factor, _round_by_factor(height, factor))
    w_bar = max(factor, _round_by_factor(width, factor))
    if h_bar * w_bar > max_pixels:
        beta = math.sqrt((height * width) / max_pixels)
        h_bar = _floor_by_factor(height / beta, factor)
        w_bar = _floor_by_factor(width / beta, factor)
    elif h_bar * w_bar < min_pixels:
        beta = math.sqrt(min_pixels / (height * width))
        h_bar = _ceil_by_factor(height * beta, factor)
        w_bar = _ceil_by_factor(width * beta, factor)
    if h_bar < factor or w_bar < factor:  # extreme aspect ratios only (see docstring)
        h_bar, w_bar = max(factor, h_bar), max(factor, w_bar)
        cap = max(factor, _floor_by_factor(max_pixels // factor, factor))
        if h_bar == factor:
            w_bar = min(w_bar, cap)
        else:
            h_bar = min(h_bar, cap)
    return h_bar, w_bar


def normalise_rotation(degrees: float) -> int:
    """Any angle to the nearest of 0, 90, 180, 270 (degrees clockwise to display upright)."""
    return int(round(degrees / 90.0)) % 4 * 90


def rotate_upright(image: np.ndarray, rotation: int) -> np.ndarray:
    """Turn a coded (H, W, C) image clockwise by `rotation` degrees so it displays upright.

    np.rot90 with a positive k turns counter-clockwise, so clockwise is k = -rotation / 90.
    """
    k = (rotation % 360) // 90
    if k == 0:
        return image
    return np.ascontiguousarray(np.rot90(image, k=-k))


def coded_size_for(display_hw: tuple[int, int], rotation: int) -> tuple[int, int]:
    """The (height, width) to scale a coded frame to so that, once rotated, it is display_hw."""
    h, w = display_hw
    return (w, h) if rotation % 180 == 90 else (h, w)
