"""What moves, when no face is seen (media/motion_subject), on frames of the real photograph."""

from __future__ import annotations

import numpy as np
import pytest

from marlin_desk.dev.reframe_videos import background, face_patch
from marlin_desk.media import face_detector
from marlin_desk.media.motion_subject import MotionFinder
from marlin_desk.media.probe import probe
from marlin_desk.media.reframe_detect import detect_span
from marlin_desk.media.reframe_path import compute_path

from .conftest import Footage


def _frame(left: int | None, seed: int = 1) -> np.ndarray:
    img = background(480, 270, seed).copy()
    if left is not None:
        patch = face_patch(120, (100, 250, 360, 512))  # her suit: no face in it
        img[150:270, left:left + patch.shape[1]] = patch
    return np.ascontiguousarray(img[:, :, ::-1])


def test_the_box_is_where_the_subject_moved() -> None:
    finder = MotionFinder()
    assert finder.feed(_frame(100)) is None  # nothing to compare with yet
    box = finder.feed(_frame(118))
    assert box is not None
    # the patch spans x 100..237 then 118..255 of 480: the box lies over it, not elsewhere
    assert box.x >= 100 / 480 - 0.02 and box.x + box.w <= 255 / 480 + 0.02
    assert box.y >= 150 / 270 - 0.03


def test_still_pictures_noise_and_cuts_are_not_a_subject() -> None:
    finder = MotionFinder()
    finder.feed(_frame(100))
    assert finder.feed(_frame(100)) is None  # nothing moved
    rng = np.random.default_rng(0)
    grain = np.clip(_frame(100).astype(np.int16) + rng.normal(0, 4, (270, 480, 3)), 0, 255)
    assert finder.feed(grain.astype(np.uint8)) is None  # sensor grain
    assert finder.feed(_frame(100, seed=2)) is None  # a cut: the whole picture changed


def test_without_a_face_detector_the_pass_still_follows_what_moves(
        footage: Footage, monkeypatch: pytest.MonkeyPatch) -> None:
    # as on macOS, where yuface has no wheel
    monkeypatch.setattr(face_detector, "_module", None)
    monkeypatch.setattr(face_detector, "_missing", "no face detector on this machine (test)")
    video, _ = footage("moving")  # her face walks across: motion is all that is seen
    info = probe(str(video))
    det = detect_span(str(video), info, 0.0, info.duration, cuts=[])
    assert det.detector == "motion 1" and "following what moves" in (det.note or "")
    assert not any(s.faces for s in det.samples)
    moving = [s.moving for s in det.samples if s.moving is not None]
    assert len(moving) >= 0.8 * len(det.samples)
    assert moving[-1].cx - moving[0].cx > 0.3  # left to right, as she walks
    path = compute_path(det, 1080, 1920)
    assert path.summary()["shots_following_motion"] == 1
