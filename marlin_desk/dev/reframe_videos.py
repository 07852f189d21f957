"""Synthetic reframing footage: a real face photograph moving over a textured 16:9 frame.

The face is the astronaut portrait (Eileen Collins, public domain, NASA) that scikit-image ships
in its wheel (`skimage/data/astronaut.png`); the file is read straight from the installed
package, without importing scikit-image. The background is smooth noise from a seed, so that a
crop's position can be found again in an exported frame by matching it against the source
(`locate_crop`), and a change of seed is a real cut for FFmpeg's scene score.

Scenarios (`SCENARIOS`): the face moving across the frame, held still, jittering inside the dead
zone, in two shots on opposite sides, a shot with her and one without, no face at all, and the
walker: her body below the face (no face to find) moving across. `make_reframe_video` returns
the truth: where the subject (the face; the walker's body) is at each time, in source pixels,
and the cut times.
"""

from __future__ import annotations

import importlib.util
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path

import av
import numpy as np
from PIL import Image

SCENARIOS = ("moving", "still", "jitter", "two_shots", "face_then_empty", "no_face", "walker")
# Where the face is inside the patch (fractions of the patch), measured once with the app's
# detector on the patch below (tests/reframe check the detector still agrees).
FACE_IN_PATCH = (0.30, 0.23, 0.35, 0.39)  # x, y, w, h
_PATCH_BOX = (100, 0, 360, 280)  # left, top, right, bottom of the head and shoulders, 512 px
_BODY_BOX = (100, 250, 360, 512)  # her suit below the face: a subject without a face


def astronaut_path() -> Path:
    """The astronaut photograph inside the installed scikit-image wheel."""
    spec = importlib.util.find_spec("skimage")
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError("scikit-image is not installed (its wheel has the test face)")
    path = Path(next(iter(spec.submodule_search_locations))) / "data" / "astronaut.png"
    if not path.is_file():
        raise FileNotFoundError(f"{path} is missing from the scikit-image install")
    return path


def face_patch(height: int, box: tuple[int, int, int, int] = _PATCH_BOX) -> np.ndarray:
    """The astronaut's head and shoulders (or another `box` of the photograph), `height` pixels
    tall, RGB uint8."""
    image = Image.open(astronaut_path()).convert("RGB").crop(box)
    width = round(height * image.width / image.height)
    return np.asarray(image.resize((width, height), Image.Resampling.LANCZOS))


def background(width: int, height: int, seed: int) -> np.ndarray:
    """Smooth coloured noise (RGB uint8): unique everywhere, so a crop can be located."""
    rng = np.random.default_rng(seed)
    # Odd seeds are dark, even ones light: two seeds then differ enough for a clear cut.
    low = 25 if seed % 2 else 125
    coarse = rng.integers(low, low + 105, size=(9, 16, 3), dtype=np.uint8)
    img = Image.fromarray(coarse).resize((width, height), Image.Resampling.BICUBIC)
    fine = rng.integers(0, 30, size=(height // 8 + 1, width // 8 + 1, 3), dtype=np.uint8)
    detail = np.asarray(Image.fromarray(fine).resize((width, height), Image.Resampling.BILINEAR))
    return np.clip(np.asarray(img, dtype=np.int16) + detail - 15, 0, 255).astype(np.uint8)


@dataclass
class ReframeTruth:
    """What a synthetic video holds: the face box (x, y, w, h in source pixels) at a time, or
    None where there is no face, and the cut times."""

    size: tuple[int, int]
    fps: float
    duration: float
    cuts: list[float]
    face_at: Callable[[float], tuple[float, float, float, float] | None] = field(repr=False)
    frame_at: Callable[[float], np.ndarray] = field(repr=False)


def _scenario(name: str, width: int, duration: float) -> tuple[
        Callable[[float], float | None], Callable[[float], int], list[float]]:
    """(face centre x in pixels at t or None, background seed at t, cuts) of a scenario."""
    if name in ("moving", "walker"):  # left to right across the frame at a walking pace
        return (lambda t: width * (0.22 + 0.56 * t / duration)), (lambda t: 1), []
    if name == "still":
        return (lambda t: width * 0.3), (lambda t: 1), []
    if name == "jitter":  # small moves that stay inside the dead zone
        return (lambda t: width * (0.7 + 0.012 * math.sin(2 * math.pi * t))), (lambda t: 1), []
    if name == "two_shots":
        cut = round(duration / 2, 1)
        return ((lambda t: width * (0.22 if t < cut else 0.78)),
                (lambda t: 1 if t < cut else 2), [cut])
    if name == "face_then_empty":  # a shot with her on the left, then one with nobody
        cut = round(duration / 2, 1)
        return ((lambda t: width * 0.22 if t < cut else None),
                (lambda t: 1 if t < cut else 2), [cut])
    if name == "no_face":
        return (lambda t: None), (lambda t: 3), []
    raise ValueError(f"unknown scenario {name!r}; use one of {', '.join(SCENARIOS)}")


def make_reframe_video(path: str | Path, scenario: str, *, size: tuple[int, int] = (640, 360),
                       fps: float = 25.0, duration: float = 3.0, face_height: float = 0.45,
                       crf: int = 18, rotation: int = 0) -> ReframeTruth:
    """Write the scenario as H.264 (yuv420p, one keyframe a second) and return its truth.

    `face_height` is the patch's height as a fraction of the frame (the face is 40 % of it).
    `rotation` (0/90/180/270, clockwise to display upright) stores the picture turned the other
    way with a display matrix, as phones do: it displays as `size`, and the truth is in those
    displayed pixels."""
    width, height = size
    centre_at, seed_at, cuts = _scenario(scenario, width, duration)
    walker = scenario == "walker"
    patch = face_patch(max(16, round(height * face_height)), _BODY_BOX if walker else _PATCH_BOX)
    ph, pw = patch.shape[:2]
    backgrounds: dict[int, np.ndarray] = {}
    fx, fy, fw, fh = (0.0, 0.0, 1.0, 1.0) if walker else FACE_IN_PATCH

    def patch_left(t: float) -> int | None:
        centre = centre_at(t)
        if centre is None:
            return None
        # The patch's face centre, not the patch's, goes where the scenario says.
        return int(round(centre - (fx + fw / 2) * pw))

    top = (height - ph) // 2

    def frame_at(t: float) -> np.ndarray:
        seed = seed_at(t)
        if seed not in backgrounds:
            backgrounds[seed] = background(width, height, seed)
        img = backgrounds[seed].copy()
        left = patch_left(t)
        if left is not None:
            x0, x1 = max(0, left), min(width, left + pw)
            if x1 > x0:
                img[top:top + ph, x0:x1] = patch[:, x0 - left:x1 - left]
        return img

    def face_at(t: float) -> tuple[float, float, float, float] | None:
        left = patch_left(t)
        if left is None:
            return None
        return (left + fx * pw, top + fy * ph, fw * pw, fh * ph)

    rate = Fraction(fps).limit_denominator(1001)
    count = max(1, math.ceil(duration * fps - 1e-9))
    container = av.open(str(path), "w")
    try:
        stream = container.add_stream("libx264", rate=rate)
        coded_w, coded_h = (height, width) if rotation % 180 == 90 else (width, height)
        stream.width, stream.height, stream.pix_fmt = coded_w, coded_h, "yuv420p"
        if rotation % 360:
            stream.set_display_rotation(-(rotation % 360))  # PyAV counts counter-clockwise
        stream.codec_context.gop_size = max(1, round(fps))
        stream.options = {"preset": "veryfast", "crf": str(crf)}
        for i in range(count):
            upright = frame_at(i / fps)
            # Coded turned back (counter-clockwise by `rotation`), so that it displays upright.
            coded = np.ascontiguousarray(np.rot90(upright, k=(rotation % 360) // 90))
            frame = av.VideoFrame.from_ndarray(coded, format="rgb24")
            frame.pts = i
            frame.time_base = 1 / rate
            container.mux(stream.encode(frame))
        container.mux(stream.encode(None))
    finally:
        container.close()
    return ReframeTruth(size, fps, count / fps, cuts, face_at, frame_at)


def locate_crop(output_rgb: np.ndarray, source_rgb: np.ndarray, crop_w: int,
                crop_h: int) -> tuple[int, int]:
    """Where (x, y in source pixels) a crop of crop_w x crop_h was taken from `source_rgb`, found
    by matching the exported frame, scaled back to the crop's size (here unless it already is),
    against every position: first every 4th, then each one around the best."""
    if output_rgb.shape[:2] != (crop_h, crop_w):
        output_rgb = np.asarray(Image.fromarray(output_rgb).resize(
            (crop_w, crop_h), Image.Resampling.BILINEAR))
    src = source_rgb.astype(np.float32)
    step = 4  # compare every 4th row and column: plenty for smooth noise, 16x cheaper
    probe = output_rgb.astype(np.float32)[::step, ::step]
    sh, sw = src.shape[:2]

    def cost(x: int, y: int) -> float:
        return float(np.abs(src[y:y + crop_h:step, x:x + crop_w:step] - probe).mean())

    xs, ys = range(0, sw - crop_w + 1), range(0, sh - crop_h + 1)
    coarse = min(((x, y) for y in ys[::4] for x in xs[::4]), key=lambda p: cost(*p))
    near = [(x, y) for y in ys if abs(y - coarse[1]) <= 4 for x in xs
            if abs(x - coarse[0]) <= 4]
    return min(near, key=lambda p: cost(*p))
