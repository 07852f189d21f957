"""The footage library in the app: folders added and rescanned, every analysed video searched
at once (library.search_library's index stage, the same call as `marlin-desk library search`),
and a result opened at its moment. Scans and searches run on a worker thread."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, Signal, SignalInstance, Slot

from marlin_desk.gui.document import Document
from marlin_desk.gui.media_workers import _Worker
from marlin_desk.gui.notifier import Notifier
from marlin_desk.gui.panels.library import LibraryPanel
from marlin_desk.gui.player import PlayerWidget
from marlin_desk.gui.timefmt import count
from marlin_desk.gui.worker import EngineClient
from marlin_desk.gui.worker_protocol import LibrarySearchRequest, LibrarySearchResult


class _Call(_Worker):
    """Run one function off the GUI thread and hand its result back."""

    done = Signal(object)

    def __init__(self, fn: Callable[[], Any], parent: Any = None) -> None:
        super().__init__(parent)
        self.fn = fn

    def work(self) -> None:
        self.done.emit(self.fn())


class LibraryController(QObject):
    searched = Signal(object)  # library.search.SearchResult
    listed = Signal()

    def __init__(self, panel: LibraryPanel, cache: Any, notifier: Notifier, doc: Document,
                 player: PlayerWidget, opened: SignalInstance,
                 open_video: Callable[[str], bool], engine: EngineClient | None = None,
                 parent: QObject | None = None,
                 add_clips: Callable[[list[Any]], Any] | None = None) -> None:
        super().__init__(parent)
        self.engine = engine
        self._job: int | None = None
        if engine is not None:
            engine.finished.connect(self._on_model_result)
            engine.failed.connect(self._on_model_failed)
        self.panel, self.cache, self.notifier = panel, cache, notifier
        self.doc, self.player, self.open_video = doc, player, open_video
        self.result: Any = None
        self._workers: list[_Worker] = []
        self._thumbs: Any = None  # the results' thumbnail worker
        self._pending: tuple[str, float, float] | None = None
        self.add_clips = add_clips
        self._pending_bin: tuple[str, list[Any]] | None = None  # hits waiting for their video
        panel.addFolderRequested.connect(self.add_folder)
        panel.rescanRequested.connect(self.rescan)
        panel.searchRequested.connect(self.search)
        panel.hitActivated.connect(self.open_at)
        panel.addHitsRequested.connect(self.add_to_bin)
        panel.videoActivated.connect(open_video)
        opened.connect(self._on_opened)

    @Slot(str, float, float)
    def open_at(self, path: str, start: float, end: float) -> None:
        """Show a library result: its video (opened first when it is another one, after the
        Save changes? question) playing the moment round and round."""
        if os.path.abspath(path) == self.doc.video:
            self.player.set_loop(start, end)
        elif self.open_video(path):
            self._pending = (os.path.abspath(path), start, end)

    @Slot(str)
    def _on_opened(self, path: str) -> None:
        """A video opened in the app joins the library, so its analysis is searched too."""
        from marlin_desk.library import scan

        pending, self._pending = self._pending, None
        if pending is not None and pending[0] == path:
            self.player.set_loop(pending[1], pending[2])
        waiting, self._pending_bin = self._pending_bin, None
        if waiting is not None and waiting[0] == path and self.add_clips is not None:
            self.add_clips(waiting[1])
        if self.cache is None:  # no cache, no library: the app works on without it
            return
        self._run(lambda: (scan.add([path], self.cache), scan.videos(self.cache)),
                  self._on_scanned)

    @Slot(list)
    def add_to_bin(self, rows: list[int]) -> None:
        """The selected results become clips of the open video's bin, whichever video they
        are in; with no video open, the first result's video opens and takes them."""
        hits = [self.result.hits[r] for r in rows
                if self.result is not None and 0 <= r < len(self.result.hits)]
        offline = [h for h in hits if not h.online]
        hits = [h for h in hits if h.online]
        if offline:
            self.notifier.error(f"{count(len(offline), 'result')} left out: the video is "
                                "offline (missing); rescan once it is back.")
        if not hits or self.add_clips is None:
            if not offline:
                self.notifier.error("Select library results first (search the library).")
            return
        if self.doc.video:
            self.add_clips(hits)
        elif self.open_video(hits[0].path):
            self._pending_bin = (os.path.abspath(hits[0].path), hits)

    def _run(self, fn: Callable[[], Any], on_done: Callable[[Any], None]) -> None:
        if self.cache is None:
            self.notifier.error("The library needs the analysis cache, which cannot be opened.")
            return
        worker = _Call(fn, self)
        worker.done.connect(on_done)
        worker.failed.connect(lambda m: self.notifier.error(f"Library: {m}"))
        worker.finished.connect(lambda w=worker: self._forget(w))
        self._workers.append(worker)
        worker.start()

    def _forget(self, worker: _Worker) -> None:
        if worker in self._workers:
            self._workers.remove(worker)
        worker.deleteLater()

    @Slot(str)
    def add_folder(self, folder: str) -> None:
        from marlin_desk.library import scan

        self.panel.status.setText(f"Adding {folder}…")
        self._run(lambda: (scan.add([folder], self.cache), scan.videos(self.cache)),
                  self._on_scanned)

    @Slot()
    def rescan(self) -> None:
        from marlin_desk.library import scan

        self.panel.status.setText("Looking again at the library's folders…")
        self._run(lambda: (scan.scan(self.cache), scan.videos(self.cache)), self._on_scanned)

    @Slot()
    def refresh(self) -> None:
        from marlin_desk.library import scan

        self._run(lambda: (None, scan.videos(self.cache)), self._on_scanned)

    def _on_scanned(self, outcome: Any) -> None:
        report, videos = outcome
        self.panel.show_videos(videos)
        if report is not None:
            offline = sum(1 for v in videos if not v.online)
            more = f", {offline} offline" if offline else ""
            self.panel.status.setText(f"{count(len(videos), 'video')} in the library{more}")
        self.listed.emit()

    @Slot(str)
    def search(self, query: str) -> None:
        """With a model loaded, both stages on the model worker (the spans from Marlin's find
        in the best windows); without one, the index alone on a worker thread."""
        from marlin_desk.library.search import search_library

        self.panel.status.setText(f"Searching the library for “{query}”…")
        if self.engine is not None and self.engine.model_info is not None \
                and self.cache is not None:
            self._job = self.engine.submit(LibrarySearchRequest(query))
            return
        self._run(lambda: search_library(query, cache=self.cache), self._on_searched)

    @Slot(int, object, object)
    def _on_model_result(self, job: int, _request: object, result: object) -> None:
        if job == self._job and isinstance(result, LibrarySearchResult):
            self._job = None
            self._on_searched(result.result)

    @Slot(int, object, str)
    def _on_model_failed(self, job: int, _request: object, message: str) -> None:
        if job == self._job:
            self._job = None
            self.notifier.error(f"The library search failed: {message}")

    def _on_searched(self, result: Any) -> None:
        self.result = result
        self.panel.show_hits(result)
        self._thumbnails([(row, h.path, h.start) for row, h in enumerate(result.hits)
                          if h.online])
        self.searched.emit(result)

    def _thumbnails(self, hits: list[tuple[int, str, float]]) -> None:
        """Each result's picture, decoded off the GUI thread (the last search's only)."""
        from marlin_desk.gui.hit_thumbnails import HitThumbnails

        if self._thumbs is not None:
            self._thumbs.cancel()
        if not hits:
            return
        worker = HitThumbnails(hits, parent=self)
        worker.thumbnail.connect(lambda row, image, w=worker: w is self._thumbs
                                 and self.panel.set_thumbnail(row, image))
        worker.finished.connect(lambda w=worker: self._forget(w))
        self._thumbs = worker
        self._workers.append(worker)
        worker.start()

    def shutdown(self) -> None:
        for worker in list(self._workers):
            worker.cancel()
        for worker in list(self._workers):
            worker.wait(5000)
