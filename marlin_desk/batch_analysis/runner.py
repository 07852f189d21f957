"""Running the batch: every video opened (probe, cache key, what is left), then analysed and
searched through workflows, one model for all, results written as each video completes.

Nothing is ever decided by one bad video: a file that cannot be read, has no video stream or is
truncated fails alone with its plain message and the batch goes on. Only a model that cannot be
loaded stops the batch (every video would fail the same way). Resume is the cache's: finished
windows are stored one by one, so a re-run skips finished videos (no model load at all when
every video is cached) and finishes the partial one. One model for the whole batch: the first
video that needs it loads it, later videos reuse it. Several videos at once only where the model
runs elsewhere (`concurrency_allowed`): a local model on one device runs one video at a time,
faster than two fighting over it.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from marlin_desk.batch_analysis.outputs import output_bases, write_outputs, write_transcript
from marlin_desk.batch_analysis.report import (
    CACHED,
    CANCELLED,
    DONE,
    FAILED,
    PENDING,
    BatchProgress,
    BatchReport,
    OnProgress,
    OnResult,
    VideoResult,
    format_seconds,
)
from marlin_desk.batch_analysis.settings import BatchSettings
from marlin_desk.core.errors import BadInput, Cancelled, MarlinError, ModelUnavailable
from marlin_desk.core.windows import plan_windows
from marlin_desk.store.cache import AnalysisCache
from marlin_desk.workflows import JobSettings, Workbench, analyze, find, open_video

log = logging.getLogger(__name__)


def concurrency_allowed(settings: JobSettings) -> bool:
    """Whether several videos may run at once: only when the model runs on a server that
    batches requests itself. A local model on one device runs one video at a time."""
    return settings.backend == "remote"


@dataclass
class _Item:
    index: int
    video: str
    result: VideoResult
    bench: Workbench | None = None
    open_error: str | None = None
    left: dict[str, int] = field(default_factory=lambda: {"analyze": 0, "find": 0})


class _Rates:
    """Measured seconds per window and per find step, for the batch's ETA."""

    def __init__(self) -> None:
        self.units = {"analyze": 0, "find": 0}
        self.seconds = {"analyze": 0.0, "find": 0.0}

    def per_unit(self, stage: str) -> float | None:
        if self.units[stage]:
            return self.seconds[stage] / self.units[stage]
        other = "find" if stage == "analyze" else "analyze"
        return self.seconds[other] / self.units[other] if self.units[other] else None


class _Batch:
    def __init__(self, videos: Sequence[str], settings: BatchSettings, engine: Any,
                 cache: AnalysisCache | None, on_progress: OnProgress | None,
                 on_result: OnResult | None, should_stop: Callable[[], bool] | None) -> None:
        self.settings = settings
        self.engine = engine
        self.cache = cache
        self.on_progress = on_progress
        self.on_result = on_result
        self.should_stop = should_stop or (lambda: False)
        self.items = [_Item(i, v, VideoResult(v)) for i, v in enumerate(videos)]
        self.bases = output_bases(videos, settings.out)
        self.protected = [os.path.realpath(v) for v in videos]
        self.report = BatchReport([it.result for it in self.items])
        self.lock = threading.RLock()  # callbacks, counters, the shared engine
        self.load_lock = threading.Lock()  # held by the video that may load the model
        self.rates = _Rates()
        self.finished = 0
        self.videos_at_once = 1
        self.speech_runner: Any = None  # one Whisper model for the batch, with --transcribe

    # -- public entry ---------------------------------------------------------------------
    def run(self) -> BatchReport:
        started = time.perf_counter()
        try:
            self._check_settings()
            choice = self.settings.job.choice
            if choice is not None and choice.source != "user":  # which model the app chose
                self.report.notes.append(choice.why)  # and why, as analyze and find say
            self.videos_at_once = self._videos_at_once()
            self.report.videos_at_once = self.videos_at_once
            self._open_all()
            if not self._halted():
                if self.videos_at_once == 1:
                    for item in self.items:
                        self._process(item)
                else:
                    with ThreadPoolExecutor(self.videos_at_once, "batch") as pool:
                        list(pool.map(self._process, self.items))
        finally:
            self.report.seconds = time.perf_counter() - started
            self.report.stopped = self.report.fatal is None and any(
                it.result.status in (PENDING, CANCELLED) for it in self.items)
            if self.engine is not None:
                self.report.engine = _describe(self.engine)
        return self.report

    def _check_settings(self) -> None:
        job = self.settings.job
        try:  # a bad --window fails once here, not once per video
            plan_windows(max(job.window, 1.0) * 3, job.window, job.overlap,
                         max_window=job.budget.max_window_seconds)
        except ValueError as exc:
            raise BadInput(str(exc)) from None
        if self.settings.videos_at_once < 1:
            raise BadInput("--videos-at-once must be at least 1")
        if self.settings.subtitles not in (None, "srt", "vtt"):
            raise BadInput(f"unknown subtitle format {self.settings.subtitles!r}; use srt or vtt")

    def _videos_at_once(self) -> int:
        wanted = self.settings.videos_at_once
        if wanted > 1 and not concurrency_allowed(self.settings.job):
            self.report.notes.append(
                f"{wanted} videos at once ignored: the {self.settings.job.backend} backend runs "
                "one video at a time (one model on one device); a remote server runs several")
            return 1
        return min(wanted, len(self.items))

    def _halted(self) -> bool:
        return self.report.fatal is not None or self.should_stop()

    # -- opening: probe, cache key, what is left ------------------------------------------
    def _open_all(self) -> None:
        total = len(self.items)
        for item in self.items:
            if self._halted():
                return
            self._emit("check", item, item.index, total, f"checking {item.video}")
            try:
                bench = open_video(item.video, self.settings.job,
                                   use_cache=self.settings.use_cache, cache=self.cache,
                                   engine=self.engine)
            except ModelUnavailable as exc:
                self._fatal(item, exc)
                return
            except MarlinError as exc:
                item.open_error = str(exc)
                continue
            except Exception as exc:  # noqa: BLE001 - one odd file never stops the batch
                log.exception("opening %s", item.video)
                item.open_error = f"internal error: {exc.__class__.__name__}: {exc}"
                continue
            item.bench = bench
            self._adopt_engine(bench)  # a remote server is connected at open: one for all
            for note in bench.notes:
                if note not in self.report.notes:
                    self.report.notes.append(note)
            item.result.duration = bench.info.duration
            item.result.windows = bench.total_windows
            complete, done = self._cache_state(bench)
            item.left["analyze"] = 0 if complete else bench.total_windows - done
            item.left["find"] = bench.total_windows * self._queries_to_run(bench)
        self._emit_plan()

    def _cache_state(self, bench: Workbench) -> tuple[bool, int]:
        """(complete, windows stored) for the bench's key: no model, no decoding."""
        if bench.cache is None:
            return False, 0
        digest = bench.key.digest()
        for entry in bench.cache.entries(bench.key.fingerprint):
            if entry.digest == digest:
                return entry.complete, entry.windows_done
        return False, 0

    def _queries_to_run(self, bench: Workbench) -> int:
        if bench.cache is None:
            return len(self.settings.queries)
        return sum(1 for q in self.settings.queries if bench.cache.get_find(bench.key, q) is None)

    def _emit_plan(self) -> None:
        opened = [it for it in self.items if it.bench is not None]
        seconds = sum(it.bench.info.duration for it in opened if it.bench is not None)
        ready = [it for it in opened if not it.left["analyze"] and not it.left["find"]]
        partial = [it for it in opened if it.left["analyze"]
                   and it.left["analyze"] < it.result.windows]
        todo = sum(it.left["analyze"] for it in opened)
        parts = [f"{len(self.items)} video{'s' if len(self.items) != 1 else ''} "
                 f"({format_seconds(seconds)} of video)"]
        if ready:
            parts.append(f"{len(ready)} already done")
        if partial:
            parts.append(f"{len(partial)} partly analysed (resumed)")
        if todo:
            parts.append(f"{todo} window{'s' if todo != 1 else ''} to analyse")
        unreadable = len(self.items) - len(opened)
        if unreadable:
            parts.append(f"{unreadable} unreadable")
        self._emit("plan", None, len(opened), len(self.items), ", ".join(parts))

    # -- one video --------------------------------------------------------------------------
    def _process(self, item: _Item) -> None:
        if self._halted():
            return
        if self.videos_at_once > 1 and self.engine is None:
            with self.load_lock:  # until the model is loaded, one video at a time
                if self.engine is None:
                    self._process_one(item)
                    return
        self._process_one(item)

    def _process_one(self, item: _Item) -> None:
        if self._halted():
            return
        result = item.result
        started = time.perf_counter()
        try:
            if item.open_error is not None or item.bench is None:
                raise BadInput(item.open_error or "not opened")
            self._analyse(item)
        except ModelUnavailable as exc:
            self._fatal(item, exc)
        except Cancelled:
            result.status = CANCELLED
            result.error = "cancelled"
        except MarlinError as exc:
            result.status, result.error = FAILED, str(exc)
        except Exception as exc:  # noqa: BLE001 - one odd file never stops the batch
            log.exception("batch: %s", item.video)
            result.status = FAILED
            result.error = f"internal error: {exc.__class__.__name__}: {exc}"
        finally:
            result.seconds = time.perf_counter() - started
            bench, item.bench = item.bench, None
            if bench is not None:
                bench.close()  # the session's prefills (or clips) go with it
            with self.lock:
                item.left = {"analyze": 0, "find": 0}
                if result.status != PENDING:
                    self.finished += 1
                    if self.on_result:
                        self.on_result(item.index, result)

    def _analyse(self, item: _Item) -> None:
        bench = item.bench
        assert bench is not None
        result = item.result
        if bench.engine is None and self.engine is not None:
            bench.engine = self.engine  # ensure_session uses it (and re-keys if it must)
        complete, stored = self._cache_state(bench)
        analysis, from_cache = analyze(
            bench, on_progress=self._tracker(item, "analyze", result.windows if complete
                                             else stored),
            should_stop=self.should_stop)
        self._adopt_engine(bench)
        result.analysis_cached = from_cache
        result.windows = len(analysis.windows)
        result.windows_cached = len(analysis.windows) if from_cache else min(stored,
                                                                             result.windows)
        result.events = len(analysis.events)
        finds: list[Any] = []
        if self.settings.queries:
            if self.should_stop():
                raise Cancelled("batch stopped")
            finds = find(bench, self.settings.queries,
                         on_progress=self._tracker(item, "find", 0),
                         should_stop=self.should_stop)
            self._adopt_engine(bench)
        transcript = self._transcribe(item) if self.settings.transcribe is not None else None
        if self.should_stop():  # stopped during the last step: write nothing half-asked
            raise Cancelled("batch stopped")
        notes = list(dict.fromkeys([*bench.notes,
                                    *(getattr(bench.session, "notes", None) or [])]))
        outputs, output_notes = write_outputs(
            self.bases[item.video], item.video, analysis, finds, bench.info,
            self.settings.job.model, self.settings, self.protected)
        if transcript is not None:
            outputs["transcript"] = write_transcript(self.bases[item.video], item.video,
                                                     transcript, self.settings, self.protected)
            if transcript.note:
                output_notes.append(f"transcript: {transcript.note}")
        result.outputs = outputs
        result.notes = [n for n in notes if n not in self.report.notes] + output_notes
        model_used = bench.session is not None
        result.status = CACHED if from_cache and not model_used else DONE

    def _transcribe(self, item: _Item) -> Any:
        """The video's transcript (workflows.speech, through the same cache), one Whisper
        model for the whole batch; without this run's timings."""
        from marlin_desk.workflows.speech import open_runner, transcribe, without_run_info

        bench = item.bench
        assert bench is not None
        with self.lock:
            if self.speech_runner is None:
                self.speech_runner = open_runner(self.settings.transcribe)
        self._emit("transcribe", item, 0, 0, "transcribing its speech")
        transcript = transcribe(item.video, self.settings.transcribe, cancel=self.should_stop,
                                cache=self.cache, use_cache=self.cache is not None,
                                info=bench.info, runner=self.speech_runner)
        return without_run_info(transcript)

    def _adopt_engine(self, bench: Workbench) -> None:
        with self.lock:
            if self.engine is None and bench.engine is not None:
                self.engine = bench.engine
                for note in getattr(bench.engine, "fallbacks", None) or []:
                    if note not in self.report.notes:
                        self.report.notes.append(note)

    def _fatal(self, item: _Item, exc: MarlinError) -> None:
        """The model cannot be loaded: no video can be done. The video stays pending (it is
        not its fault) and so do the rest; the report says why."""
        log.warning("batch stopped at %s: %s", item.video, exc)
        with self.lock:
            if self.report.fatal is None:
                self.report.fatal, self.report.fatal_code = str(exc), exc.exit_code

    # -- progress ---------------------------------------------------------------------------
    def _tracker(self, item: _Item, stage: str, done_before: int) -> Callable[[Any], None]:
        """An on_progress for workflows: it counts windows (or find steps) as they finish and
        how long each took, for the batch's ETA, and passes a BatchProgress on."""
        last = {"done": done_before, "elapsed": 0.0}

        def report(p: Any) -> None:
            with self.lock:
                if p.done > last["done"]:
                    self.rates.units[stage] += p.done - last["done"]
                    self.rates.seconds[stage] += max(0.0, p.elapsed - last["elapsed"])
                    last["done"], last["elapsed"] = p.done, p.elapsed
                item.left[stage] = max(0, p.total - p.done)
                self._emit(stage, item, p.done, p.total, p.message)

        return report

    def _eta(self) -> float | None:
        left = 0.0
        for stage in ("analyze", "find"):
            units = sum(it.left[stage] for it in self.items)
            if units:
                rate = self.rates.per_unit(stage)
                if rate is None:
                    return None
                left += units * rate
        return left / self.videos_at_once

    def _emit(self, stage: str, item: _Item | None, done: int, of: int, message: str) -> None:
        if self.on_progress is None:
            return
        with self.lock:
            progress = BatchProgress(stage, item.index if item else -1,
                                     item.video if item else "", self.finished,
                                     len(self.items), done, of,
                                     self._eta() if stage in ("analyze", "find") else None,
                                     message)
            self.on_progress(progress)


def _describe(engine: Any) -> dict[str, Any] | None:
    describe = getattr(engine, "describe", None)
    return describe() if callable(describe) else None


def run_batch(videos: Sequence[str], settings: BatchSettings, *,
              on_progress: OnProgress | None = None, on_result: OnResult | None = None,
              should_stop: Callable[[], bool] | None = None, engine: Any = None,
              cache: AnalysisCache | None = None) -> BatchReport:
    """Analyse (and search) every video and write its results; returns one VideoResult per
    video, in order. Never raises for one video's trouble (it is that video's `error`); raises
    BadInput for unusable settings. A model that cannot be loaded ends the batch
    (`report.fatal`). `should_stop` is polled between windows and tokens: the running video is
    `cancelled` (its finished windows stay cached), those not started stay `pending`.
    `engine`: a model already loaded; `cache`: an open cache (default: the user's)."""
    own_cache = cache is None and settings.use_cache
    if own_cache:
        cache = AnalysisCache()
    try:
        return _Batch(list(videos), settings, engine, cache if settings.use_cache else None,
                      on_progress, on_result, should_stop).run()
    finally:
        if own_cache and cache is not None:
            cache.close()
