"""The model worker: one long-lived QThread that owns the model and runs queued jobs.

Jobs (load, analyse, find) are sent to the worker object through a queued signal, so the
thread's event queue is the job queue and jobs run one after another. Every job reports by
signals (started, progress, partial windows, finished, failed, cancelled); the GUI connects them
to QObject slots so that they run on the GUI thread. Cancelling sets the job's threading.Event,
which the pipeline polls between windows and between generated tokens.

torch and transformers are imported here only inside the job methods, i.e. in the worker thread
and after the window is shown: importing this module stays cheap.
"""

from __future__ import annotations

import itertools
import logging
import threading
import time
import traceback
from dataclasses import dataclass, field
from typing import Any

from PySide6.QtCore import QObject, QThread, Signal, Slot

from marlin_desk.core.errors import Cancelled, MarlinError, ModelUnavailable

log = logging.getLogger(__name__)

PRECISIONS = {"bfloat16": "bf16", "float16": "fp16", "float32": "fp32"}


@dataclass
class Job:
    id: int
    kind: str  # load | analyse | find
    params: dict[str, Any]
    cancel: threading.Event = field(default_factory=threading.Event)
    submitted: float = field(default_factory=time.monotonic)


def choose_model(spec: str) -> tuple[str, str]:
    """(model, why): the user's choice; else Marlin-2B if downloaded; else the demo model."""
    if spec:
        return spec, "chosen by the user (Preferences or --model)"
    from marlin_desk.engine.loader import DEFAULT_MODEL
    from marlin_desk.resources import demo_model

    try:
        from huggingface_hub import try_to_load_from_cache

        cached = try_to_load_from_cache(DEFAULT_MODEL, "config.json")
    except Exception:  # noqa: BLE001 - any hub trouble means "not downloaded"
        cached = None
    if isinstance(cached, str):
        return DEFAULT_MODEL, "Marlin-2B is downloaded"
    demo = demo_model()
    if (demo / "config.json").is_file():
        return str(demo), ("Marlin-2B is not downloaded, so the bundled demo model runs (its "
                           "answers are not meaningful): Model > Download Marlin-2B")
    raise ModelUnavailable("no model: Marlin-2B is not downloaded and the demo model is missing;"
                           " use Model > Download Marlin-2B or choose a model folder in "
                           "Preferences")


class ModelWorker(QObject):
    """Lives in the model thread. Holds the loaded model and one video session."""

    started = Signal(int, str)
    progress = Signal(int, int, int, float, str)  # job, done, total, eta (-1: unknown), message
    window = Signal(int, object)  # job, WindowResult (partial analysis)
    modelReady = Signal(int, object)  # job, LoadedModel.describe() dict
    finished = Signal(int, str, object)  # job, kind, result
    failed = Signal(int, str, str)  # job, kind, plain message
    cancelled = Signal(int, str)

    def __init__(self, cache: Any = None) -> None:
        super().__init__()
        self.cache = cache
        self.engine: Any = None
        self.session: Any = None

    @Slot(object)
    def run(self, job: Job) -> None:
        if job.cancel.is_set():
            self.cancelled.emit(job.id, job.kind)
            return
        self.started.emit(job.id, job.kind)
        try:
            result = getattr(self, f"_{job.kind}")(job)
        except Cancelled:
            self.cancelled.emit(job.id, job.kind)
        except MarlinError as exc:
            log.warning("%s job failed: %s", job.kind, exc)
            self.failed.emit(job.id, job.kind, str(exc))
        except Exception as exc:  # noqa: BLE001 - the worker must survive anything
            log.error("%s job crashed\n%s", job.kind, traceback.format_exc())
            self.failed.emit(job.id, job.kind, f"unexpected error: {exc}")
        else:
            self.finished.emit(job.id, job.kind, result)

    # -- jobs ------------------------------------------------------------------------------
    def _load(self, job: Job) -> dict[str, Any]:
        model, why = choose_model(job.params.get("model", ""))
        self.progress.emit(job.id, 0, 1, -1.0, f"loading {model}")
        from marlin_desk.engine.loader import load_model

        engine = load_model(model, job.params.get("device", "auto"))
        if job.cancel.is_set():
            raise Cancelled("model load cancelled")
        self.engine, self.session = engine, None
        info = dict(engine.describe())
        info["why"] = f"{why}; {info.get('why') or ''}".strip("; ")
        self.modelReady.emit(job.id, info)
        return info

    def _session_for(self, video: str) -> Any:
        if self.engine is None:
            raise ModelUnavailable("no model is loaded yet: wait for it or load one (Model menu)")
        if self.session is None or self.session.video != video:
            from marlin_desk.engine.session import VideoSession

            self.session = None
            self.session = VideoSession(self.engine, video)
        return self.session

    def _key(self, session: Any, params: dict[str, Any]) -> Any:
        if self.cache is None:
            return None
        from marlin_desk.core.prompts import CAPTION_MAX_NEW_TOKENS
        from marlin_desk.store import CacheKey

        settings = {"window": float(params.get("window", 120.0)),
                    "overlap": float(params.get("overlap", 0.0)),
                    "budget": session.budget.to_dict(),
                    "caption_tokens": int(params.get("max_new_tokens") or CAPTION_MAX_NEW_TOKENS)}
        e = self.engine
        return CacheKey.for_file(session.video, e.model_id, e.revision or "",
                                 PRECISIONS.get(e.dtype, e.dtype), settings)

    def _analyse(self, job: Job) -> dict[str, Any]:
        from marlin_desk.engine.pipeline import analyze, windows_for

        p = job.params
        session = self._session_for(p["video"])
        window, overlap = float(p.get("window", 120.0)), float(p.get("overlap", 0.0))
        total = len(windows_for(session, window, overlap))
        key = self._key(session, p)
        done: dict[int, Any] = {}
        if key is not None and p.get("resume", True):
            try:
                done = self.cache.windows_done(key)
            except Exception as exc:  # noqa: BLE001 - a cache problem never stops the job
                log.info("cache unusable for resume: %s", exc)
        for result in sorted(done.values(), key=lambda r: r.index):
            self.window.emit(job.id, result)

        def on_window(result: Any) -> None:
            if key is not None:
                try:
                    self.cache.put_window(key, total, session.video, result)
                except Exception as exc:  # noqa: BLE001
                    log.info("window not cached: %s", exc)
            self.window.emit(job.id, result)

        def on_progress(pr: Any) -> None:
            eta = pr.eta
            self.progress.emit(job.id, pr.done, pr.total, -1.0 if eta is None else float(eta),
                               pr.message)

        self.progress.emit(job.id, len(done), total, -1.0, "sampling frames")
        kwargs: dict[str, Any] = {}
        if p.get("max_new_tokens"):
            kwargs["max_new_tokens"] = int(p["max_new_tokens"])
        analysis = analyze(session, window, overlap, done=done, on_window=on_window,
                           on_progress=on_progress, should_stop=job.cancel.is_set, **kwargs)
        ref = None
        if key is not None:
            try:
                self.cache.complete(key, analysis)
            except Exception as exc:  # noqa: BLE001
                log.info("analysis not cached: %s", exc)
            ref = key_ref(key)
        return {"analysis": analysis, "ref": ref, "resumed": len(done)}

    def _find(self, job: Job) -> dict[str, Any]:
        from marlin_desk.engine.pipeline import find

        p = job.params
        query = str(p["query"]).strip()
        if not query:
            raise MarlinError("type what you are looking for first")
        session = self._session_for(p["video"])
        key = self._key(session, p)
        if key is not None and p.get("use_cache", True):
            try:
                hit = self.cache.get_find(key, query)
            except Exception as exc:  # noqa: BLE001
                log.info("find cache unusable: %s", exc)
                hit = None
            if hit is not None:
                return {"query": query, "spans": hit.spans, "seconds": 0.0, "cached": True}

        def on_progress(pr: Any) -> None:
            eta = pr.eta
            self.progress.emit(job.id, pr.done, pr.total, -1.0 if eta is None else float(eta),
                               pr.message)

        started = time.perf_counter()
        window, overlap = float(p.get("window", 120.0)), float(p.get("overlap", 0.0))
        (result,) = find(session, [query], window, overlap, top=p.get("top"),
                         on_progress=on_progress, should_stop=job.cancel.is_set)
        if key is not None:
            try:
                self.cache.put_find(key, query, result.spans)
            except Exception as exc:  # noqa: BLE001
                log.info("find not cached: %s", exc)
        return {"query": query, "spans": result.spans,
                "seconds": time.perf_counter() - started, "cached": False}


def key_ref(key: Any) -> dict[str, Any]:
    """What a project stores to find its analysis again in the cache."""
    return {"fingerprint": key.fingerprint, "model_id": key.model_id, "revision": key.revision,
            "precision": key.precision, "settings": key.settings, "key": key.digest()}


class EngineClient(QObject):
    """The GUI side of the model worker: submit jobs, cancel them, and hear back by signals."""

    jobStarted = Signal(int, str)
    progress = Signal(int, int, int, float, str)
    window = Signal(int, object)
    modelReady = Signal(int, object)
    finished = Signal(int, str, object)
    failed = Signal(int, str, str)
    cancelled = Signal(int, str)
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
        self._worker.modelReady.connect(self._on_model_ready)
        self._worker.finished.connect(self._on_finished)
        self._worker.failed.connect(self._on_failed)
        self._worker.cancelled.connect(self._on_cancelled)

    def submit(self, kind: str, **params: Any) -> int:
        if not self._thread.isRunning():
            self._thread.start(QThread.Priority.LowPriority)
        job = Job(next(self._ids), kind, params)
        self.jobs[job.id] = job
        self._submit.emit(job)
        return job.id

    def cancel(self, job_id: int | None = None, kind: str | None = None) -> None:
        """Cancel one job, every job of a kind, or (no arguments) every job."""
        for job in list(self.jobs.values()):
            if (job_id is None or job.id == job_id) and (kind is None or job.kind == kind):
                job.cancel.set()

    def active(self, kind: str | None = None) -> list[Job]:
        return [j for j in self.jobs.values() if kind is None or j.kind == kind]

    def shutdown(self, wait_ms: int = 15_000) -> None:
        self.cancel()
        if self._thread.isRunning():
            self._thread.quit()
            if not self._thread.wait(wait_ms):
                log.warning("model worker did not stop in %d ms", wait_ms)

    @Slot(int, object)
    def _on_model_ready(self, job_id: int, info: object) -> None:
        self.model_info = dict(info)  # type: ignore[call-overload]
        self.modelReady.emit(job_id, info)

    @Slot(int, str, object)
    def _on_finished(self, job_id: int, kind: str, result: object) -> None:
        self.jobs.pop(job_id, None)
        self.finished.emit(job_id, kind, result)

    @Slot(int, str, str)
    def _on_failed(self, job_id: int, kind: str, message: str) -> None:
        self.jobs.pop(job_id, None)
        self.failed.emit(job_id, kind, message)

    @Slot(int, str)
    def _on_cancelled(self, job_id: int, kind: str) -> None:
        self.jobs.pop(job_id, None)
        self.cancelled.emit(job_id, kind)
