"""The main window: wires the player, timeline, panels, workers, undo stack and project files.

Everything slow happens on a worker (model jobs on the model thread; probing, thumbnails,
waveform and export on their own threads); this class only reacts to their signals. Errors are
shown in a bar at the top of the window in plain words and logged; nothing here lets an
exception from a bad file, a failed model load or a failed export end the app.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import QSize, Qt, QTimer, Signal, Slot
from PySide6.QtGui import QAction, QImage, QKeySequence, QPixmap, QUndoStack
from PySide6.QtWidgets import (
    QApplication,
    QDockWidget,
    QFileDialog,
    QFrame,
    QHBoxLayout,
    QLabel,
    QMainWindow,
    QMessageBox,
    QSplitter,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from marlin_desk.core import project as projfile
from marlin_desk.core.errors import MarlinError
from marlin_desk.core.project import Clip, Project
from marlin_desk.core.timeline import Analysis, Event
from marlin_desk.gui import undo
from marlin_desk.gui.document import Document
from marlin_desk.gui.media_workers import ExportWorker, OpenWorker, ThumbnailWorker, WaveformWorker
from marlin_desk.gui.panels.clips import ClipsPanel
from marlin_desk.gui.panels.events import EventsPanel
from marlin_desk.gui.panels.search import SearchPanel
from marlin_desk.gui.player import PlayerWidget
from marlin_desk.gui.settings import SERVER_KEYS, Settings
from marlin_desk.gui.statusbar import JobBar
from marlin_desk.gui.timefmt import fmt_time
from marlin_desk.gui.timeline import TimelineWidget
from marlin_desk.gui.worker import EngineClient
from marlin_desk.paths import data_dir

log = logging.getLogger(__name__)

VIDEO_FILTER = "Videos (*.mp4 *.mov *.mkv *.m4v *.webm *.avi *.ts *.mts);;All files (*)"
PROJECT_FILTER = "Marlin Desk projects (*.marlin)"


def open_cache() -> Any:
    """The analysis cache, or None when it cannot be opened (the app works without it)."""
    try:
        from marlin_desk.store import AnalysisCache

        return AnalysisCache()
    except Exception as exc:  # noqa: BLE001 - the cache is an optimisation
        log.warning("analysis cache unavailable: %s", exc)
        return None


class MessageBar(QFrame):
    """A dismissable line at the top of the window for errors and notices."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("messageBar")
        self.label = QLabel(self)
        self.label.setWordWrap(True)
        self.label.setAccessibleName("Message")
        self.label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        close = QToolButton(self)
        close.setText("✕")
        close.setAccessibleName("Dismiss message")
        close.clicked.connect(self.hide)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(8, 4, 4, 4)
        layout.addWidget(self.label, 1)
        layout.addWidget(close)
        self.hide()

    def show_message(self, text: str, error: bool = True) -> None:
        colour = "#7a2630" if error else "#2d5a3d"
        self.setStyleSheet(f"#messageBar {{ background: {colour}; }} QLabel {{ color: white; }}")
        self.label.setText(text)
        self.show()


class MainWindow(QMainWindow):
    FLUSH_MS = 100  # partial results and thumbnails reach the views at most this often
    videoOpened = Signal(str)
    analysisFinished = Signal(object)
    findFinished = Signal(str, object)
    errorShown = Signal(str)

    def __init__(self, settings: Settings | None = None, *, cache: Any = "default",
                 autoload_model: bool = True, model: str | None = None,
                 confirm: Callable[[str], bool] | None = None,
                 autosave_dir: str | os.PathLike[str] | None = None) -> None:
        super().__init__()
        self.settings = settings or Settings()
        self.cache = open_cache() if cache == "default" else cache
        self.model_override = model
        self._confirm = confirm
        self.autosave_dir = Path(autosave_dir) if autosave_dir else data_dir() / "autosave"
        self.project_path: Path | None = None
        self.last_error = ""
        self.errors: list[str] = []
        self.model_info: dict[str, Any] | None = None
        self.analysis_job: int | None = None
        self.find_job: int | None = None
        self.load_job: int | None = None
        self._pending_project: Project | None = None
        self._media_workers: list[Any] = []
        self._open_worker: OpenWorker | None = None
        self._export: ExportWorker | None = None
        self.export_results: list[Any] | None = None
        self.export_dialog: Any = None
        self.preferences_dialog: Any = None
        self.about_dialog: Any = None

        self.setWindowTitle("Marlin Desk")
        self.setAcceptDrops(True)
        self.resize(1400, 900)
        self.doc = Document(self)
        self.undo_stack = QUndoStack(self)
        self.engine = EngineClient(self.cache, self)

        self.player = PlayerWidget(self)
        self.timeline = TimelineWidget(self)
        self.messages = MessageBar(self)
        self.events_panel = EventsPanel(self.doc, self)
        self.search_panel = SearchPanel(self)
        self.clips_panel = ClipsPanel(self.doc, self)
        self.search_panel.set_recent(self.settings.recent_queries())
        self.player.volume.setValue(int(self.settings.get("volume")))

        splitter = QSplitter(Qt.Orientation.Vertical, self)
        splitter.addWidget(self.player)
        splitter.addWidget(self.timeline)
        splitter.setStretchFactor(0, 3)
        splitter.setStretchFactor(1, 1)
        central = QWidget(self)
        col = QVBoxLayout(central)
        col.setContentsMargins(0, 0, 0, 0)
        col.setSpacing(0)
        col.addWidget(self.messages)
        col.addWidget(splitter, 1)
        self.setCentralWidget(central)
        self.search_dock = self._dock("Search", self.search_panel,
                                      Qt.DockWidgetArea.RightDockWidgetArea)
        self.events_dock = self._dock("Events", self.events_panel,
                                      Qt.DockWidgetArea.RightDockWidgetArea)
        self.clips_dock = self._dock("Clip bin", self.clips_panel,
                                     Qt.DockWidgetArea.RightDockWidgetArea)
        self.resizeDocks([self.search_dock, self.events_dock, self.clips_dock], [260, 300, 240],
                         Qt.Orientation.Vertical)
        self.resizeDocks([self.search_dock], [460], Qt.Orientation.Horizontal)

        self.model_label = QLabel("Model: not loaded")
        self.model_label.setAccessibleName("Model status")
        self.jobs = JobBar(self)
        self.notice = QLabel("")
        self.notice.setAccessibleName("Status message")
        self._notice_timer = QTimer(self)
        self._notice_timer.setSingleShot(True)
        self._notice_timer.timeout.connect(self.notice.clear)
        self.statusBar().addWidget(self.model_label)
        self.statusBar().addWidget(self.notice, 1)
        self.statusBar().addPermanentWidget(self.jobs)

        # partial analysis results and thumbnails arrive in bursts: they are collected and
        # shown at most ~10 times a second, so the GUI thread stays free for input and paint
        self._pending_events: list[Event] = []
        self._pending_thumbs: list[tuple[float, QImage]] = []
        self._flush_timer = QTimer(self)
        self._flush_timer.setSingleShot(True)
        self._flush_timer.setInterval(self.FLUSH_MS)
        self._flush_timer.timeout.connect(self._flush_pending)
        self._build_actions()
        self._connect()
        self.autosave_timer = QTimer(self)
        self.autosave_timer.setInterval(max(5, int(self.settings.get("autosave_seconds"))) * 1000)
        self.autosave_timer.timeout.connect(self.autosave_now)
        self.autosave_timer.start()
        geometry = self.settings.geometry()
        if geometry is not None:
            self.restoreGeometry(geometry)
        if autoload_model:
            QTimer.singleShot(0, self.load_model)  # after the window is up: torch loads there

    # -- construction ------------------------------------------------------------------------
    def _dock(self, title: str, widget: QWidget, area: Qt.DockWidgetArea) -> QDockWidget:
        dock = QDockWidget(title, self)
        dock.setObjectName(f"dock-{title}")
        dock.setWidget(widget)
        dock.setAccessibleName(title)
        dock.setFeatures(QDockWidget.DockWidgetFeature.DockWidgetMovable
                         | QDockWidget.DockWidgetFeature.DockWidgetFloatable
                         | QDockWidget.DockWidgetFeature.DockWidgetClosable)
        self.addDockWidget(area, dock)
        return dock

    def _action(self, menu: Any, text: str, slot: Callable[..., Any],
                shortcut: str | QKeySequence | None = None, tip: str = "") -> QAction:
        action = QAction(text, self)
        if shortcut is not None:
            action.setShortcut(QKeySequence(shortcut))
            action.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
        if tip:
            action.setStatusTip(tip)
        action.triggered.connect(slot)
        if menu is not None:
            menu.addAction(action)
        self.addAction(action)
        return action

    def _build_actions(self) -> None:
        bar = self.menuBar()
        m = bar.addMenu("&File")
        self._action(m, "&Open Video…", self.choose_video, QKeySequence.StandardKey.Open)
        self.recent_menu = m.addMenu("Open &Recent")
        self._refresh_recent()
        self._action(m, "Open &Project…", self.choose_project, "Ctrl+Shift+O")
        self._action(m, "&Save Project", self.save_project, QKeySequence.StandardKey.Save)
        self._action(m, "Save Project &As…", self.save_project_as, "Ctrl+Shift+S")
        m.addSeparator()
        self._action(m, "&Quit", self.close, QKeySequence.StandardKey.Quit)

        m = bar.addMenu("&Edit")
        self.undo_action = self.undo_stack.createUndoAction(self, "&Undo")
        self.undo_action.setShortcut(QKeySequence.StandardKey.Undo)
        self.redo_action = self.undo_stack.createRedoAction(self, "&Redo")
        self.redo_action.setShortcut(QKeySequence.StandardKey.Redo)
        m.addAction(self.undo_action)
        m.addAction(self.redo_action)
        self.addAction(self.undo_action)
        self.addAction(self.redo_action)
        m.addSeparator()
        self._action(m, "Mark &In", self.mark_in, "I")
        self._action(m, "Mark &Out", self.mark_out, "O")
        self._action(m, "&Clip from In/Out", self.add_clip_from_marks, "Ctrl+I")
        self._action(m, "Clip from Selected &Event", self.add_clip_from_event, "Ctrl+E")
        self._action(m, "Delete Selected Clips", self._delete_selected_clips, "Del")
        self._action(m, "Add &Event (I/O marks or playhead)", lambda: self.add_event(),
                     "Ctrl+Shift+E")
        self._action(m, "Delete Selected E&vents", self._delete_selected_events, "Shift+Del")
        m.addSeparator()
        self._action(m, "&Preferences…", self.show_preferences,
                     QKeySequence.StandardKey.Preferences)

        m = bar.addMenu("&Playback")
        self._action(m, "Play/Pause", self.player.toggle_play, "Space")
        self._action(m, "Shuttle Back (J)", lambda: self.player.shuttle("j"), "J")
        self._action(m, "Stop (K)", lambda: self.player.shuttle("k"), "K")
        self._action(m, "Shuttle Forward (L)", lambda: self.player.shuttle("l"), "L")
        self._action(m, "Frame Back", lambda: self.player.step(-1), "Left")
        self._action(m, "Frame Forward", lambda: self.player.step(1), "Right")
        self._action(m, "Go to Start", self.player.home, "Home")
        self._action(m, "Go to End", self.player.end, "End")

        m = bar.addMenu("&View")
        self._action(m, "Zoom &In", lambda: self.timeline.zoom(1.5), "Ctrl+=")
        self._action(m, "Zoom &Out", lambda: self.timeline.zoom(1 / 1.5), "Ctrl+-")
        self._action(m, "&Fit Timeline", self.timeline.fit, "Ctrl+0")
        self._action(m, "&Find…", self._focus_search, QKeySequence.StandardKey.Find)
        m.addSeparator()
        for dock in (self.search_dock, self.events_dock, self.clips_dock):
            m.addAction(dock.toggleViewAction())
        m.addSeparator()
        self._action(m, "&Dark Theme", lambda: self.set_theme("dark"))
        self._action(m, "&Light Theme", lambda: self.set_theme("light"))

        m = bar.addMenu("&Analysis")
        self._action(m, "&Analyse Video", self.analyse, "Ctrl+R")
        self._action(m, "Re-analyse (ignore cache)", lambda: self.analyse(resume=False))
        self._action(m, "&Cancel Running Jobs", self.cancel_jobs, "Esc")

        m = bar.addMenu("&Model")
        self._action(m, "&Load Model", self.load_model)
        self._action(m, "&Download Marlin-2B…", self.show_model_download)

        m = bar.addMenu("&Help")
        self._action(m, "&Keyboard Shortcuts", self.show_shortcuts, "F1")
        self._action(m, "&About Marlin Desk", self.show_about)

    def _connect(self) -> None:
        e = self.engine
        e.jobStarted.connect(self._on_job_started)
        e.progress.connect(self._on_job_progress)
        e.window.connect(self._on_window)
        e.modelReady.connect(self._on_model_ready)
        e.finished.connect(self._on_job_finished)
        e.failed.connect(self._on_job_failed)
        e.cancelled.connect(self._on_job_cancelled)
        self.player.positionChanged.connect(self.timeline.set_playhead)
        self.player.mediaError.connect(self._on_media_error)
        self.timeline.seekRequested.connect(self.seek)
        self.timeline.eventClicked.connect(self._on_timeline_event)
        self.timeline.resultClicked.connect(self.preview_result)
        self.timeline.clipClicked.connect(self._on_timeline_clip)
        self.timeline.clipTrimmed.connect(self.trim_clip)
        self.doc.eventsChanged.connect(self._on_events_changed)
        self.doc.clipsChanged.connect(self._on_clips_changed)
        self.doc.resultsChanged.connect(self._on_results_changed)
        self.doc.marksChanged.connect(self._on_marks_changed)
        self.events_panel.eventSelected.connect(self._on_table_event)
        self.events_panel.model.editRequested.connect(self.edit_event)
        self.events_panel.addRequested.connect(self.add_event)
        self.events_panel.deleteRequested.connect(self.delete_events)
        self.events_panel.model.editRejected.connect(self.show_error)
        self.search_panel.queryRequested.connect(self.run_query)
        self.search_panel.resultActivated.connect(self.preview_result)
        self.search_panel.addClipsRequested.connect(self.add_clips_from_results)
        cm = self.clips_panel.model
        cm.renameRequested.connect(self.rename_clip)
        cm.timesRequested.connect(self.trim_clip)
        cm.presetRequested.connect(self.set_clip_preset)
        cm.editRejected.connect(self.show_error)
        self.clips_panel.clipActivated.connect(self._on_clip_activated)
        self.clips_panel.moveRequested.connect(self.move_clip)
        self.clips_panel.deleteRequested.connect(self.delete_clips)
        self.clips_panel.exportRequested.connect(self.request_export)
        self.clips_panel.export_progress.cancelClip.connect(self.cancel_export_clip)
        self.clips_panel.export_progress.cancelAll.connect(self.cancel_export)
        self.clips_panel.addFromMarksRequested.connect(self.add_clip_from_marks)
        self.undo_stack.cleanChanged.connect(self._update_title)
        self.undo_stack.indexChanged.connect(self._update_title)

    # -- messages ------------------------------------------------------------------------------
    @Slot(str)
    def show_error(self, message: str) -> None:
        """Plain words in the window and in the log; never a crash."""
        log.warning("shown to the user: %s", message)
        self.last_error = message
        self.errors.append(message)
        self.messages.show_message(message, error=True)
        self.status_message(message, 10_000)
        self.errorShown.emit(message)

    def status_message(self, message: str, ms: int = 8000) -> None:
        """A transient line in the status bar (beside, not over, the model description)."""
        self.notice.setText(message)
        self._notice_timer.start(ms)

    def show_notice(self, message: str) -> None:
        log.info("%s", message)
        self.messages.show_message(message, error=False)
        self.status_message(message, 8_000)

    def _update_title(self, *_: Any) -> None:
        name = Path(self.doc.video).name if self.doc.video else "no video"
        proj = f" — {self.project_path.name}" if self.project_path else ""
        star = "" if self.undo_stack.isClean() else " •"
        self.setWindowTitle(f"Marlin Desk — {name}{proj}{star}")

    # -- model ----------------------------------------------------------------------------------
    @Slot()
    def load_model(self, model: str | None = None) -> int:
        spec = model if model else (self.model_override or self.settings.get("model"))
        self.model_label.setText("Model: loading…")
        self.load_job = self.engine.submit("load", model=spec or "",
                                           backend=self.settings.get("backend"),
                                           device=self.settings.get("device"),
                                           server=self.server_params())
        return self.load_job

    @Slot(int, object)
    def _on_model_ready(self, _job: int, info: object) -> None:
        d: dict[str, Any] = dict(info)  # type: ignore[call-overload]
        self.model_info = d
        name = Path(str(d.get("model", ""))).name or d.get("model")
        self.model_label.setText(
            f"{d.get('backend')} · {d.get('device')} · {d.get('dtype')} · {name} — {d.get('why')}")
        self.model_label.setToolTip(str(d.get("model")))

    def _job_label(self, kind: str) -> str:
        return {"load": "Loading model", "analyse": "Analysing", "find": "Searching"}.get(
            kind, kind)

    @Slot(int, str)
    def _on_job_started(self, job: int, kind: str) -> None:
        self.jobs.add(("model", job), self._job_label(kind),
                      lambda: self.engine.cancel(job))

    @Slot(int, int, int, float, str)
    def _on_job_progress(self, job: int, done: int, total: int, eta: float, message: str) -> None:
        self.jobs.update_job(("model", job), done, total, eta, message)

    @Slot(int, object)
    def _on_window(self, job: int, result: object) -> None:
        if job == self.analysis_job:
            self._pending_events.extend(result.events)  # type: ignore[attr-defined]
            self.windows_done = getattr(self, "windows_done", 0) + 1
            self._schedule_flush()

    def _schedule_flush(self) -> None:
        if not self._flush_timer.isActive():
            self._flush_timer.start()

    @Slot()
    def _flush_pending(self) -> None:
        """Show the partial events and thumbnails collected since the last flush, at once."""
        events, self._pending_events = self._pending_events, []
        thumbs, self._pending_thumbs = self._pending_thumbs, []
        if events and self.analysis_job is not None:
            self.doc.add_partial_events(events)
        if thumbs:
            for t, image in thumbs:
                self.timeline.data.add_thumb(t, QPixmap.fromImage(image))
            self.timeline.update()

    @Slot(int, str, object)
    def _on_job_finished(self, job: int, kind: str, result: object) -> None:
        self.jobs.remove(("model", job))
        r: dict[str, Any] = result if isinstance(result, dict) else {}
        if kind == "analyse" and job == self.analysis_job:
            self.analysis_job = None
            self._pending_events = []  # the whole analysis replaces the partial events
            analysis: Analysis = r["analysis"]
            self.doc.set_analysis(analysis, r.get("ref"), keep_edits=True)
            self.status_message(
                f"Analysis done: {len(analysis.events)} events in {len(analysis.windows)} "
                "windows", 8000)
            self.analysisFinished.emit(analysis)
        elif kind == "find" and job == self.find_job:
            self.find_job = None
            spans = list(r.get("spans", []))
            self.doc.set_results(r.get("query", ""), spans)
            self.search_panel.set_busy(False)
            self.search_panel.set_results(r.get("query", ""), spans, r.get("seconds", 0.0),
                                          bool(r.get("cached")))
            self.findFinished.emit(r.get("query", ""), spans)

    @Slot(int, str, str)
    def _on_job_failed(self, job: int, kind: str, message: str) -> None:
        self.jobs.remove(("model", job))
        if kind == "load":
            self.model_label.setText("Model: not loaded (see the message above)")
            self.show_error(f"The model could not be loaded: {message}")
        elif kind == "analyse":
            if job == self.analysis_job:
                self.analysis_job = None
            self.show_error(f"The analysis stopped: {message}")
        elif kind == "find":
            if job == self.find_job:
                self.find_job = None
            self.search_panel.set_busy(False)
            self.show_error(f"The search failed: {message}")
        else:
            self.show_error(message)

    @Slot(int, str)
    def _on_job_cancelled(self, job: int, kind: str) -> None:
        self.jobs.remove(("model", job))
        if job == self.analysis_job:
            self.analysis_job = None
        if job == self.find_job:
            self.find_job = None
            self.search_panel.set_busy(False, "Search cancelled.")
        self.status_message(f"{self._job_label(kind)} cancelled", 5000)

    @Slot()
    def cancel_jobs(self) -> None:
        self.engine.cancel(kind="analyse")
        self.engine.cancel(kind="find")
        if self._export is not None:
            self._export.cancel()

    # -- opening ------------------------------------------------------------------------------
    @Slot()
    def choose_video(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Open video", "", VIDEO_FILTER)
        if path:
            self.open_video(path)

    def open_path(self, path: str) -> None:
        """A video or a project, by its suffix (command line, drag and drop, recent files)."""
        if path.lower().endswith(projfile.SUFFIX):
            self.open_project(path)
        else:
            self.open_video(path)

    def open_video(self, path: str, project: Project | None = None) -> None:
        path = os.path.abspath(path)
        self.engine.cancel(kind="analyse")
        self.engine.cancel(kind="find")
        self._stop_media_workers()
        self.player.close_media()
        self.doc.reset()
        self.doc.set_results("", [])
        self.doc.set_clips([])
        self.doc.eventsChanged.emit()
        self.undo_stack.clear()
        self.search_panel.results.clear()
        self.timeline.data.clear_media()
        self.timeline.set_duration(0.0)
        self.analysis_job = None
        self.project_path = None
        self._pending_project = project
        self.messages.hide()
        worker = OpenWorker(path, self.cache, self)
        worker.opened.connect(self._on_opened)
        worker.failed.connect(self._on_open_failed)
        worker.finished.connect(worker.deleteLater)
        self._open_worker = worker
        self._opening = path
        self.jobs.add(("open", path), f"Opening {Path(path).name}", None)
        worker.start()

    @Slot(str)
    def _on_open_failed(self, message: str) -> None:
        path = getattr(self, "_opening", "")
        self.jobs.remove(("open", path))
        self._pending_project = None
        self.show_error(f"Cannot open {Path(path).name}: {message}")

    @Slot(object)
    def _on_opened(self, result: object) -> None:
        r: dict[str, Any] = result  # type: ignore[assignment]
        info = r["info"]
        path = info.path if os.path.isabs(info.path) else self._opening
        self.jobs.remove(("open", self._opening))
        doc = self.doc
        doc.video, doc.info, doc.fingerprint = os.path.abspath(path), info, r["fingerprint"]
        self.player.open(doc.video, info.fps)
        self.timeline.set_duration(info.duration)
        self.settings.add_recent(doc.video)
        self._refresh_recent()
        self._start_media_workers(doc.video, info)
        proj, self._pending_project = self._pending_project, None
        if r.get("analysis") is not None:
            doc.set_analysis(r["analysis"], r.get("ref"))
            self.show_notice(f"Opened {Path(path).name}: its analysis came from the cache "
                             f"({len(r['analysis'].events)} events).")
        if proj is not None:
            self._apply_project(proj)
        doc.dirty = False
        self._update_title()
        self.videoOpened.emit(doc.video)
        if r.get("analysis") is None and proj is None and self.settings.get("auto_analyse") \
                in (True, "true", "1", 1):
            self.analyse()

    def _start_media_workers(self, path: str, info: Any) -> None:
        thumbs = ThumbnailWorker(path, info.duration, info.start_time,
                                 rotation=int(getattr(info, "rotation", 0) or 0), parent=self)
        thumbs.thumbnail.connect(self._on_thumbnail)
        wave = WaveformWorker(path, info.start_time, parent=self)
        wave.waveform.connect(self._on_waveform)
        for w in (thumbs, wave):
            w.failed.connect(self._on_media_worker_failed)
            self._media_workers.append(w)
            w.start(w.Priority.LowPriority)

    def _stop_media_workers(self) -> None:
        for w in self._media_workers:
            w.cancel()
        for w in self._media_workers:
            w.wait(5000)
        self._media_workers = []
        self._pending_thumbs = []

    @Slot(float, QImage)
    def _on_thumbnail(self, t: float, image: QImage) -> None:
        self._pending_thumbs.append((t, image))
        if len(self.timeline.data.thumbs) == 0:
            self._flush_pending()  # the first one at once: the filmstrip appears quickly
        else:
            self._schedule_flush()

    @Slot(object, float)
    def _on_waveform(self, peaks: object, step: float) -> None:
        self.timeline.data.wave, self.timeline.data.wave_step = peaks, step
        self.timeline.update()

    @Slot(str)
    def _on_media_worker_failed(self, message: str) -> None:
        log.info("thumbnail/waveform worker: %s", message)  # cosmetic: not worth a red bar

    @Slot(str)
    def _on_media_error(self, message: str) -> None:
        if self.doc.video:
            self.show_error(f"The player cannot play this file: {message}")

    # -- drag and drop ------------------------------------------------------------------------
    def dragEnterEvent(self, event: Any) -> None:  # noqa: N802
        if event.mimeData().hasUrls():
            event.acceptProposedAction()

    def dropEvent(self, event: Any) -> None:  # noqa: N802
        for url in event.mimeData().urls():
            if url.isLocalFile():
                self.open_path(url.toLocalFile())
                event.acceptProposedAction()
                return
        self.show_error("Only local files can be opened.")

    def _refresh_recent(self) -> None:
        self.recent_menu.clear()
        for path in self.settings.recent_files():
            action = self.recent_menu.addAction(path)
            action.triggered.connect(lambda _=False, p=path: self.open_path(p))
        self.recent_menu.setEnabled(bool(self.settings.recent_files()))

    # -- analysis and search -----------------------------------------------------------------
    @Slot()
    def analyse(self, resume: bool = True) -> int | None:
        if not self.doc.video:
            self.show_error("Open a video first.")
            return None
        if self.analysis_job is not None:
            return self.analysis_job
        if self.engine.model_info is None and not self.engine.active("load"):
            self.load_model()
        self.windows_done = 0
        if not self.doc.events_edited:
            self.doc.set_analysis(None)
        tokens = int(self.settings.get("caption_tokens"))
        self.analysis_job = self.engine.submit(
            "analyse", video=self.doc.video, info=self.doc.info,
            window=float(self.settings.get("window_seconds")),
            max_new_tokens=tokens or None, resume=resume)
        return self.analysis_job

    @Slot(str)
    def run_query(self, query: str) -> int | None:
        query = query.strip()
        if not query:
            return None
        if not self.doc.video:
            self.show_error("Open a video first, then search it.")
            return None
        if self.find_job is not None:
            self.engine.cancel(self.find_job)
        if self.engine.model_info is None and not self.engine.active("load"):
            self.load_model()
        self.settings.add_query(query)
        self.search_panel.set_recent(self.settings.recent_queries())
        self.search_panel.query.setText(query)
        self.search_panel.set_busy(True, f"Searching for “{query}”…")
        tokens = int(self.settings.get("caption_tokens"))
        self.find_job = self.engine.submit(
            "find", video=self.doc.video, info=self.doc.info, query=query,
            window=float(self.settings.get("window_seconds")), max_new_tokens=tokens or None)
        return self.find_job

    @Slot(int)
    def preview_result(self, index: int) -> None:
        """Seek to the span and loop it, so the editor can judge it."""
        if not 0 <= index < len(self.doc.results):
            return
        span = self.doc.results[index]
        self.timeline.selected_result = index
        self.search_panel.select(index)
        self.player.set_loop(span.start, span.end)
        self.timeline.set_playhead(span.start)

    # -- seeking and selection ------------------------------------------------------------------
    @Slot(float)
    def seek(self, t: float) -> None:
        self.player.clear_loop()
        self.player.seek(t)

    @Slot(int)
    def _on_timeline_event(self, index: int) -> None:
        self.events_panel.select(index)
        if 0 <= index < len(self.doc.events):
            self.seek(self.doc.events[index].start)

    @Slot(int)
    def _on_table_event(self, index: int) -> None:
        self.timeline.selected_event = index
        self.timeline.update()
        if 0 <= index < len(self.doc.events):
            self.seek(self.doc.events[index].start)

    @Slot(str)
    def _on_timeline_clip(self, clip_id: str) -> None:
        self.clips_panel.select_id(clip_id)

    @Slot(str)
    def _on_clip_activated(self, clip_id: str) -> None:
        self.timeline.selected_clip = clip_id
        self.seek(self.doc.clip(clip_id).start)

    def _focus_search(self) -> None:
        self.search_dock.show()
        self.search_panel.query.setFocus()
        self.search_panel.query.selectAll()

    # -- document change → views ---------------------------------------------------------------
    def _on_events_changed(self) -> None:
        self.timeline.data.set_events(self.doc.events)
        sel = self.timeline.selected_event
        if sel is not None and sel >= len(self.doc.events):
            self.timeline.selected_event = None
        self.timeline.relayout()

    def _on_clips_changed(self) -> None:
        self.timeline.data.set_clips(self.doc.clips)
        self.timeline.relayout()

    def _on_results_changed(self) -> None:
        self.timeline.data.set_results(self.doc.results)
        self.timeline.selected_result = None
        self.timeline.relayout()

    def _on_marks_changed(self) -> None:
        self.timeline.marks = (self.doc.mark_in, self.doc.mark_out)
        self.timeline.update()

    # -- edits (all through the undo stack) -------------------------------------------------------
    @Slot(int, object)
    def edit_event(self, row: int, event: object) -> None:
        self.undo_stack.push(undo.EditEvent(self.doc, row, event))  # type: ignore[arg-type]

    NEW_EVENT_SECONDS = 2.0

    @Slot()
    def add_event(self, description: str = "New event") -> int | None:
        """An event over the In/Out marks when both are set, else at the playhead (2 s); it is
        selected so its description can be typed at once. Returns its row."""
        if not self.doc.video:
            self.show_error("Open a video before adding events.")
            return None
        a, b = self.doc.mark_in, self.doc.mark_out
        if a is None or b is None or b <= a:
            a = max(0.0, self.timeline.playhead)
            b = a + self.NEW_EVENT_SECONDS
            if self.doc.duration > 0:
                b = min(b, self.doc.duration)
                a = min(a, max(0.0, b - self.NEW_EVENT_SECONDS))
            if b <= a:
                self.show_error("There is no room for an event at the end of the video.")
                return None
        command = undo.AddEvent(self.doc, Event(round(a, 3), round(b, 3), description))
        self.undo_stack.push(command)
        self.events_panel.select(command.index)
        self.timeline.selected_event = command.index
        self.timeline.update()
        return command.index

    @Slot(list)
    def delete_events(self, rows: list[int]) -> None:
        rows = [r for r in rows if 0 <= r < len(self.doc.events)]
        if rows:
            self.undo_stack.push(undo.RemoveEvents(self.doc, rows))

    def _delete_selected_events(self) -> None:
        rows = self.events_panel.selected_rows()
        if not rows and self.timeline.selected_event is not None:
            rows = [self.timeline.selected_event]
        self.delete_events(rows)

    @Slot()
    def mark_in(self) -> None:
        self.doc.set_marks(self.timeline.playhead, self.doc.mark_out)

    @Slot()
    def mark_out(self) -> None:
        self.doc.set_marks(self.doc.mark_in, self.timeline.playhead)

    def _default_preset(self) -> str:
        return str(self.settings.get("default_preset") or "original")

    @Slot()
    def add_clip_from_marks(self) -> Clip | None:
        a, b = self.doc.mark_in, self.doc.mark_out
        if a is None or b is None or b <= a:
            self.show_error("Set an In mark (I) before an Out mark (O) to make a clip.")
            return None
        clip = Clip(a, b, f"Clip {fmt_time(a, millis=False)}", self._default_preset(), "marks")
        self.undo_stack.push(undo.AddClips(self.doc, [clip]))
        return clip

    @Slot()
    def add_clip_from_event(self) -> None:
        row = self.events_panel.selected_row()
        if row is None:
            row = self.timeline.selected_event
        if row is None or not 0 <= row < len(self.doc.events):
            self.show_error("Select an event first.")
            return
        e = self.doc.events[row]
        self.undo_stack.push(undo.AddClips(
            self.doc, [Clip(e.start, e.end, e.description[:60], self._default_preset(),
                            "event")]))

    @Slot(list)
    def add_clips_from_results(self, indexes: list[int]) -> None:
        clips = []
        for i in indexes:
            if 0 <= i < len(self.doc.results):
                s = self.doc.results[i]
                clips.append(Clip(s.start, s.end, f"{self.doc.query} #{i + 1}",
                                  self._default_preset(), "find"))
        if clips:
            self.undo_stack.push(undo.AddClips(self.doc, clips))

    @Slot(str, float, float)
    def trim_clip(self, clip_id: str, start: float, end: float) -> None:
        clip = self.doc.clip(clip_id)
        if (clip.start, clip.end) != (start, end):
            self.undo_stack.push(undo.ChangeClip(self.doc, clip.with_times(start, end),
                                                 "Trim clip"))

    @Slot(str, str)
    def rename_clip(self, clip_id: str, name: str) -> None:
        self.undo_stack.push(undo.ChangeClip(self.doc, self.doc.clip(clip_id).renamed(name),
                                             "Rename clip"))

    @Slot(str, str)
    def set_clip_preset(self, clip_id: str, preset: str) -> None:
        self.undo_stack.push(undo.ChangeClip(
            self.doc, self.doc.clip(clip_id).with_preset(preset), "Set preset"))

    @Slot(str, int)
    def move_clip(self, clip_id: str, delta: int) -> None:
        to = self.doc.clip_index(clip_id) + delta
        if 0 <= to < len(self.doc.clips):
            self.undo_stack.push(undo.MoveClip(self.doc, clip_id, to))

    @Slot(list)
    def delete_clips(self, ids: list[str]) -> None:
        if ids:
            self.undo_stack.push(undo.RemoveClips(self.doc, list(ids)))

    def _delete_selected_clips(self) -> None:
        self.delete_clips(self.clips_panel.selected_ids())

    # -- export ----------------------------------------------------------------------------------
    @Slot(list)
    def request_export(self, ids: list[str]) -> None:
        """Ask how to export (preset, fill, mode, subtitles, folder), then export."""
        if not ids:
            self.show_error("There are no clips to export: add some to the clip bin first.")
            return
        if self._export is not None:
            self.show_error("An export is already running.")
            return
        from marlin_desk.gui.dialogs.export import ExportDialog

        dialog = ExportDialog(len(ids), str(self.settings.export_dir), bool(self.doc.events),
                              self)
        dialog.accepted.connect(lambda: self.export_clips(list(ids), **dialog.choices()))
        dialog.finished.connect(dialog.deleteLater)
        self.export_dialog = dialog
        dialog.open()

    @Slot(list)
    def export_clips(self, ids: list[str], out_dir: str | None = None, *,
                     preset: str | None = None, fill: str | None = None, mode: str = "exact",
                     subtitles: str = "none") -> bool:
        """Export the clips; `preset` None keeps each clip's own. Subtitles are made from the
        events as edited in the Events panel (the export layer times them from each clip)."""
        if not ids:
            self.show_error("There are no clips to export: add some to the clip bin first.")
            return False
        if self._export is not None:
            self.show_error("An export is already running.")
            return False
        if not self.doc.video:
            self.show_error("Open a video before exporting clips.")
            return False
        try:
            from marlin_desk.media.export import ClipSpec
        except ImportError as exc:
            self.show_error(f"Export is not available in this build: {exc}")
            return False
        clips = [self.doc.clip(i) for i in ids]
        specs = []
        for c in clips:
            p = preset or c.preset
            specs.append(ClipSpec(c.start, c.end, c.name, preset=p, mode=mode,  # type: ignore[arg-type]
                                  fill=fill if p in ("reels", "square") else None,  # type: ignore[arg-type]
                                  subtitles=subtitles))  # type: ignore[arg-type]
        target = out_dir or str(self.settings.export_dir)
        try:
            worker = ExportWorker(self.doc.video, specs, target, list(self.doc.events), self)
        except (MarlinError, OSError, ValueError) as exc:
            self.show_error(f"The export could not start: {exc}")
            return False
        worker.progress.connect(self._on_export_progress)
        worker.clipDone.connect(self._on_export_clip_done)
        worker.done.connect(self._on_export_done)
        worker.failed.connect(self._on_export_failed)
        worker.finished.connect(self._on_export_thread_finished)
        self._export = worker
        self.export_results = None
        self.clips_dock.show()
        self.clips_panel.export_progress.start([c.name for c in clips])
        self.jobs.add("export", f"Exporting {len(specs)} clips", worker.cancel)
        worker.start()
        return True

    @Slot()
    def cancel_export(self) -> None:
        if self._export is not None:
            self._export.cancel()

    @Slot(int)
    def cancel_export_clip(self, index: int) -> None:
        if self._export is not None:
            self._export.cancel_clip(index)

    @Slot(int, float, float)
    def _on_export_progress(self, index: int, clip: float, overall: float) -> None:
        self.clips_panel.export_progress.set_progress(index, clip, overall)
        self.jobs.update_job("export", int(overall * 1000), 1000, -1.0, f"clip {index + 1}")

    @Slot(object)
    def _on_export_clip_done(self, result: object) -> None:
        self.clips_panel.export_progress.set_result(result)

    @Slot(object)
    def _on_export_done(self, results: object) -> None:
        res: list[Any] = list(results)  # type: ignore[call-overload]
        self.export_results = res
        done = [r for r in res if r.status == "done"]
        failed = [r for r in res if r.status == "failed"]
        if failed:
            self.show_error(f"{len(failed)} of {len(res)} clips failed to export: "
                            f"{failed[0].error}")
        elif done:
            folder = done[0].path.parent if done[0].path else ""
            skipped = len(res) - len(done)
            more = f" ({skipped} cancelled)" if skipped else ""
            self.show_notice(f"Exported {len(done)} clips to {folder}{more}")
        else:
            self.status_message("Export cancelled", 5000)

    @Slot(str)
    def _on_export_failed(self, message: str) -> None:
        self.export_results = []
        self.show_error(f"The export failed: {message}")

    @Slot()
    def _on_export_thread_finished(self) -> None:
        self.jobs.remove("export")
        self.clips_panel.export_progress.finish()
        if self._export is not None:
            self._export.deleteLater()
        self._export = None

    # -- projects ---------------------------------------------------------------------------------
    def current_project(self) -> Project:
        d = self.doc
        return Project(video=d.video, fingerprint=d.fingerprint, analysis=d.analysis_ref,
                       events=list(d.events), clips=list(d.clips),
                       extra={"events_edited": d.events_edited, "query": d.query,
                              "playhead": round(self.player.position, 3)})

    @Slot()
    def save_project(self) -> bool:
        if self.project_path is None:
            return self.save_project_as()
        return self.save_project_to(self.project_path)

    @Slot()
    def save_project_as(self) -> bool:
        start = str(Path(self.doc.video).with_suffix(projfile.SUFFIX)) if self.doc.video else ""
        path, _ = QFileDialog.getSaveFileName(self, "Save project", start, PROJECT_FILTER)
        return bool(path) and self.save_project_to(path)

    def save_project_to(self, path: str | os.PathLike[str]) -> bool:
        if not self.doc.video:
            self.show_error("Open a video before saving a project.")
            return False
        try:
            self.project_path = projfile.save(self.current_project(), path)
        except (OSError, MarlinError) as exc:
            self.show_error(f"The project could not be saved: {exc}")
            return False
        self.doc.dirty = False
        self.undo_stack.setClean()
        self.settings.add_recent(str(self.project_path))
        self._refresh_recent()
        self._update_title()
        self.status_message(f"Saved {self.project_path}", 5000)
        return True

    @Slot()
    def choose_project(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Open project", "", PROJECT_FILTER)
        if path:
            self.open_project(path)

    def open_project(self, path: str | os.PathLike[str], remember: bool = True) -> bool:
        try:
            proj = projfile.load(path)
        except MarlinError as exc:
            self.show_error(str(exc))
            return False
        if not os.path.isfile(proj.video):
            self.show_error(f"The project's video is missing: {proj.video}")
            return False
        self.open_video(proj.video, project=proj)
        if remember:
            self._project_to_set = Path(path)
        return True

    def _apply_project(self, proj: Project) -> None:
        d = self.doc
        if proj.analysis is not None:
            d.analysis_ref = proj.analysis
        if proj.events is not None:
            d.set_events(proj.events, edited=bool(proj.extra.get("events_edited", True)))
        d.set_clips(proj.clips)
        target = getattr(self, "_project_to_set", None)
        self.project_path, self._project_to_set = target, None
        if proj.extra.get("playhead"):
            self.seek(float(proj.extra["playhead"]))

    # -- autosave and recovery ---------------------------------------------------------------------
    def autosave_path(self) -> Path:
        return self.autosave_dir / "session.marlin"

    @Slot()
    def autosave_now(self) -> Path | None:
        if not self.doc.video or not self.doc.dirty:
            return None
        proj = self.current_project()
        if self.project_path:
            proj.extra["project_path"] = str(self.project_path)
        try:
            path = projfile.save(proj, self.autosave_path())
        except OSError as exc:
            log.warning("autosave failed: %s", exc)
            return None
        self.doc.dirty = False
        return path

    def check_recovery(self) -> bool:
        """After a crash the autosave is still there: offer to bring the session back."""
        path = self.autosave_path()
        if not path.is_file():
            return False
        ask = self._confirm or self._ask_user
        if not ask("Marlin Desk did not close properly last time. Recover the unsaved work?"):
            path.unlink(missing_ok=True)
            return False
        ok = self.open_project(path, remember=False)
        if ok:
            self.show_notice("Recovered your unsaved work from the last session.")
        return ok

    def _ask_user(self, question: str) -> bool:
        answer = QMessageBox.question(self, "Marlin Desk", question)
        return answer == QMessageBox.StandardButton.Yes

    # -- dialogs -----------------------------------------------------------------------------------
    MODEL_KEYS = ("backend", "device", "model", *SERVER_KEYS)

    def server_params(self) -> dict[str, Any]:
        """The remote backend's server, from the preferences."""
        return {"url": self.settings.get("server_url"),
                "served_model": self.settings.get("server_model") or None,
                "api_key": self.settings.get("server_api_key") or None,
                "concurrency": int(self.settings.get("server_concurrency"))}

    def show_preferences(self) -> None:
        """Non-blocking (open, not exec): OK saves the settings and applies them."""
        from marlin_desk.gui.dialogs.preferences import PreferencesDialog

        before = {k: self.settings.get(k) for k in self.MODEL_KEYS}
        dialog = PreferencesDialog(self.settings, self)
        dialog.accepted.connect(lambda: self.apply_preferences(before))
        dialog.finished.connect(dialog.deleteLater)
        self.preferences_dialog = dialog
        dialog.open()

    def apply_preferences(self, before: dict[str, Any] | None = None) -> None:
        """Apply saved preferences: the theme now; a changed backend, device or model reloads
        a loaded model; the window length and export folder are read at each use."""
        self.set_theme(self.settings.get("theme"))
        changed = before is not None and any(self.settings.get(k) != before.get(k)
                                             for k in self.MODEL_KEYS)
        if changed and (self.engine.model_info is not None or self.engine.active("load")):
            self.load_model()
            self.status_message("Reloading the model with the new settings…")

    def show_about(self) -> None:
        from marlin_desk.gui.dialogs.about import AboutDialog

        dialog = AboutDialog(self.model_info, self)
        dialog.finished.connect(dialog.deleteLater)
        self.about_dialog = dialog
        dialog.open()

    def show_shortcuts(self) -> None:
        from marlin_desk.gui.dialogs.shortcuts import ShortcutsDialog

        ShortcutsDialog(self.actions(), self).exec()

    def show_model_download(self) -> None:
        from marlin_desk.gui.dialogs.download import DownloadDialog

        dialog = DownloadDialog(self)
        dialog.downloaded.connect(self._on_model_downloaded)
        dialog.show()

    @Slot(str)
    def _on_model_downloaded(self, folder: str) -> None:
        self.show_notice(f"Marlin-2B is downloaded to {folder}; loading it.")
        self.load_model()

    def set_theme(self, name: str) -> None:
        from marlin_desk.gui.theme import apply_theme

        self.settings.set("theme", name)
        app = QApplication.instance()
        if isinstance(app, QApplication):
            apply_theme(app, name)
        self.timeline.update()

    # -- closing --------------------------------------------------------------------------
    def shutdown(self) -> None:
        """Stop every worker; safe to call twice."""
        self.autosave_timer.stop()
        self._stop_media_workers()
        if self._open_worker is not None:
            with contextlib.suppress(RuntimeError):  # already deleted
                self._open_worker.wait(5000)
        if self._export is not None:
            self._export.cancel()
            self._export.wait(10_000)
        self.engine.shutdown()
        self.player.close_media()

    def closeEvent(self, event: Any) -> None:  # noqa: N802
        if self.doc.dirty and self._confirm is None and not self.undo_stack.isClean():
            answer = QMessageBox.question(
                self, "Marlin Desk", "Save the project before closing?",
                QMessageBox.StandardButton.Save | QMessageBox.StandardButton.Discard
                | QMessageBox.StandardButton.Cancel)
            if answer == QMessageBox.StandardButton.Cancel or (
                    answer == QMessageBox.StandardButton.Save and not self.save_project()):
                event.ignore()
                return
        self.settings.set_geometry(self.saveGeometry())
        self.settings.set("volume", self.player.volume.value())
        self.shutdown()
        self.autosave_path().unlink(missing_ok=True)  # a clean exit: nothing to recover
        super().closeEvent(event)

    def sizeHint(self) -> QSize:  # noqa: N802
        return QSize(1400, 900)
