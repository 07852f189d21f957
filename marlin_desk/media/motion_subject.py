"""Where the picture moves: the subject of a shot in which no face is ever seen.

Someone walking away from the camera, a dancer with their back turned, a dog crossing a yard:
the face detector finds nothing, and the centre crop would lose them. On a still or slowly
moving camera the subject is what changes between two samples, so the box that holds most of
the changed pixels is where the crop should look. Pure numpy on the samples the face pass
decodes anyway (about 0.6 ms a sample at 480x270, bench/reframe.py).

Why not a person detector: none we found ships its weights inside a wheel under a licence we
can bundle, works with numpy 2 and stays small. OpenCV 4.14's HOG people detector (built-in
weights; gone from OpenCV 5.0) took 17-19 ms a 480x270 frame here, found nothing in the
scikit-image cameraman photograph at three sizes, and would add 169 MB to the bundle;
MediaPipe's pose models need numpy < 2 and about 900 MB of dependencies.

What it cannot tell: a moving camera moves everything (too much of the picture changed: no
subject), a subject that stands still does not show (the shot keeps the centre), and two
movers far apart give one box around both, whose centre the path then follows.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from marlin_desk.media.face_detector import FaceBox

MOTION_VERSION = 1  # bump when the boxes change for the same pixels: cached detections miss


@dataclass
class MotionFinder:
    """Fed the samples of one pass in order; each call gives the moving box of that sample
    against the one before, or None.

    block: pixels averaged into one (denoises the sensor grain and the codec's mosquito
    noise); threshold: a change of this many grey levels (of 255) counts as motion;
    min_share / max_share: the share of the picture that must change (less is noise, more is
    a moving camera, a light change or a cut); max_extent: the box may be this wide on one
    axis, not on both (changes spread over the whole picture are not one subject)."""

    block: int = 4
    threshold: float = 14.0
    min_share: float = 0.002
    max_share: float = 0.35
    max_extent: float = 0.6
    _last: np.ndarray | None = field(default=None, repr=False)
    _change: np.ndarray | None = field(default=None, repr=False)

    def feed(self, bgr: np.ndarray) -> FaceBox | None:
        grey = small_grey(bgr, self.block)
        last, self._last = self._last, grey
        if last is None or last.shape != grey.shape:
            self._change = None
            return None
        self._change = np.abs(grey - last)
        moved = self._change > self.threshold
        share = float(moved.mean())
        if not self.min_share <= share <= self.max_share:
            return None
        x0, x1 = _mass_range(moved.sum(axis=0))
        y0, y1 = _mass_range(moved.sum(axis=1))
        h, w = moved.shape
        bw, bh = (x1 - x0) / w, (y1 - y0) / h
        if bw > self.max_extent and bh > self.max_extent:
            return None
        return FaceBox(round(x0 / w, 5), round(y0 / h, 5), round(bw, 5), round(bh, 5),
                       round(min(1.0, share / self.max_share), 3))


    def mouth_motion(self, face: FaceBox) -> float:
        """How much the lower middle of a face (mouth and jaw) changed since the last sample, in
        grey levels: who is speaking, when several faces do not fit in one crop."""
        change = self._change
        if change is None:
            return 0.0
        h, w = change.shape
        x0, x1 = int((face.x + 0.2 * face.w) * w), int(np.ceil((face.x + 0.8 * face.w) * w))
        y0, y1 = int((face.y + 0.55 * face.h) * h), int(np.ceil((face.y + face.h) * h))
        region = change[max(0, y0):min(h, y1), max(0, x0):min(w, x1)]
        return round(float(region.mean()), 2) if region.size else 0.0


def small_grey(bgr: np.ndarray, block: int) -> np.ndarray:
    """The picture's grey levels averaged over block x block pixels (float32)."""
    h, w = bgr.shape[0] // block * block, bgr.shape[1] // block * block
    # one integer sum over each block's pixels and channels: 4x faster than two float means
    total = bgr[:h, :w].reshape(h // block, block, w // block, block, 3).sum(
        axis=(1, 3, 4), dtype=np.uint32)
    return total.astype(np.float32) * (1.0 / (block * block * 3))


def _mass_range(profile: np.ndarray, low: float = 0.1, high: float = 0.9) -> tuple[int, int]:
    """The cells between which the middle 80 % of the moving pixels lie (stray specks of noise
    at the edges do not widen the box)."""
    cumulative = np.cumsum(profile, dtype=np.float64)
    total = cumulative[-1]
    a = int(np.searchsorted(cumulative, low * total))
    b = int(np.searchsorted(cumulative, high * total)) + 1
    return a, max(a + 1, min(len(profile), b))
