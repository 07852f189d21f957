"""The detector and the detection pass on real files: where the face is, cuts, time bases,
rotation, start offsets, cancel, and the one module that imports the detector."""

from __future__ import annotations

import ast
import threading
from pathlib import Path

import numpy as np
import pytest

from marlin_desk.core.errors import BadInput, Cancelled
from marlin_desk.core.reframe import ReframeSettings
from marlin_desk.dev.reframe_videos import FACE_IN_PATCH, background, face_patch
from marlin_desk.dev.videos import make_video
from marlin_desk.media import face_detector
from marlin_desk.media.probe import probe
from marlin_desk.media.reframe_detect import detect_span, detection_size, frame_size

from .conftest import Footage

PACKAGE = Path(face_detector.__file__).resolve().parent.parent


def test_the_detector_finds_the_photographed_face_where_the_builder_says() -> None:
    assert face_detector.available() is None
    patch = np.ascontiguousarray(face_patch(200)[:, :, ::-1])
    faces = face_detector.detect_faces(patch)
    assert len(faces) == 1
    box = faces[0]
    for got, want in zip((box.x, box.y, box.w, box.h), FACE_IN_PATCH, strict=True):
        assert got == pytest.approx(want, abs=0.03)
    assert face_detector.detect_faces(np.ascontiguousarray(background(320, 180, 1))) == []
    with pytest.raises(ValueError):
        face_detector.detect_faces(np.zeros((10, 10), np.uint8))


def test_only_face_detector_imports_the_detector_package() -> None:
    importers = []
    for file in PACKAGE.rglob("*.py"):
        tree = ast.parse(file.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import) else
                     [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            if any(n.split(".")[0] == "yuface" for n in names):
                importers.append(file.relative_to(PACKAGE).as_posix())
    assert importers == ["media/face_detector.py"]


def test_samples_at_the_detection_rate_with_the_cut(footage: Footage) -> None:
    video, truth = footage("two_shots")
    info = probe(str(video))
    seen: list[float] = []
    det = detect_span(str(video), info, 0.5, 2.9, on_progress=seen.append)
    assert det.cuts == (pytest.approx(truth.cuts[0], abs=1 / truth.fps),)
    times = [s.t for s in det.samples]
    assert times[0] == pytest.approx(0.52, abs=1e-6)  # the first frame at or after 0.5
    assert all(0.19 <= b - a <= 0.21 for a, b in zip(times, times[1:], strict=False))
    assert all(len(s.faces) == 1 for s in det.samples)
    for s in det.samples:
        face = truth.face_at(s.t)
        assert face is not None
        assert s.faces[0].cx * 640 == pytest.approx(face[0] + face[2] / 2, abs=6)
    assert seen[-1] == 1.0 and seen == sorted(seen)
    given = detect_span(str(video), info, 0.5, 2.9, cuts=[0.2, 1.0, 5.0])
    assert given.cuts == (1.0,)  # the caller's cuts, inside the span only
    # With the cuts known only reference frames are decoded; the clip's first frame is still
    # the exact one (from packet times), since the export's crop times count from it.
    assert det.first_frame == given.first_frame == pytest.approx(0.52, abs=1e-6)


def test_rotated_offset_and_vfr_sources(tmp_path: Path) -> None:
    rotated = make_video(tmp_path / "rot.mp4", size=(160, 96), rotation=90, duration=1.0,
                         frame_code=False)
    info = probe(str(rotated))
    assert frame_size(info) == (96, 160)
    det = detect_span(str(rotated), info, 0.0, 1.0)
    assert (det.frame_w, det.frame_h) == (96, 160) and len(det.samples) == 5
    late = make_video(tmp_path / "late.mkv", duration=2.0, start_offset=3.0, vfr="jitter",
                      frame_code=False)
    info = probe(str(late))
    det = detect_span(str(late), info, 1.0, 2.0)
    assert det.samples and 1.0 - 1e-3 <= det.samples[0].t < 1.1
    assert all(s.t < 2.0 for s in det.samples)
    assert detection_size(1920, 1080, 480) == (480, 270)
    assert detection_size(1081, 1921, 480) == (270, 480)


def test_cancel_and_bad_spans(footage: Footage) -> None:
    video, _ = footage("moving")
    info = probe(str(video))
    stop = threading.Event()
    stop.set()
    with pytest.raises(Cancelled):
        detect_span(str(video), info, 0.0, 3.0, cancel=stop)
    with pytest.raises(BadInput):
        detect_span(str(video), info, 2.0, 1.0)
    with pytest.raises(ValueError):
        ReframeSettings(detect_fps=0)
