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
import os
import sys
import threading
import time
import traceback
from dataclasses import dataclass, field
from typing import Any

from PySide6.QtCore import QObject, QThread, Signal, Slot

from marlin_desk.core.errors import Cancelled, MarlinError, ModelUnavailable

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
        return str(demo), ("Marlin-2B is not downloaded, so the bundled demo model runs (it "
                           "knows only coloured screens, as in the demo video): Model > "
                           "Download Marlin-2B")
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
        self.bench: Any = None  # workflows.Workbench of the open video
        self.bench_asked: Any = None  # the JobSettings it was opened with
        self._niced = False

    @Slot(object)
    def run(self, job: Job) -> None:
        if not self._niced:  # first job, in the worker thread, before torch is imported
            self._niced = True
            lower_this_thread_priority()
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
        if job.params.get("backend") == "remote":
            return self._connect(job)
        model, why = choose_model(job.params.get("model", ""))
        self.progress.emit(job.id, 0, 1, -1.0, f"loading {model}")
        from marlin_desk.engine.backends import load_best

        # the best way to run it here (GPTQ, NF4, BF16, FP32...), falling back by itself
        backend = job.params.get("backend") or "auto"
        if backend not in {"auto", "gptq", "bnb4", "bf16", "fp32", "sdnq"}:
            backend = "auto"  # a setting from another version: let the app choose
        engine = load_best(model, backend, job.params.get("device") or "auto")
        if job.cancel.is_set():
            raise Cancelled("model load cancelled")
        self.engine, self.bench = engine, None
        info = dict(engine.describe())
        info["why"] = f"{why}; {info.get('why') or ''}".strip("; ")
        self.modelReady.emit(job.id, info)
        return info

    def _connect(self, job: Job) -> dict[str, Any]:
        """The remote backend: no weights here, only a server that must answer."""
        from marlin_desk.workflows import connect_server

        server = self._server_settings(job.params.get("server") or {})
        self.progress.emit(job.id, 0, 1, -1.0, f"connecting to {server.url or 'the server'}")
        engine = connect_server(self._job_settings(server))
        if job.cancel.is_set():
            raise Cancelled("connection cancelled")
        self.engine, self.bench = engine, None
        info = dict(engine.describe())
        self.modelReady.emit(job.id, info)
        return info

    @staticmethod
    def _server_settings(params: dict[str, Any]) -> Any:
        from marlin_desk.workflows import ServerSettings

        return ServerSettings(url=str(params.get("url") or ""),
                              served_model=params.get("served_model") or None,
                              api_key=params.get("api_key") or None,
                              concurrency=max(1, int(params.get("concurrency") or 4)))

    @staticmethod
    def _job_settings(server: Any, **fields: Any) -> Any:
        from marlin_desk.workflows import JobSettings

        return JobSettings(model=server.served_model or "", backend="remote", server=server,
                           **fields)

    def _bench(self, params: dict[str, Any]) -> Any:
        """The open video for these settings (workflows: the same cache key as the CLI)."""
        if self.engine is None:
            raise ModelUnavailable("no model is loaded yet: wait for it or load one (Model menu)")
        from marlin_desk.core.prompts import CAPTION_MAX_NEW_TOKENS
        from marlin_desk.workflows import JobSettings, open_video

        window = {"window": float(params.get("window", 120.0)),
                  "overlap": float(params.get("overlap", 0.0)),
                  "caption_tokens": int(params.get("max_new_tokens") or CAPTION_MAX_NEW_TOKENS)}
        if self.engine.backend == "remote":
            from marlin_desk.workflows import ServerSettings

            served = self.engine.served.name
            settings = self._job_settings(ServerSettings(url=self.engine.client.url,
                                                         served_model=served,
                                                         concurrency=self.engine.concurrency),
                                          **window)
        else:
            settings = JobSettings(model=self.engine.model_id, device=self.engine.device,
                                   revision=self.engine.revision, **window)
        bench = self.bench
        # open_video may adapt the settings to the model (its budget, its longest window), so
        # compare with what was asked for last time
        if bench is None or bench.video != params["video"] or self.bench_asked != settings:
            # a new video or new settings; the model (and the open session) stay loaded
            session = bench.session if bench is not None and bench.video == params["video"] \
                else None
            bench = open_video(params["video"], settings, use_cache=self.cache is not None,
                               cache=self.cache, engine=self.engine, info=params.get("info"))
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

    def _analyse(self, job: Job) -> dict[str, Any]:
        from marlin_desk.workflows import analyze

        bench = self._bench(job.params)
        if not job.params.get("resume", True) and bench.cache is not None:
            bench.cache.discard(bench.key)
        done = bench.cache.windows_done(bench.key) if bench.cache is not None else {}
        self.progress.emit(job.id, len(done), bench.total_windows, -1.0,
                           "; ".join(bench.notes) or "sampling frames")
        analysis, _cached = analyze(bench, on_window=lambda r: self.window.emit(job.id, r),
                                    on_progress=self._progress_reporter(job),
                                    should_stop=job.cancel.is_set)
        ref = key_ref(bench.key) if bench.cache is not None else None
        return {"analysis": analysis, "ref": ref, "resumed": len(done)}

    def _find(self, job: Job) -> dict[str, Any]:
        from marlin_desk.workflows import find

        p = job.params
        query = str(p["query"]).strip()
        if not query:
            raise MarlinError("type what you are looking for first")
        bench = self._bench(p)
        cached = bench.cache is not None and p.get("use_cache", True) and \
            bench.cache.get_find(bench.key, query) is not None
        started = time.perf_counter()
        (result,) = find(bench, [query], top=p.get("top"),
                         on_progress=self._progress_reporter(job),
                         should_stop=job.cancel.is_set)
        return {"query": query, "spans": result.spans,
                "seconds": time.perf_counter() - started, "cached": cached}


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
        log.info("model ready: %s (%s on %s)", self.model_info.get("model"),
                 self.model_info.get("backend"), self.model_info.get("device"))
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
