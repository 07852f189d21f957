"""The model worker: one long-lived QThread that owns the model and runs queued jobs.

Jobs (a typed request: load, analyse, find; worker_protocol) are sent to the worker object
through a queued signal, so the thread's event queue is the job queue and jobs run one after
another. Every job reports by signals (started, progress, partial windows, finished with a typed
result, failed, cancelled); the GUI connects them to QObject slots so that they run on the GUI
thread. Cancelling sets the job's threading.Event, which the pipeline polls between windows and
between generated tokens. Every decision (which model, the job's settings, the cache key) is
made by workflows, exactly as for the commands.

torch and transformers are imported here only inside the job methods, i.e. in the worker thread
and after the window is shown: importing this module stays cheap.
"""

from __future__ import annotations

import dataclasses
import itertools
import logging
import os
import sys
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from PySide6.QtCore import QObject, QThread, Signal, Slot

from marlin_desk.core.errors import Cancelled, MarlinError, ModelUnavailable
from marlin_desk.gui.worker_protocol import (
    AnalyseRequest,
    AnalyseResult,
    FindRequest,
    FindResult,
    LibraryAnalyseRequest,
    LibraryAnalyseResult,
    LibrarySearchRequest,
    LibrarySearchResult,
    LoadRequest,
    ModelReady,
    Request,
    Result,
)

log = logging.getLogger(__name__)

WORKER_NICE = 5  # Linux: how much nicer than the GUI thread the model and media threads run
PROGRESS_INTERVAL = 0.1  # seconds: at most ~10 progress signals a second reach the GUI


def lower_this_thread_priority(nice: int = WORKER_NICE) -> bool:
    """Make the calling thread (and the threads it starts later: torch's OpenMP pool, FFmpeg)
    yield the CPU to the GUI thread. QThread priorities do this on Windows and macOS; on Linux
    they are ignored for normal threads, but the nice value is per thread there. Call it from the
    worker thread before it imports torch. Returns whether the priority changed."""
    if not sys.platform.startswith("linux") or nice <= 0:
        return False
    try:
        tid = threading.get_native_id()
        os.setpriority(os.PRIO_PROCESS, tid, min(19, os.getpriority(os.PRIO_PROCESS, tid) + nice))
    except (OSError, AttributeError) as exc:
        log.debug("cannot lower the worker thread's priority: %s", exc)
        return False
    return True


@dataclass
class Job:
    id: int
    request: Request
    cancel: threading.Event = field(default_factory=threading.Event)
    submitted: float = field(default_factory=time.monotonic)


class ModelWorker(QObject):
    """Lives in the model thread. Holds the loaded model and one open video."""

    started = Signal(int, object)  # job, request
    progress = Signal(int, int, int, float, str)  # job, done, total, eta (-1: unknown), message
    window = Signal(int, object)  # job, WindowResult (partial analysis)
    finished = Signal(int, object, object)  # job, request, Result
    failed = Signal(int, object, str)  # job, request, plain message
    cancelled = Signal(int, object)  # job, request

    def __init__(self, cache: Any = None) -> None:
        super().__init__()
        self.cache = cache
        self.engine: Any = None
        self.settings: Any = None  # workflows.JobSettings of the loaded model
        self.bench: Any = None  # workflows.Workbench of the open video
        self.bench_asked: Any = None  # the JobSettings it was opened with
        self._niced = False
        self._jobs: dict[type, Callable[[Job], Result]] = {
            LoadRequest: self._load, AnalyseRequest: self._analyse, FindRequest: self._find,
            LibrarySearchRequest: self._library_search,
            LibraryAnalyseRequest: self._analyse_library}

    @Slot(object)
    def run(self, job: Job) -> None:
        if not self._niced:  # first job, in the worker thread, before torch is imported
            self._niced = True
            lower_this_thread_priority()
        name = type(job.request).__name__
        if job.cancel.is_set():
            self.cancelled.emit(job.id, job.request)
            return
        self.started.emit(job.id, job.request)
        try:
            result = self._jobs[type(job.request)](job)
        except Cancelled:
            self.cancelled.emit(job.id, job.request)
        except MarlinError as exc:
            log.warning("%s failed: %s", name, exc)
            self.failed.emit(job.id, job.request, str(exc))
        except Exception as exc:  # noqa: BLE001 - the worker must survive anything
            log.error("%s crashed\n%s", name, traceback.format_exc())
            self.failed.emit(job.id, job.request, f"unexpected error: {exc}")
        else:
            self.finished.emit(job.id, job.request, result)

    # -- jobs ------------------------------------------------------------------------------
    def _load(self, job: Job) -> ModelReady:
        from marlin_desk.workflows import job_settings, open_engine

        o = job.request.options  # type: ignore[union-attr]
        remote = o.backend == "remote" or (o.server is not None and bool(o.server.url))
        settings = job_settings(model=o.model or None, backend=o.backend, device=o.device,
                                server=o.server if remote else None)
        what = (settings.server.url if settings.server else None) or settings.model
        self.progress.emit(job.id, 0, 1, -1.0, f"{'connecting to' if remote else 'loading'} "
                                              f"{what}")
        engine = open_engine(settings)
        if job.cancel.is_set():
            raise Cancelled("model load cancelled")
        self.engine, self.settings, self.bench = engine, settings, None
        info = dict(engine.describe())
        info["chosen"] = settings.choice.source if settings.choice else "user"
        return ModelReady(info)

    def _settings_for(self, request: AnalyseRequest | FindRequest | LibraryAnalyseRequest) -> Any:
        """The loaded model's settings with this request's windows (as the CLI builds them)."""
        if self.engine is None:
            raise ModelUnavailable("no model is loaded yet: wait for it or load one (Model menu)")
        from marlin_desk.core.prompts import CAPTION_MAX_NEW_TOKENS

        return dataclasses.replace(
            self.settings, window=float(request.window), overlap=float(request.overlap),
            caption_tokens=int(request.caption_tokens or CAPTION_MAX_NEW_TOKENS))

    def _bench(self, request: AnalyseRequest | FindRequest) -> Any:
        """The open video for this request (workflows: the same cache key as the CLI)."""
        from marlin_desk.workflows import open_video

        settings = self._settings_for(request)
        bench = self.bench
        # open_video may adapt the settings to the model (its budget, its longest window), so
        # compare with what was asked for last time
        if bench is None or bench.video != request.video or self.bench_asked != settings:
            # a new video or new settings; the model (and the open session) stay loaded
            session = bench.session if bench is not None and bench.video == request.video \
                else None
            bench = open_video(request.video, settings, use_cache=self.cache is not None,
                               cache=self.cache, engine=self.engine, info=request.info)
            if session is not None and session.original_budget == bench.settings.budget:
                bench.session = session
            self.bench, self.bench_asked = bench, settings
        return bench

    def _progress_reporter(self, job: Job) -> Any:
        """Coalesced: a step done always reports; notes within a step at most every 100 ms."""
        last = {"done": -1, "at": 0.0}

        def on_progress(pr: Any) -> None:
            now = time.monotonic()
            if pr.done == last["done"] and pr.done < pr.total \
                    and now - last["at"] < PROGRESS_INTERVAL:
                return
            last["done"], last["at"] = pr.done, now
            eta = -1.0 if pr.eta is None else float(pr.eta)
            self.progress.emit(job.id, pr.done, pr.total, eta, pr.message)

        return on_progress

    def _analyse(self, job: Job) -> AnalyseResult:
        from marlin_desk.workflows import analysis_ref, analyze

        request: AnalyseRequest = job.request  # type: ignore[assignment]
        bench = self._bench(request)
        fresh = not request.resume  # Re-analyse: the old result stays until this one is whole
        done = bench.cache.windows_done(bench.key) if bench.cache is not None and not fresh \
            else {}
        self.progress.emit(job.id, len(done), bench.total_windows, -1.0,
                           "; ".join(bench.notes) or "sampling frames")
        analysis, _cached = analyze(bench, on_window=lambda r: self.window.emit(job.id, r),
                                    on_progress=self._progress_reporter(job),
                                    should_stop=job.cancel.is_set, fresh=fresh)
        ref = analysis_ref(bench.key) if bench.cache is not None else None
        return AnalyseResult(analysis, ref, len(done))

    def _analyse_library(self, job: Job) -> LibraryAnalyseResult:
        """A queued library video: its own workbench (the window's open video and its session
        stay as they are), resumed from the cache's finished windows."""
        from marlin_desk.workflows import analyze, open_video

        request: LibraryAnalyseRequest = job.request  # type: ignore[assignment]
        settings = self._settings_for(request)
        bench = open_video(request.video, settings, use_cache=self.cache is not None,
                           cache=self.cache, engine=self.engine)
        done = bench.cache.windows_done(bench.key) if bench.cache is not None else {}
        self.progress.emit(job.id, len(done), bench.total_windows, -1.0,
                           "; ".join(bench.notes) or "sampling frames")
        analysis, _cached = analyze(bench, on_progress=self._progress_reporter(job),
                                    should_stop=job.cancel.is_set)
        return LibraryAnalyseResult(request.fingerprint, len(analysis.windows), len(done))

    def _find(self, job: Job) -> FindResult:
        from marlin_desk.workflows import find

        request: FindRequest = job.request  # type: ignore[assignment]
        query = request.query.strip()
        if not query:
            raise MarlinError("type what you are looking for first")
        bench = self._bench(request)
        cached = bench.cache is not None and bench.cache.get_find(bench.key, query) is not None
        started = time.perf_counter()
        (result,) = find(bench, [query], top=request.top,
                         on_progress=self._progress_reporter(job),
                         should_stop=job.cancel.is_set)
        return FindResult(query, list(result.spans), time.perf_counter() - started, cached)

    def _library_search(self, job: Job) -> LibrarySearchResult:
        """The library's two stages with the model already loaded here (no second copy)."""
        from marlin_desk.library.search import search_library

        request: LibrarySearchRequest = job.request  # type: ignore[assignment]
        if self.engine is None:
            raise ModelUnavailable("no model is loaded yet: wait for it or load one")
        self.progress.emit(job.id, 0, 1, -1.0, f"the index, then {request.refine} windows")
        result = search_library(request.query, top=request.top, refine=request.refine,
                                settings=self.settings, engine=self.engine, cache=self.cache,
                                should_stop=job.cancel.is_set)
        return LibrarySearchResult(result)


class EngineClient(QObject):
    """The GUI side of the model worker: submit jobs, cancel them, and hear back by signals."""

    submitted = Signal(int, object)  # job, request: before it runs (the queue yields to it)
    jobStarted = Signal(int, object)  # job, request
    progress = Signal(int, int, int, float, str)
    window = Signal(int, object)
    modelReady = Signal(int, object)  # job, ModelReady
    finished = Signal(int, object, object)  # job, request, result
    failed = Signal(int, object, str)  # job, request, message
    cancelled = Signal(int, object)  # job, request
    _submit = Signal(object)

    _ids = itertools.count(1)

    def __init__(self, cache: Any = None, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.jobs: dict[int, Job] = {}
        self.model_info: dict[str, Any] | None = None
        self._thread = QThread()
        self._thread.setObjectName("marlin-model-worker")
        self._worker = ModelWorker(cache)
        self._worker.moveToThread(self._thread)
        self._submit.connect(self._worker.run)
        self._worker.started.connect(self.jobStarted)
        self._worker.progress.connect(self.progress)
        self._worker.window.connect(self.window)
        self._worker.finished.connect(self._on_finished)
        self._worker.failed.connect(self._on_failed)
        self._worker.cancelled.connect(self._on_cancelled)

    def submit(self, request: Request) -> int:
        if not self._thread.isRunning():
            self._thread.start(QThread.Priority.LowPriority)
        job = Job(next(self._ids), request)
        self.jobs[job.id] = job
        self.submitted.emit(job.id, request)
        self._submit.emit(job)
        return job.id

    def cancel(self, job_id: int | None = None, kind: type | None = None) -> None:
        """Cancel one job, every job of a request type, or (no arguments) every job."""
        for job in list(self.jobs.values()):
            if (job_id is None or job.id == job_id) and \
                    (kind is None or isinstance(job.request, kind)):
                job.cancel.set()

    def active(self, kind: type | None = None) -> list[Job]:
        return [j for j in self.jobs.values() if kind is None or isinstance(j.request, kind)]

    def shutdown(self, wait_ms: int = 15_000) -> None:
        self.cancel()
        if self._thread.isRunning():
            self._thread.quit()
            if not self._thread.wait(wait_ms):
                log.warning("model worker did not stop in %d ms", wait_ms)

    @Slot(int, object, object)
    def _on_finished(self, job_id: int, request: object, result: object) -> None:
        self.jobs.pop(job_id, None)
        if isinstance(result, ModelReady):
            self.model_info = dict(result.info)
            log.info("model ready: %s (%s on %s)", self.model_info.get("model"),
                     self.model_info.get("backend"), self.model_info.get("device"))
            self.modelReady.emit(job_id, result)
        self.finished.emit(job_id, request, result)

    @Slot(int, object, str)
    def _on_failed(self, job_id: int, request: object, message: str) -> None:
        self.jobs.pop(job_id, None)
        self.failed.emit(job_id, request, message)

    @Slot(int, object)
    def _on_cancelled(self, job_id: int, request: object) -> None:
        self.jobs.pop(job_id, None)
        self.cancelled.emit(job_id, request)
