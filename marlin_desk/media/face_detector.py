"""Faces in a small picture: the one module that imports the detector package (`yuface`).

Why yuface (libfacedetection by Shiqi Yu, BSD-3-Clause, weights compiled into a 324 KB native
library, so nothing is downloaded at run time and the bundle needs no model file): measured here
(bench numbers in docs/reframe.md) at 9 ms a 480x270 frame on 2 cores, finding the astronaut's
face at every size tried (23 to 66 px wide); OpenCV 4.14's Haar cascade took 15 ms and missed
the smallest; MediaPipe 0.10.21 took 2.2 ms but wants numpy < 2 (the app has 2.x) and brings
about 900 MB of dependencies (jax, jaxlib, matplotlib, opencv-contrib). OpenCV 5.0 (what the
index gives now) ships neither the Haar cascades nor the HOG person detector, and its
`FaceDetectorYN` needs an ONNX file that no wheel we found carries.

yuface has wheels for Linux and Windows, not macOS: there `available()` says why and reframing
follows what moves instead (media/motion_subject.py), with that reason in the export report.

Boxes come back as fractions of the picture, so callers never see the detection size.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

DETECTOR = "yuface"
DETECTOR_VERSION = 1  # bump when boxes change for the same pixels: cached detections then miss

_OPENMP_ENV = {"OMP_NUM_THREADS": "1", "OMP_WAIT_POLICY": "PASSIVE"}
_lock = threading.Lock()  # the C library keeps one network; calls from two threads serialise
_module: Any = None
_missing: str | None = None


@dataclass(frozen=True)
class FaceBox:
    """One face: the box as fractions of the picture (x, y of the top-left corner), the
    detector's confidence in 0..1 and, with several faces, how much its mouth moved since the
    last sample (grey levels; media/motion_subject)."""

    x: float
    y: float
    w: float
    h: float
    score: float
    talk: float = 0.0

    @property
    def cx(self) -> float:
        return self.x + self.w / 2

    @property
    def cy(self) -> float:
        return self.y + self.h / 2

    @property
    def area(self) -> float:
        return self.w * self.h

    def to_json(self) -> list[float]:
        box = [round(self.x, 5), round(self.y, 5), round(self.w, 5), round(self.h, 5),
               round(self.score, 3)]
        return box + [round(self.talk, 2)] if self.talk else box

    @classmethod
    def from_json(cls, v: list[float]) -> FaceBox:
        x, y, w, h, score, *talk = (float(a) for a in v)
        return cls(x, y, w, h, score, talk[0] if talk else 0.0)


def _load() -> Any:
    global _module, _missing
    if _module is None and _missing is None:
        try:
            with _one_openmp_thread():
                import yuface  # the one import of the detector package (see .importlinter)

            _module = yuface
        except ImportError as exc:  # no wheel for this platform (macOS) or a broken install
            _missing = f"no face detector on this machine (yuface: {exc})"
    return _module


@contextlib.contextmanager
def _one_openmp_thread() -> Iterator[None]:
    """yuface's own OpenMP runtime reads these when it loads. With its default (a thread per
    core, spinning between frames) it fought FFmpeg's decoder for the two cores: a 20 s 1080p
    span took 8.1 s to analyse, 3.2 s with one passive thread (bench/reframe.py). The variables
    are put back at once: other libraries (torch) load their own OpenMP copy and read them then.
    """
    saved = {k: os.environ.get(k) for k in _OPENMP_ENV}
    os.environ.update(_OPENMP_ENV)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def available() -> str | None:
    """None when faces can be detected here, else the reason (said in the export report)."""
    _load()
    return _missing


def detect_faces(bgr: np.ndarray, min_confidence: float = 0.6) -> list[FaceBox]:
    """Faces in an (H, W, 3) uint8 BGR picture, most confident first; [] without a detector."""
    module = _load()
    if module is None:
        return []
    if bgr.ndim != 3 or bgr.shape[2] != 3 or bgr.dtype != np.uint8:
        raise ValueError(f"need an (H, W, 3) uint8 picture, not {bgr.shape} {bgr.dtype}")
    h, w = bgr.shape[:2]
    with _lock:
        # The C function returns every candidate with a 0..100 score; filter here rather than
        # through yuface.detect, which warns on pictures over 960 px.
        raw = np.asarray(module.c_detect(np.ascontiguousarray(bgr)))
    faces: list[FaceBox] = []
    # Rows: score, x, y, w, h, five landmark points, then a spare column.
    for row in raw.reshape(-1, raw.shape[-1]) if raw.size else ():
        score = float(row[0]) / 100.0
        if score < min_confidence:
            continue
        bx, by, bw, bh = (float(v) for v in row[1:5])
        x0, y0 = max(0.0, bx), max(0.0, by)
        x1, y1 = min(float(w), bx + bw), min(float(h), by + bh)
        if x1 <= x0 or y1 <= y0:
            continue
        # Rounded as the cache stores them, so a cached analysis is the same as a fresh one.
        faces.append(FaceBox(round(x0 / w, 5), round(y0 / h, 5), round((x1 - x0) / w, 5),
                             round((y1 - y0) / h, 5), round(score, 3)))
    faces.sort(key=lambda f: -f.score)
    return faces
