"""The main window: its widgets (laid out by window_layout.py) wired to the
controllers that hold the behaviour (controllers/: model jobs, edits, the open video, export,
the project). Menus and shortcuts come from a table (actions.py).

Everything slow happens on a worker; nothing here lets an exception from a bad file, a failed
model load or a failed export end the app.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import QSize, QTimer, Signal, Slot
from PySide6.QtGui import QUndoStack
from PySide6.QtWidgets import (
    QApplication,
    QFileDialog,
    QMainWindow,
)

from marlin_desk.core import project as projfile
from marlin_desk.core.media_types import dialog_filter
from marlin_desk.core.project import Clip, Project
from marlin_desk.gui import timefmt
from marlin_desk.gui.actions import install_menus
from marlin_desk.gui.controllers.analysis_queue import QueueController
from marlin_desk.gui.controllers.dialogs import Dialogs
from marlin_desk.gui.controllers.edits import EditsController
from marlin_desk.gui.controllers.export import ExportController
from marlin_desk.gui.controllers.library import LibraryController
from marlin_desk.gui.controllers.model_jobs import ModelJobs
from marlin_desk.gui.controllers.navigation import Navigation
from marlin_desk.gui.controllers.project import ProjectController
from marlin_desk.gui.controllers.reframe import ReframeController
from marlin_desk.gui.controllers.speech import SpeechController
from marlin_desk.gui.controllers.video import VideoController, open_cache
from marlin_desk.gui.controllers.views import ViewSync
from marlin_desk.gui.document import Document
from marlin_desk.gui.keys import FocusedButtonKeys
from marlin_desk.gui.notifier import Notifier
from marlin_desk.gui.settings import Settings
from marlin_desk.gui.timefmt import count
from marlin_desk.gui.window_layout import build_views
from marlin_desk.gui.worker import EngineClient
from marlin_desk.paths import data_dir
from marlin_desk.workflows.reframe import ReframeCache


class MainWindow(QMainWindow):
    videoOpened = Signal(str)
    analysisFinished = Signal(object)
    findFinished = Signal(str, object)
    errorShown = Signal(str)

    def __init__(self, settings: Settings | None = None, *, cache: Any = "default",
                 autoload_model: bool = True, model: str | None = None,
                 confirm: Callable[[str], bool] | None = None,
                 ask_save: Callable[[str], str] | None = None,
                 ask_quit_export: Callable[[], str] | None = None,
                 autosave_dir: str | os.PathLike[str] | None = None) -> None:
        super().__init__()
        self.settings = settings or Settings()
        timefmt.set_display(self.settings.get("time_display"), None)  # #20.14: no video yet
        self.cache = open_cache() if cache == "default" else cache
        self.setWindowTitle("Marlin Desk")
        self.setAcceptDrops(True)
        self.resize(1400, 900)
        self.doc = Document(self)
        self.undo_stack = QUndoStack(self)
        self.engine = EngineClient(self.cache, self)
        build_views(self)
        self.notifier = Notifier(self.messages, self.notice, self)
        self.edits = EditsController(self.doc, self.undo_stack,
                                     lambda: str(self.settings.get("default_preset")), self)
        self.model_jobs = ModelJobs(self.engine, self.doc, self.undo_stack, self.settings,
                                    self.notifier, self.jobs, self.model_label,
                                    self.search_panel, model, self)
        self.video = VideoController(self.doc, self.player, self.timeline, self.jobs,
                                     self.notifier, self.cache, self)
        # one reframing cache for the preview and the export: the export reuses detections
        self.reframe_cache = ReframeCache(shots=self.cache)
        self.exports = ExportController(self.doc, self.settings, self.notifier, self.jobs,
                                        self.clips_panel, self.clips_dock, self, self,
                                        cache=self.cache,
                                        reframe_detections=self.reframe_cache.detections)
        self.reframe = ReframeController(
            self.doc, self.undo_stack, self.player, self.clips_panel, self.jobs, self.notifier,
            self.reframe_cache, self, export_fill=lambda: self.settings.export_choices()["fill"])
        self.exports.choicesChanged.connect(self.reframe.refresh)
        self.views = ViewSync(self.doc, self.player, self.timeline, self.events_panel,
                              self.search_panel, self.clips_panel, self)
        self.dialogs = Dialogs(self, self.settings, self.model_jobs, self.notifier, self)
        self.navigation = Navigation(self.doc, self.player, self.notifier, self)
        self.library = LibraryController(self.library_panel, self.cache, self.notifier,
                                         self.doc, self.player, self.video.opened,
                                         self.open_video, self.engine, self,
                                         add_clips=self.edits.add_clips_from_library)
        self.queue = QueueController(self.library_panel.video_list, self.library, self.engine,
                                     self.settings, self.notifier, self.video.opened,
                                     self.model_jobs.ensure_model, self)
        self.speech = SpeechController(self.doc, self.engine, self.settings, self.notifier,
                                       self.player, self.library, self.video.opened,
                                       self.speech_panel, self.timeline, self.edits, self)
        self.queue.transcribe_with = lambda: self.speech.with_queue
        self.reframe.cropShown.connect(self.speech.overlay.set_crop)  # captions in the crop
        self.project = ProjectController(
            self.doc, self.undo_stack, self.notifier, self,
            Path(autosave_dir) if autosave_dir else data_dir() / "autosave",
            lambda: self.player.position, ask_save=ask_save, confirm=confirm, parent=self)
        self.ask_quit_export = ask_quit_export or self.exports.ask_before_quit
        self._quit_after_export = False
        self._build_menus()
        self._connect()
        self._button_keys = FocusedButtonKeys(self)
        app = QApplication.instance()
        if app is not None:
            app.installEventFilter(self._button_keys)
        self.autosave_timer = QTimer(self)
        self.autosave_timer.setInterval(max(5, int(self.settings.get("autosave_seconds"))) * 1000)
        self.autosave_timer.timeout.connect(self.project.autosave)
        self.autosave_timer.start()
        geometry = self.settings.geometry()
        if geometry is not None:
            self.restoreGeometry(geometry)
        if self.cache is not None:
            QTimer.singleShot(0, self.library.refresh)
            QTimer.singleShot(0, self.queue.refresh)  # the last session's queue goes on
        if autoload_model:
            QTimer.singleShot(0, self.model_jobs.load_model)  # after the window is up

    # -- construction ------------------------------------------------------------------------
    def _build_menus(self) -> None:
        self.recent_menu = install_menus(self, self.undo_stack,
                                         (self.search_dock, self.events_dock, self.speech_dock,
                                          self.clips_dock, self.library_dock))
        self._refresh_recent()

    def _connect(self) -> None:
        self.notifier.errorShown.connect(self.errorShown)
        self.model_jobs.analysisFinished.connect(self.analysisFinished)
        self.model_jobs.analysisFinished.connect(self.library.refresh)  # its state: analysed
        self.model_jobs.findFinished.connect(self.findFinished)
        self.edits.refused.connect(self.notifier.error)
        self.video.loaded.connect(self._on_video_loaded)
        self.video.opened.connect(self.videoOpened)
        self.video.shotsFound.connect(self.edits.set_shots)
        self.project.openRequested.connect(self._open_checked)
        self.project.saved.connect(self._on_saved)
        self.timeline.clipTrimmed.connect(self.edits.trim_clip)
        ev = self.events_panel
        ev.model.editRequested.connect(self.edits.edit_event)
        ev.addRequested.connect(self.add_event)
        ev.deleteRequested.connect(self.edits.delete_events)
        ev.model.editRejected.connect(self.notifier.error)
        sp = self.search_panel
        sp.queryRequested.connect(self.model_jobs.run_query)
        sp.addClipsRequested.connect(self.edits.add_clips_from_results)
        cp, cm = self.clips_panel, self.clips_panel.model
        cm.renameRequested.connect(self.edits.rename_clip)
        cm.timesRequested.connect(self.edits.trim_clip)
        cm.presetRequested.connect(self.edits.set_clip_preset)
        cm.editRejected.connect(self.notifier.error)
        cp.moveRequested.connect(self.edits.move_clip)
        cp.deleteRequested.connect(self.edits.delete_clips)
        cp.addFromMarksRequested.connect(self.add_clip_from_marks)
        self.undo_stack.cleanChanged.connect(self._update_title)
        self.undo_stack.indexChanged.connect(self._update_title)

    # -- reporting -----------------------------------------------------------------------------
    def show_error(self, message: str) -> None:
        self.notifier.error(message)

    @property
    def errors(self) -> list[str]:
        return self.notifier.errors

    @property
    def last_error(self) -> str:
        return self.notifier.last_error

    def _update_title(self, *_: Any) -> None:
        name = Path(self.doc.video).name if self.doc.video else "no video"
        proj = f" — {self.project.path.name}" if self.project.path else ""
        star = "" if self.undo_stack.isClean() else " •"
        self.setWindowTitle(f"Marlin Desk — {name}{proj}{star}")

    # -- opening ---------------------------------------------------------------------------------
    @Slot()
    def choose_video(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Open video", "", dialog_filter())
        if path:
            self.open_video(path)

    @Slot()
    def choose_project(self) -> None:
        if self.project.confirm_discard("opening a project"):
            self.project.choose()

    def open_path(self, path: str) -> None:
        """A video or a project, by its suffix (command line, drag and drop, recent files)."""
        if path.lower().endswith(projfile.SUFFIX):
            if self.project.confirm_discard("opening a project"):
                self.project.open(path)
        else:
            self.open_video(path)

    def open_video(self, path: str) -> bool:
        """Open a video, after asking to save unsaved work; False when the editor cancelled."""
        if not self.project.confirm_discard(f"opening {Path(path).name}"):
            return False
        self._open_checked(path, None)
        return True

    @Slot(str, object)
    def _open_checked(self, path: str, project: Project | None) -> None:
        self.model_jobs.forget_video()
        self.video.open(path, project)

    @Slot(object, object)
    def _on_video_loaded(self, opened: Any, project: Project | None) -> None:
        """The new video shows: everything of the last one is gone; its own work comes back."""
        timefmt.set_display(rate=timefmt.rate_of(opened.info))  # timecode at its frame rate
        self.undo_stack.clear()
        self.edits.set_shots([])  # the new video's come from its shots worker
        self.notifier.clear()
        self.search_panel.clear()
        self.clips_panel.export_progress.clear()
        self.settings.add_recent(self.doc.video)
        self._refresh_recent()
        if opened.analysis is not None:
            self.doc.set_analysis(opened.analysis, opened.ref)
            self.notifier.notice(f"Opened {Path(self.doc.video).name}: its analysis came from "
                                 f"the cache ({count(len(opened.analysis.events), 'event')}).")
        playhead = self.project.apply(project)
        if playhead:
            self.views.seek(playhead)
        self._update_title()
        if opened.analysis is None and project is None and self.settings.get("auto_analyse"):
            self.model_jobs.analyse()

    def _refresh_recent(self) -> None:
        self.recent_menu.clear()
        for path in self.settings.recent_files():
            action = self.recent_menu.addAction(path)
            action.triggered.connect(lambda _=False, p=path: self.open_path(p))
        self.recent_menu.setEnabled(bool(self.settings.recent_files()))

    @Slot(str)
    def _on_saved(self, path: str) -> None:
        if path.endswith(projfile.SUFFIX) and self.project.path is not None:
            self.settings.add_recent(str(self.project.path))
            self._refresh_recent()
        self._update_title()

    def dragEnterEvent(self, event: Any) -> None:  # noqa: N802
        if event.mimeData().hasUrls():
            event.acceptProposedAction()

    def dropEvent(self, event: Any) -> None:  # noqa: N802
        for url in event.mimeData().urls():
            if url.isLocalFile():
                self.open_path(url.toLocalFile())
                event.acceptProposedAction()
                return
        self.notifier.error("Only local files can be opened.")

    # -- glue for the menus: the playhead and the selections come from the views ----------------
    @Slot()
    def mark_in(self) -> None:
        """At the frame on screen (not the player's clock, which lags after a pause)."""
        self.edits.mark_in(self.player.position)

    @Slot()
    def mark_out(self) -> None:
        """After the frame on screen, so the clip keeps it (End then O: the whole video)."""
        self.edits.mark_out(self.player.frame_end())

    @Slot()
    def add_clip_from_marks(self) -> Clip | None:
        return self.edits.add_clip_from_marks()

    @Slot()
    def add_clip_from_event(self) -> Clip | None:
        return self.edits.add_clip_from_event(self.views.selected_event())

    @Slot()
    def add_clips_from_selected_results(self) -> list[Clip]:
        return self.edits.add_clips_from_results(self.search_panel.selected())

    @Slot()
    def add_event(self, description: str = "New event") -> int | None:
        row = self.edits.add_event(self.player.position, description)
        if row is not None:  # selected, so its description can be typed at once
            self.views.select_event(row)
        return row

    @Slot()
    def delete_selected_events(self) -> None:
        self.edits.delete_events(self.views.selected_events())

    @Slot()
    def delete_selected_clips(self) -> None:
        self.edits.delete_clips(self.clips_panel.selected_ids())

    @Slot()
    def cancel_jobs(self) -> None:
        self.model_jobs.cancel_video_jobs()
        self.exports.cancel()

    def focus_search(self) -> None:
        self.search_dock.show()
        self.search_panel.query.setFocus()
        self.search_panel.query.selectAll()

    # -- closing ---------------------------------------------------------------------------------
    def shutdown(self) -> None:
        """Stop every worker; safe to call twice."""
        self.autosave_timer.stop()
        self.video.shutdown()
        self.reframe.shutdown()
        self.queue.shutdown()
        self.library.shutdown()
        if self.exports.running:
            self.exports.cancel()
            self.exports.wait()
        self.engine.shutdown()

    def closeEvent(self, event: Any) -> None:  # noqa: N802
        if self.exports.running and not self._quit_after_export:
            answer = self.ask_quit_export()
            if answer == "wait":  # close by itself once the last clip is written
                self._quit_after_export = True
                self.exports.finishedAll.connect(self.close)
                self.notifier.notice("Marlin Desk will close when the export has finished.")
            elif answer == "cancel":
                self.exports.cancel()
                self.exports.wait()
            if answer != "cancel":
                event.ignore()
                return
        elif self.exports.running:  # waiting for the export: not yet
            event.ignore()
            return
        if not self.project.confirm_discard("quitting"):
            self._quit_after_export = False
            event.ignore()
            return
        self.settings.set_geometry(self.saveGeometry())
        self.settings.set("volume", self.player.volume.value())
        self.shutdown()
        self.project.closed_cleanly()  # nothing to recover
        super().closeEvent(event)

    def sizeHint(self) -> QSize:  # noqa: N802
        return QSize(1400, 900)
