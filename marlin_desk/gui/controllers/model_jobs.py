"""The model's work for the window: load the model, analyse the open video, search it.

Jobs run on the model worker (gui/worker.py); this turns the window's wishes into typed
requests, and the worker's typed results into document changes and status lines. Partial
results arrive in bursts and are shown at most ~10 times a second, so the GUI thread stays
free for input and paint.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, QTimer, Signal, Slot
from PySide6.QtGui import QUndoStack
from PySide6.QtWidgets import QLabel

from marlin_desk.core.timeline import Event
from marlin_desk.gui.document import Document
from marlin_desk.gui.notifier import Notifier
from marlin_desk.gui.panels.search import SearchPanel
from marlin_desk.gui.settings import Settings
from marlin_desk.gui.statusbar import JobBar
from marlin_desk.gui.timefmt import count
from marlin_desk.gui.undo import ReplaceAnalysis
from marlin_desk.gui.worker import EngineClient
from marlin_desk.gui.worker_protocol import (
    AnalyseRequest,
    AnalyseResult,
    FindRequest,
    FindResult,
    LoadRequest,
    ModelReady,
)
from marlin_desk.models import DEFAULT_MODEL

FLUSH_MS = 100
LOAD_FAILED = "The model could not be loaded"


class ModelJobs(QObject):
    analysisFinished = Signal(object)  # Analysis
    findFinished = Signal(str, object)  # query, spans

    def __init__(self, engine: EngineClient, doc: Document, stack: QUndoStack,
                 settings: Settings, notifier: Notifier, jobs: JobBar, model_label: QLabel,
                 search: SearchPanel, model_override: str | None = None,
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.engine, self.doc, self.settings, self.notifier = engine, doc, settings, notifier
        self.stack = stack
        self.jobs, self.model_label, self.search = jobs, model_label, search
        self.model_override = model_override
        self.model_info: dict[str, Any] | None = None
        self.load_job: int | None = None
        self.analysis_job: int | None = None
        self.find_job: int | None = None
        self.windows_done = 0
        self.replacing = False  # a re-analysis of a video whose events are shown
        self._pending: list[Event] = []
        self._flush = QTimer(self)
        self._flush.setSingleShot(True)
        self._flush.setInterval(FLUSH_MS)
        self._flush.timeout.connect(self._flush_events)
        engine.jobStarted.connect(self._on_started)
        engine.progress.connect(self._on_progress)
        engine.window.connect(self._on_window)
        engine.finished.connect(self._on_finished)
        engine.failed.connect(self._on_failed)
        engine.cancelled.connect(self._on_cancelled)

    # -- asking --------------------------------------------------------------------------
    @Slot()
    def load_model(self, model: str | None = None) -> int:
        options = self.settings.model_options()
        spec = model or self.model_override or options.model
        self.model_label.setText("Model: loading…")
        self.model_label.setToolTip("")
        self.load_job = self.engine.submit(LoadRequest(replace(options, model=spec or "")))
        return self.load_job

    def ensure_model(self) -> None:
        if self.engine.model_info is None and not self.engine.active(LoadRequest):
            self.load_model()

    @Slot()
    def analyse(self, resume: bool = True) -> int | None:
        if not self.doc.video:
            self.notifier.error("Open a video first.")
            return None
        if self.analysis_job is not None:
            return self.analysis_job
        self.ensure_model()
        self.windows_done = 0
        # a re-analysis keeps what is shown until its result is whole (then it is one Undo)
        self.replacing = bool(self.doc.events) and not resume
        if not self.doc.events_edited and not self.replacing:
            self.doc.set_analysis(None)
        self.analysis_job = self.engine.submit(AnalyseRequest(
            self.doc.video, self.doc.info, window=float(self.settings.get("window_seconds")),
            caption_tokens=int(self.settings.get("caption_tokens")) or None, resume=resume))
        return self.analysis_job

    @Slot()
    def reanalyse(self) -> int | None:
        return self.analyse(resume=False)

    @Slot(str)
    def run_query(self, query: str) -> int | None:
        query = query.strip()
        if not query:
            return None
        if not self.doc.video:
            self.notifier.error("Open a video first, then search it.")
            return None
        if self.find_job is not None:
            self.engine.cancel(self.find_job)
        self.ensure_model()
        self.settings.add_query(query)
        self.search.set_recent(self.settings.recent_queries())
        self.search.query.setText(query)
        self.search.set_busy(True, f"Searching for “{query}”…")
        self.find_job = self.engine.submit(FindRequest(
            self.doc.video, query, self.doc.info,
            window=float(self.settings.get("window_seconds")),
            caption_tokens=int(self.settings.get("caption_tokens")) or None))
        return self.find_job

    @Slot()
    def cancel_video_jobs(self) -> None:
        self.engine.cancel(kind=AnalyseRequest)
        self.engine.cancel(kind=FindRequest)

    def forget_video(self) -> None:
        """Another video opens: its jobs stop and their late results are dropped."""
        self.cancel_video_jobs()
        self.analysis_job = self.find_job = None
        self.replacing = False
        self._pending = []

    def busy_with_model(self) -> bool:
        return self.engine.model_info is not None or bool(self.engine.active(LoadRequest))

    # -- hearing back ---------------------------------------------------------------------
    @Slot(int, object)
    def _on_started(self, job: int, request: object) -> None:
        self.jobs.add(("model", job), getattr(request, "label", "Working"),
                      lambda: self.engine.cancel(job))

    @Slot(int, int, int, float, str)
    def _on_progress(self, job: int, done: int, total: int, eta: float, message: str) -> None:
        self.jobs.update_job(("model", job), done, total, eta, message)

    @Slot(int, object)
    def _on_window(self, job: int, result: object) -> None:
        if job == self.analysis_job:
            self._pending.extend(result.events)  # type: ignore[attr-defined]
            self.windows_done += 1
            if not self._flush.isActive():
                self._flush.start()

    @Slot()
    def _flush_events(self) -> None:
        events, self._pending = self._pending, []
        if events and self.analysis_job is not None and not self.replacing:
            self.doc.add_partial_events(events)

    @Slot(int, object, object)
    def _on_finished(self, job: int, request: object, result: object) -> None:
        self.jobs.remove(("model", job))
        if isinstance(result, ModelReady):
            self._show_model(result.info)
        elif isinstance(result, AnalyseResult) and job == self.analysis_job:
            self.analysis_job = None
            self._pending = []  # the whole analysis replaces the partial events
            if self.replacing:
                self.stack.push(ReplaceAnalysis(self.doc, result.analysis, result.ref))
            else:
                self.doc.set_analysis(result.analysis, result.ref, keep_edits=True)
            self.replacing = False
            self.notifier.transient(
                f"Analysis done: {count(len(result.analysis.events), 'event')} in "
                f"{count(len(result.analysis.windows), 'window')}")
            self.analysisFinished.emit(result.analysis)
        elif isinstance(result, FindResult) and job == self.find_job:
            self.find_job = None
            self.doc.set_results(result.query, result.spans)
            self.search.set_busy(False)
            self.search.set_results(result.query, result.spans, result.seconds, result.cached)
            self.findFinished.emit(result.query, result.spans)

    def _show_model(self, info: dict[str, Any]) -> None:
        """A short line (which model, how it runs); the whole reason and path in the tooltip.
        A message about an earlier failed load goes: this one worked."""
        self.model_info = info
        model = str(info.get("model", ""))
        name = Path(model).name or model
        name = {"demo": f"demo model (coloured screens only; {DEFAULT_MODEL} is not downloaded)",
                "pulled": f"{model} from the models folder",
                "hf-cache": f"{model} from the Hugging Face cache"}.get(
                    str(info.get("chosen")), name)
        if info.get("url"):  # the remote backend: which server answers
            name = f"{info.get('served_model') or name} at {info['url']}"
        self.model_label.setText(f"Model: {name} · {info.get('backend')} · {info.get('device')}"
                                 f" · {info.get('dtype')}")
        self.model_label.setToolTip(f"{model}\n{info.get('why') or ''}".strip())
        if self.notifier.last_error.startswith(LOAD_FAILED):
            self.notifier.clear()

    @Slot(int, object, str)
    def _on_failed(self, job: int, request: object, message: str) -> None:
        self.jobs.remove(("model", job))
        if isinstance(request, LoadRequest):
            self.model_label.setText("Model: not loaded (see the message above)")
            self.notifier.error(f"{LOAD_FAILED}: {message}")
        elif isinstance(request, AnalyseRequest):
            if job == self.analysis_job:
                self.analysis_job = None
                self.replacing = False
            self.notifier.error(f"The analysis stopped: {message}")
        elif isinstance(request, FindRequest):
            if job == self.find_job:
                self.find_job = None
            self.search.set_busy(False)
            self.notifier.error(f"The search failed: {message}")

    @Slot(int, object)
    def _on_cancelled(self, job: int, request: object) -> None:
        self.jobs.remove(("model", job))
        if job == self.analysis_job:
            self.analysis_job = None
            if self.replacing:
                self.notifier.transient("Re-analysis cancelled: the earlier events are kept", 8000)
            self.replacing = False
        if job == self.find_job:
            self.find_job = None
            self.search.set_busy(False, "Search cancelled.")
        self.notifier.transient(f"{getattr(request, 'label', 'Job')} cancelled", 5000)
