"""Two people who do not fit in one 9:16 crop: the crop goes to the one whose mouth moves.

The video: two copies of the astronaut photograph, the larger one on the left silent, the
smaller one on the right with her mouth and jaw moving (the lower middle of her face shifted a
few pixels on every other frame), over the textured background. The same video with both
silent keeps today's rule: the largest face."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import av
import numpy as np

from marlin_desk.dev.reframe_videos import FACE_IN_PATCH, background, face_patch
from marlin_desk.media.probe import probe
from marlin_desk.media.reframe_detect import detect_span
from marlin_desk.media.reframe_path import compute_path

W, H, FPS, SECONDS = 640, 360, 25, 4.0


def _talking(patch: np.ndarray, drop: int) -> np.ndarray:
    """The patch with the mouth and jaw moved down `drop` px."""
    fx, fy, fw, fh = FACE_IN_PATCH
    ph, pw = patch.shape[:2]
    y0, y1 = int((fy + 0.55 * fh) * ph), int((fy + fh) * ph)
    x0, x1 = int((fx + 0.2 * fw) * pw), int((fx + 0.8 * fw) * pw)
    out = patch.copy()
    if drop:
        out[y0 + drop:y1, x0:x1] = patch[y0:y1 - drop, x0:x1]
    return out


def _two_people(path: Path, right_talks: bool) -> tuple[float, float]:
    """Write the video; returns the two face centres (x in pixels): left, right."""
    big, small = face_patch(round(H * 0.5)), face_patch(round(H * 0.42))
    fx, _, fw, _ = FACE_IN_PATCH
    left_x = round(0.2 * W - (fx + fw / 2) * big.shape[1])
    right_x = round(0.8 * W - (fx + fw / 2) * small.shape[1])
    base = background(W, H, 1)
    rng = np.random.default_rng(7)  # speech is no rhythm the sampling could fall in step with
    with av.open(str(path), "w") as container:
        stream = container.add_stream("libx264", rate=Fraction(FPS))
        stream.width, stream.height, stream.pix_fmt = W, H, "yuv420p"
        stream.options = {"preset": "veryfast", "crf": "18"}
        for i in range(int(SECONDS * FPS)):
            img = base.copy()
            img[40:40 + big.shape[0], left_x:left_x + big.shape[1]] = big
            face = _talking(small, int(rng.integers(0, 4)) * 2) if right_talks else small
            img[70:70 + small.shape[0], right_x:right_x + small.shape[1]] = face
            frame = av.VideoFrame.from_ndarray(img, format="rgb24")
            frame.pts = i
            container.mux(stream.encode(frame))
        container.mux(stream.encode(None))
    return (left_x + (fx + fw / 2) * big.shape[1], right_x + (fx + fw / 2) * small.shape[1])


def test_the_crop_goes_to_the_face_that_speaks(tmp_path: Path) -> None:
    for right_talks, want in ((True, "right"), (False, "left")):
        video = tmp_path / f"two-{want}.mp4"
        left, right = _two_people(video, right_talks)
        info = probe(str(video))
        det = detect_span(str(video), info, 0.0, info.duration, cuts=[])
        assert all(len(s.faces) == 2 for s in det.samples), [len(s.faces) for s in det.samples]
        path = compute_path(det, 1080, 1920)
        later = [s.t for s in det.samples if s.t >= 1.0]
        face = right if want == "right" else left
        held = sum(path.crop_at(t).x <= face <= path.crop_at(t).x + path.crop_w
                   for t in later)
        assert held / len(later) >= 0.9, f"{want}: {held} of {len(later)}"
