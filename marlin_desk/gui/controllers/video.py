"""Opening a video: probe, fingerprint and cached analysis on a worker (workflows.open_cached,
as the commands do), then the player, the timeline's duration, the filmstrip and waveform
workers. Opening another video first stops everything that belonged to the last one."""

from __future__ import annotations

import contextlib
import logging
import os
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, QTimer, Signal, Slot
from PySide6.QtGui import QImage, QPixmap

from marlin_desk.core.project import Project
from marlin_desk.gui.document import Document
from marlin_desk.gui.media_workers import (
    OpenWorker,
    ShotsWorker,
    ThumbnailWorker,
    WaveformWorker,
)
from marlin_desk.gui.notifier import Notifier
from marlin_desk.gui.player import PlayerWidget
from marlin_desk.gui.statusbar import JobBar
from marlin_desk.gui.timeline import TimelineWidget

log = logging.getLogger(__name__)

FLUSH_MS = 100


def open_cache() -> Any:
    """The analysis cache, or None when it cannot be opened (the app works without it)."""
    try:
        from marlin_desk.store import AnalysisCache

        return AnalysisCache()
    except Exception as exc:  # noqa: BLE001 - the cache is an optimisation
        log.warning("analysis cache unavailable: %s", exc)
        return None


class VideoController(QObject):
    opened = Signal(str)  # the video's absolute path, once it shows
    openFailed = Signal(str)  # the plain message
    # the open succeeded: (OpenedVideo, the project to apply or None)
    loaded = Signal(object, object)
    shotsFound = Signal(object)  # list[float]: the open video's shot changes

    def __init__(self, doc: Document, player: PlayerWidget, timeline: TimelineWidget,
                 jobs: JobBar, notifier: Notifier, cache: Any, parent: QObject | None = None,
                 ) -> None:
        super().__init__(parent)
        self.doc, self.player, self.timeline = doc, player, timeline
        self.jobs, self.notifier, self.cache = jobs, notifier, cache
        self.opening = ""
        self._open_worker: OpenWorker | None = None
        self._project: Project | None = None
        self._media_workers: list[Any] = []
        self._thumbs: list[tuple[float, QImage]] = []
        self._flush = QTimer(self)
        self._flush.setSingleShot(True)
        self._flush.setInterval(FLUSH_MS)
        self._flush.timeout.connect(self._flush_thumbs)
        player.mediaError.connect(self._on_media_error)

    def open(self, path: str, project: Project | None = None) -> None:
        """Start opening; the current video stays until the new one has opened."""
        path = os.path.abspath(path)
        self._project = project
        worker = OpenWorker(path, self.cache, self)
        worker.opened.connect(self._on_opened)
        worker.failed.connect(self._on_failed)
        worker.finished.connect(worker.deleteLater)
        self._open_worker, self.opening = worker, path
        self.jobs.add(("open", path), f"Opening {Path(path).name}", None)
        worker.start()

    @Slot(str)
    def _on_failed(self, message: str) -> None:
        self.jobs.remove(("open", self.opening))
        self._project = None
        text = f"Cannot open {Path(self.opening).name}: {message}"
        self.notifier.error(text)
        self.openFailed.emit(text)

    @Slot(object)
    def _on_opened(self, opened: Any) -> None:
        self.jobs.remove(("open", self.opening))
        self.close_media()
        info = opened.info
        path = os.path.abspath(info.path if os.path.isabs(info.path) else self.opening)
        self.doc.load_video(path, info, opened.fingerprint)
        self.timeline.reset_view(info.duration)
        self.player.open(path, info.fps)
        self._start_media_workers(path, info)
        project, self._project = self._project, None
        self.loaded.emit(opened, project)
        self.opened.emit(path)

    def close_media(self) -> None:
        """Stop the player and the media workers of the open video, clear its pictures."""
        self._stop_media_workers()
        self.player.close_media()
        self.timeline.data.clear_media()

    # -- filmstrip and waveform ----------------------------------------------------------------
    def _start_media_workers(self, path: str, info: Any) -> None:
        thumbs = ThumbnailWorker(path, info.duration, info.start_time,
                                 rotation=int(getattr(info, "rotation", 0) or 0), parent=self)
        thumbs.thumbnail.connect(self._on_thumbnail)
        wave = WaveformWorker(path, info.start_time, parent=self)
        wave.waveform.connect(self._on_waveform)
        shots = ShotsWorker(path, self.cache, info, parent=self)
        shots.shots.connect(self._on_shots)
        for w in (thumbs, wave, shots):
            w.failed.connect(self._on_media_worker_failed)
            self._media_workers.append(w)
            w.start(w.Priority.LowPriority)

    def _stop_media_workers(self) -> None:
        for w in self._media_workers:
            w.cancel()
        for w in self._media_workers:
            w.wait(5000)
        self._media_workers = []
        self._thumbs = []

    def wait_for_open(self, ms: int = 5000) -> None:
        if self._open_worker is not None:
            with contextlib.suppress(RuntimeError):  # already deleted
                self._open_worker.wait(ms)

    @Slot(float, QImage)
    def _on_thumbnail(self, t: float, image: QImage) -> None:
        self._thumbs.append((t, image))
        if len(self.timeline.data.thumbs) == 0:
            self._flush_thumbs()  # the first one at once: the filmstrip appears quickly
        elif not self._flush.isActive():
            self._flush.start()

    @Slot()
    def _flush_thumbs(self) -> None:
        thumbs, self._thumbs = self._thumbs, []
        for t, image in thumbs:
            self.timeline.data.add_thumb(t, QPixmap.fromImage(image))
        if thumbs:
            self.timeline.update()

    @Slot(object, float)
    def _on_waveform(self, peaks: object, step: float) -> None:
        self.timeline.data.wave, self.timeline.data.wave_step = peaks, step
        self.timeline.update()

    @Slot(object)
    def _on_shots(self, cuts: object) -> None:
        self.timeline.data.shots = list(cuts)  # type: ignore[call-overload]
        self.timeline.update()
        self.shotsFound.emit(self.timeline.data.shots)

    @Slot(str)
    def _on_media_worker_failed(self, message: str) -> None:
        log.info("thumbnail/waveform worker: %s", message)  # cosmetic: not worth a red bar

    @Slot(str)
    def _on_media_error(self, message: str) -> None:
        if self.doc.video:
            self.notifier.error(f"The player cannot play this file: {message}")

    def shutdown(self) -> None:
        self._stop_media_workers()
        self.wait_for_open()
        self.player.close_media()
