"""What the commands and the app do with a video: analyse and search it through the analysis
cache, loading the model only when the cache cannot answer.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from typing import Any

from marlin_desk.core.budget import TRAINING_BUDGET
from marlin_desk.core.errors import BadInput
from marlin_desk.core.timeline import Analysis, WindowResult
from marlin_desk.core.windows import plan_windows
from marlin_desk.media.probe import VideoInfo, probe
from marlin_desk.store.cache import AnalysisCache
from marlin_desk.store.fingerprint import CacheKey
from marlin_desk.workflows.settings import (
    JobSettings,
    connect_server,
    is_remote,
    model_identity,
    open_engine,
)

log = logging.getLogger(__name__)


LONG_RUN_SECONDS = 120.0  # CPU runs estimated longer than this are announced


@dataclass
class Workbench:
    """One video opened for analysis: its probe, its cache key, and the model once loaded."""

    video: str
    settings: JobSettings
    info: VideoInfo
    key: CacheKey
    cache: AnalysisCache | None
    engine: Any = None  # engine.loader.LoadedModel, loaded on first need
    session: Any = None  # engine.session.VideoSession
    notes: list[str] = field(default_factory=list)

    @property
    def total_windows(self) -> int:
        return len(plan_windows(self.info.duration, self.settings.window, self.settings.overlap,
                                max_window=self.settings.budget.max_window_seconds))

    def ensure_session(self) -> Any:
        """Load the model (once) and open the video session."""
        if self.session is None:
            from marlin_desk.engine.session import VideoSession

            if self.engine is None and is_remote(self.settings):
                self.engine = connect_server(self.settings)
            if is_remote(self.settings):
                from marlin_desk.remote.session import RemoteSession

                self.session = RemoteSession(self.engine, self.video, info=self.info,
                                             budget=self.settings.budget)
                return self.session
            if self.engine is None:
                self.engine = open_engine(self.settings)
                self.notes.extend(self.engine.fallbacks)
            self._rekey()
            self.session = VideoSession(self.engine, self.video, info=self.info,
                                        budget=self.settings.budget)
        return self.session

    def close(self) -> None:
        """Free what the open session keeps (prefills, clips); the model stays loaded."""
        if self.session is not None:
            self.session.forget()
            self.session = None

    def _rekey(self) -> None:
        """The key was computed from the planned backend; a fallback changes the precision,
        and the answers must be stored under what really ran."""
        precision = engine_precision(self.engine)
        if precision != self.key.precision:
            log.info("cache key precision %s -> %s (backend fallback)", self.key.precision,
                     precision)
            self.key = dataclasses.replace(self.key, precision=precision)


def _served_name(settings: JobSettings, engine: Any) -> str:
    if engine is not None:
        return engine.served.name
    assert settings.server is not None and settings.server.served_model is not None
    return settings.server.served_model


def open_video(video: str, settings: JobSettings, *, use_cache: bool = True,
               cache: AnalysisCache | None = None, engine: Any = None,
               info: VideoInfo | None = None) -> Workbench:
    """Probe (clear errors before any model work) and compute the cache key. `engine`: a model
    already loaded (the app keeps one across videos); `cache`: an open cache to use; `info`: the
    video's probe when the caller already has it (the app probes on open)."""
    from marlin_desk.engine.backends import planned_precision
    from marlin_desk.engine.loader import model_budget

    remote = is_remote(settings)
    if remote and engine is None and (settings.server is None or not settings.server.served_model):
        engine = connect_server(settings)  # to learn the model's name (and its folder)
    notes = []
    if settings.budget == TRAINING_BUDGET:  # the model's own budget, when it has another one
        # a server's model folder, when this machine sees it, tells its budget too
        folder = engine.served.root if remote and engine is not None else settings.model
        settings = dataclasses.replace(settings, budget=model_budget(folder))
        settings, note = _fit_window_to_model(settings)
        notes += [note] if note else []
    info = info if info is not None else probe(video)
    try:
        plan_windows(info.duration, settings.window, settings.overlap,
                     max_window=settings.budget.max_window_seconds)
    except ValueError as exc:
        raise BadInput(str(exc)) from exc
    if remote:  # served models are named by the server; their dtype is not reported
        precision, revision = "remote", "server"
        model_id = f"remote:{_served_name(settings, engine)}"
    else:
        precision = engine_precision(engine) if engine is not None else \
            planned_precision(settings.model, settings.backend, settings.device)
        model_id, revision = model_identity(settings.model, settings.revision)
    key = CacheKey.for_file(video, model_id, revision, precision, settings.cache_settings())
    if use_cache and cache is None:
        cache = AnalysisCache()
    elif not use_cache:
        cache = None
    bench = Workbench(video=video, settings=settings, info=info, key=key, cache=cache,
                      engine=engine, notes=notes)
    if cache is not None and cache.recovered_from is not None:
        bench.notes.append(cache.recovery_reason or "the analysis cache was rebuilt")
    return bench


def _fit_window_to_model(settings: JobSettings) -> tuple[JobSettings, str]:
    """A model trained on shorter clips than Marlin-2B (its budget.json caps the frames, as the
    bundled demo model's does) gets windows no longer than it knows, with a note saying so,
    instead of an error for the app's default 120 s windows."""
    longest = settings.budget.max_window_seconds
    if settings.budget == TRAINING_BUDGET or settings.window <= longest:
        return settings, ""
    overlap = settings.overlap if settings.overlap < longest else 0.0
    note = (f"this model was trained on clips of up to {longest:g} s, so the video is read in "
            f"{longest:g} s windows (not {settings.window:g} s)")
    return dataclasses.replace(settings, window=longest, overlap=overlap), note


def analyze(bench: Workbench, *, on_window: Callable[[WindowResult], None] | None = None,
            on_progress: Callable[[Any], None] | None = None,
            should_stop: Callable[[], bool] | None = None,
            fresh: bool = False) -> tuple[Analysis, bool]:
    """The video's analysis and whether it came whole from the cache. Finished windows are
    stored one by one, so an interrupted analysis resumes where it stopped.

    `fresh`: analyse every window again (Re-analyse). The cache keeps the old complete
    analysis until the new one is complete: a cancelled re-analysis loses nothing."""
    from marlin_desk.engine import pipeline

    cache = bench.cache
    if cache is not None and not fresh:
        cached = cache.get_analysis(bench.key)
        if cached is not None:
            return cached, True
    done = cache.windows_done(bench.key) if cache is not None and not fresh else {}
    if done and on_window:
        for result in sorted(done.values(), key=lambda r: r.index):
            on_window(result)

    def keep(result: WindowResult) -> None:
        if cache is not None:
            _quietly(cache.put_window, bench.key, bench.total_windows, bench.video, result)
        if on_window:
            on_window(result)

    key = bench.key
    session = bench.ensure_session()
    if bench.key != key and cache is not None and not fresh:  # a fallback changed the precision
        cached = cache.get_analysis(bench.key)
        if cached is not None:
            return cached, True
        done = cache.windows_done(bench.key)
    _announce_estimate(bench, len(done), on_progress)
    analysis = pipeline.analyze(session, bench.settings.window, bench.settings.overlap,
                                done=done, on_window=keep, on_progress=on_progress,
                                should_stop=should_stop,
                                max_new_tokens=bench.settings.caption_tokens,
                                concurrency=session.max_concurrency)
    analysis.video = bench.video
    if cache is not None:
        _quietly(cache.complete, bench.key, analysis)
    return analysis, False


def engine_precision(engine: Any) -> str:
    """The numeric precision of a loaded engine (older engines carry only a dtype)."""
    return getattr(engine, "precision", "") or engine.dtype


def _announce_estimate(bench: Workbench, done: int, on_progress: Callable[[Any], None] | None,
                       ) -> None:
    """On CPU a long video takes long: say how long before the first window, not after (the
    measured ETA in Progress takes over once a window is done)."""
    if on_progress is None or bench.engine is None or bench.engine.device != "cpu":
        return
    from marlin_desk.engine.backends import estimate_for, prompt_tokens_for
    from marlin_desk.engine.pipeline import Progress

    left = bench.total_windows - done
    if left <= 0:
        return
    try:
        estimate = estimate_for(bench.engine, left, prompt_tokens_for(bench.settings.window),
                                new_tokens=min(512, bench.settings.caption_tokens))
    except Exception as exc:  # noqa: BLE001 - an estimate never stops the work
        log.info("no time estimate: %s", exc)
        return
    if estimate.seconds < LONG_RUN_SECONDS:  # only a long run needs warning
        return
    on_progress(Progress(0, bench.total_windows, 0, 0.0,  # done 0: no ETA from elapsed yet
                         f"running on CPU: {estimate.message()}"))


def _quietly(write: Callable[..., Any], *args: Any) -> None:
    """A cache that cannot be written (full disk, read-only folder) never stops the work."""
    try:
        write(*args)
    except Exception as exc:  # noqa: BLE001 - logged; the answer still reaches the user
        log.warning("analysis cache not updated: %s", exc)


def find(bench: Workbench, queries: list[str], *, top: int | None = None,
         on_progress: Callable[[Any], None] | None = None,
         should_stop: Callable[[], bool] | None = None) -> list[Any]:
    """Ranked spans per query; cached queries cost nothing, the rest share window prefills."""
    from marlin_desk.engine import pipeline
    from marlin_desk.engine.pipeline import QueryResult

    answers: dict[str, QueryResult] = {}
    cache = bench.cache
    for q in queries:
        hit = cache.get_find(bench.key, q) if cache is not None else None
        if hit is not None:
            answers[q] = QueryResult(q, hit.spans, 0.0, (hit.extra or {}).get("windows", []))
    todo = [q for q in dict.fromkeys(queries) if q not in answers]
    if todo:
        session = bench.ensure_session()
        for result in pipeline.find(session, todo, bench.settings.window, bench.settings.overlap,
                                    on_progress=on_progress, should_stop=should_stop,
                                    concurrency=session.max_concurrency):
            answers[result.query] = result
            if cache is not None:
                _quietly(cache.put_find, bench.key, result.query, result.spans,
                         {"windows": result.windows})
    results = []
    for q in queries:
        r = answers[q]
        results.append(QueryResult(r.query, r.spans[:top] if top else r.spans, r.seconds,
                                   r.windows))
    return results


def find_in_windows(bench: Workbench, query: str, windows: Collection[int], *,
                    should_stop: Callable[[], bool] | None = None) -> Any:
    """Marlin's find for one query in these windows only (the library search's refine stage),
    each from its reused prefill. A whole-video answer already cached is used instead of the
    model; a partial answer is not cached (it would look whole to `find`)."""
    from marlin_desk.engine import pipeline
    from marlin_desk.engine.pipeline import QueryResult

    wanted = set(windows)
    hit = bench.cache.get_find(bench.key, query) if bench.cache is not None else None
    if hit is not None:
        return QueryResult(query, [s for s in hit.spans if s.window in wanted], 0.0,
                           [w for w in (hit.extra or {}).get("windows", [])
                            if w.get("window") in wanted])
    session = bench.ensure_session()
    return pipeline.find(session, [query], bench.settings.window, bench.settings.overlap,
                         should_stop=should_stop, concurrency=session.max_concurrency,
                         only=wanted)[0]
