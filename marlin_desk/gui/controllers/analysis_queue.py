"""The analysis queue in the app: library videos analysed one after another on the model
worker (LibraryAnalyseRequest: the same workflow as `marlin-desk batch`), in the order the
editor set, paused and resumed, surviving a restart (the order lives in the cache's database,
the progress is the cache's finished windows).

The editor comes first: any other model job (a search, the open video's analysis, a model
load) makes the running queue job stop after its current window (what it finished is kept) and
the queue waits until the model worker is free again. The video the editor opens moves to the
front of the queue. A queue job cancelled from the job bar pauses the queue.

Every store call runs off the GUI thread (a write may wait on the model worker's).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, QTimer, Signal, SignalInstance, Slot

from marlin_desk.gui.controllers.library import LibraryController
from marlin_desk.gui.notifier import Notifier
from marlin_desk.gui.panels.library_videos import LibraryVideos
from marlin_desk.gui.settings import Settings
from marlin_desk.gui.timefmt import count
from marlin_desk.gui.worker import EngineClient
from marlin_desk.gui.worker_protocol import LibraryAnalyseRequest, LibraryAnalyseResult

RETRY_MS = 1500  # how soon the queue looks again after the editor's model jobs end


class QueueController(QObject):
    changed = Signal()  # the queue's rows or state were shown anew
    videoAnalysed = Signal(str)  # fingerprint

    def __init__(self, view: LibraryVideos, library: LibraryController, engine: EngineClient,
                 settings: Settings, notifier: Notifier, opened: SignalInstance,
                 ensure_model: Callable[[], None], parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.view, self.library, self.engine = view, library, engine
        self.settings, self.notifier, self.ensure_model = settings, notifier, ensure_model
        self.cache = library.cache
        self.queue: list[Any] = []  # store.analysis_queue.QueuedVideo, in order
        self.paused = False
        self.job: int | None = None
        self.running: str | None = None  # the fingerprint being analysed
        self.progress: tuple[int, int] | None = None
        self._yielding: set[int] = set()  # queue jobs we stopped for the editor's
        self._looking = False  # a look for the next video is on its way
        self._closing = False
        self._retry = QTimer(self)
        self._retry.setSingleShot(True)
        self._retry.setInterval(RETRY_MS)
        self._retry.timeout.connect(self.dispatch)
        view.queueRequested.connect(self.add)
        view.queueAllRequested.connect(self.add_unanalysed)
        view.dequeueRequested.connect(self.remove)
        view.moveRequested.connect(self.move)
        view.pauseRequested.connect(self.set_paused)
        library.listed.connect(self._show)
        opened.connect(self._on_opened)
        engine.submitted.connect(self._on_submitted)
        engine.progress.connect(self._on_progress)
        engine.finished.connect(self._on_finished)
        engine.failed.connect(self._on_failed)
        engine.cancelled.connect(self._on_cancelled)
        engine.modelReady.connect(lambda *_: self.dispatch())

    # -- the store, off the GUI thread -------------------------------------------------------
    def shutdown(self) -> None:
        """The app quits: the running video stops after its window and stays queued (it resumes
        from the cache at the next start)."""
        self._closing = True
        self._retry.stop()
        if self.job is not None:
            self.engine.cancel(self.job)

    def _change(self, op: Callable[[Any], Any]) -> None:
        """Apply `op` to the queue's store on a worker thread, then show the queue and look for
        work."""
        from marlin_desk.store.analysis_queue import QueueStore

        def job() -> tuple[list[Any], bool]:
            store = QueueStore(self.cache)
            op(store)
            return store.items(), store.paused()

        self.library._run(job, self._on_loaded)

    def _on_loaded(self, outcome: tuple[list[Any], bool]) -> None:
        self.queue, self.paused = outcome
        self._show()
        self.dispatch()

    def _show(self) -> None:
        self.view.show_queue(self.queue, self.paused, self.running, self.progress)
        self.changed.emit()

    @Slot()
    def refresh(self) -> None:
        """Read the queue as the last session left it (and start it unless paused)."""
        if self.cache is not None:
            self._change(lambda _store: None)

    # -- the editor's asks -------------------------------------------------------------------
    @Slot(list)
    def add(self, fingerprints: list[str]) -> None:
        self._change(lambda store: store.add(fingerprints))

    @Slot()
    def add_unanalysed(self) -> None:
        from marlin_desk.library.queue import queue_unanalysed

        self._change(lambda store: queue_unanalysed(store.cache))

    @Slot(list)
    def remove(self, fingerprints: list[str]) -> None:
        """Out of the queue; the running one stops after its window (finished ones are kept)."""
        if self.running in fingerprints and self.job is not None:
            self._yielding.add(self.job)
            self.engine.cancel(self.job)
        self._change(lambda store: store.remove(fingerprints))

    @Slot(str, int)
    def move(self, fingerprint: str, steps: int) -> None:
        self._change(lambda store: store.move(fingerprint, steps))

    @Slot(bool)
    def set_paused(self, paused: bool) -> None:
        """Pausing stops the running video after its current window; resuming goes on from
        the cache's windows."""
        if paused and self.job is not None:
            self._yielding.add(self.job)
            self.engine.cancel(self.job)
        self.notifier.transient("Analysis queue paused" if paused else "Analysis queue resumed",
                                4000)
        self._change(lambda store: store.set_paused(paused))

    @Slot(str)
    def _on_opened(self, path: str) -> None:
        """The video the editor opens goes first, if it is queued."""
        path = os.path.abspath(path)
        queued = [q.fingerprint for q in self.queue if q.path == path]
        if queued:
            self._change(lambda store: store.add(queued, first=True))

    # -- running -----------------------------------------------------------------------------
    def _editor_busy(self) -> bool:
        return any(not isinstance(j.request, LibraryAnalyseRequest) for j in self.engine.active())

    @Slot()
    def dispatch(self) -> None:
        """Start the next waiting video when nothing else needs the model."""
        if self.job is not None or self.paused or self._looking or self.cache is None \
                or self._closing:
            return
        if not any(q.waiting for q in self.queue):
            return
        if self._editor_busy():
            self._retry.start()
            return
        if self.engine.model_info is None:
            self.library.panel.status.setText("The analysis queue waits for the model to load.")
            self.ensure_model()
            return
        from marlin_desk.library.queue import next_waiting

        self._looking = True
        self.library._run(lambda: next_waiting(self.cache), self._start)

    def _start(self, video: Any) -> None:
        self._looking = False
        if video is None or self.job is not None or self.paused or self._editor_busy():
            if video is not None and not self.paused:
                self._retry.start()
            return
        self.running, self.progress = video.fingerprint, None
        self.job = self.engine.submit(LibraryAnalyseRequest(
            video.path, video.fingerprint, window=float(self.settings.get("window_seconds")),
            caption_tokens=int(self.settings.get("caption_tokens")) or None))
        self._show()

    def _ended(self) -> str | None:
        fp, self.job, self.running, self.progress = self.running, None, None, None
        return fp

    @Slot(int, object)
    def _on_submitted(self, job: int, request: object) -> None:
        """The editor's job goes first: the queue's stops after its current window."""
        if not isinstance(request, LibraryAnalyseRequest) and self.job is not None:
            self._yielding.add(self.job)
            self.engine.cancel(self.job)

    @Slot(int, int, int, float, str)
    def _on_progress(self, job: int, done: int, total: int, _eta: float, _msg: str) -> None:
        if job == self.job and self.running is not None:
            self.progress = (done, total)
            self.view.show_progress(self.running, done, total)

    @Slot(int, object, object)
    def _on_finished(self, job: int, _request: object, result: object) -> None:
        if job == self.job and isinstance(result, LibraryAnalyseResult):
            self._ended()
            self.videoAnalysed.emit(result.fingerprint)
            left = sum(1 for q in self.queue if q.waiting) - 1
            self.library.panel.status.setText(
                f"Analysed {count(result.windows, 'window')}"
                f"{f' ({result.resumed} from the cache)' if result.resumed else ''}; "
                f"{count(max(left, 0), 'video')} left in the queue")
            self._change(lambda store: store.remove([result.fingerprint]))
            self.library.refresh()  # its state, and the index, now include it
        elif job != self.job:
            self._retry.start()  # one of the editor's jobs ended: the queue may go on

    @Slot(int, object, str)
    def _on_failed(self, job: int, request: object, message: str) -> None:
        if job == self.job:
            fp = self._ended()
            name = os.path.basename(getattr(request, "video", "") or "")
            self.notifier.error(f"The queue could not analyse {name}: {message}")
            if fp is not None:
                self._change(lambda store: store.set_failed(fp, message))
        else:
            self._retry.start()

    @Slot(int, object)
    def _on_cancelled(self, job: int, _request: object) -> None:
        if self._closing:
            return
        if job != self.job:
            self._retry.start()
            return
        self._ended()
        if job in self._yielding:  # we stopped it: it goes on when the editor's job is done
            self._yielding.discard(job)
            self._show()
            self._retry.start()
        else:  # cancelled from the job bar: the editor wants the model to rest
            self.set_paused(True)
