"""Thumbnails of library results: the frame at each result's start, decoded off the GUI thread
(a seek to the keyframe before it, then decoding up to the moment), smallest first so the list
fills at once. Offline or unreadable files simply get no picture."""

from __future__ import annotations

import logging
from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtGui import QImage

from marlin_desk.gui.media_workers import _Worker, frame_to_qimage

log = logging.getLogger(__name__)

THUMB_HEIGHT = 40  # pixels: two lines of the results list


class HitThumbnails(_Worker):
    thumbnail = Signal(int, QImage)  # the result's row, its picture

    def __init__(self, hits: list[tuple[int, str, float]], height: int = THUMB_HEIGHT,
                 parent: Any = None) -> None:
        super().__init__(parent)
        self.hits, self.height = hits, height

    def work(self) -> None:
        for row, path, t in self.hits:
            if self.cancelled:
                return
            try:
                image = frame_at(path, t, self.height)
            except Exception as exc:  # noqa: BLE001 - a picture is a nicety: never an error
                log.debug("no thumbnail for %s at %.2f: %s", path, t, exc)
                continue
            if image is not None:
                self.thumbnail.emit(row, image)


def frame_at(path: str, t: float, height: int) -> QImage | None:
    """The frame shown at video time `t` (probe's start offset and rotation applied)."""
    import av

    from marlin_desk.media.probe import probe

    info = probe(path)
    with av.open(path) as container:
        stream = container.streams.video[0]
        tb = float(stream.time_base or 0) or 1 / 90000
        target = t + info.start_time
        container.seek(int(target / tb), stream=stream, backward=True)
        last = None
        for frame in container.decode(stream):
            if frame.time is not None and float(frame.time) > target + 1e-3 and last is not None:
                break
            last = frame
        return None if last is None else frame_to_qimage(last, height, info.rotation)
