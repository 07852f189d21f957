"""What the commands and the app do with a video: analyse and search it through the analysis
cache, loading the model only when the cache cannot answer.

This sits above engine/ and store/ (which may not import each other); the CLI and the GUI
worker both call it, so the two behave the same.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from marlin_desk.core.budget import TRAINING_BUDGET, VideoBudget
from marlin_desk.core.errors import BadInput
from marlin_desk.core.timeline import Analysis, WindowResult
from marlin_desk.core.windows import plan_windows
from marlin_desk.media.probe import VideoInfo, probe
from marlin_desk.store.cache import AnalysisCache
from marlin_desk.store.fingerprint import CacheKey, fingerprint

log = logging.getLogger(__name__)

PROMPT_VERSION = 1  # bump when the prompts or their parsing change what is cached


@dataclass
class JobSettings:
    """Everything that decides an answer, hence part of the cache key."""

    model: str
    device: str = "auto"
    window: float = 120.0
    overlap: float = 0.0
    revision: str | None = None
    budget: VideoBudget = TRAINING_BUDGET

    def cache_settings(self) -> dict[str, Any]:
        return {"window": self.window, "overlap": self.overlap, "budget": self.budget.to_dict(),
                "prompts": PROMPT_VERSION}


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
            from marlin_desk.engine.loader import load_model
            from marlin_desk.engine.session import VideoSession

            if self.engine is None:
                self.engine = load_model(self.settings.model, self.settings.device,
                                         self.settings.revision)
            self.session = VideoSession(self.engine, self.video, info=self.info,
                                        budget=self.settings.budget)
        return self.session


def model_identity(model: str, revision: str | None) -> tuple[str, str]:
    """(model id, revision) for the cache key. A local folder is identified by its path and a
    fingerprint of its weights, so replacing the weights invalidates its analyses."""
    folder = Path(model).expanduser()
    if folder.is_dir():
        weights = sorted(folder.glob("*.safetensors"))
        digest = fingerprint(str(weights[0]))[:16] if weights else "no-weights"
        return str(folder.resolve()), f"local:{digest}"
    return model, revision or "default"


def open_video(video: str, settings: JobSettings, *, use_cache: bool = True,
               engine: Any = None) -> Workbench:
    """Probe (clear errors before any model work) and compute the cache key."""
    from marlin_desk.engine.loader import resolve_device

    info = probe(video)
    try:
        plan_windows(info.duration, settings.window, settings.overlap,
                     max_window=settings.budget.max_window_seconds)
    except ValueError as exc:
        raise BadInput(str(exc)) from exc
    precision = engine.dtype if engine is not None else resolve_device(settings.device)[1]
    model_id, revision = model_identity(settings.model, settings.revision)
    key = CacheKey.for_file(video, model_id, revision, precision, settings.cache_settings())
    cache = AnalysisCache() if use_cache else None
    bench = Workbench(video=video, settings=settings, info=info, key=key, cache=cache,
                      engine=engine)
    if cache is not None and cache.recovered_from is not None:
        bench.notes.append(cache.recovery_reason or "the analysis cache was rebuilt")
    return bench


def analyze(bench: Workbench, *, on_window: Callable[[WindowResult], None] | None = None,
            on_progress: Callable[[Any], None] | None = None,
            should_stop: Callable[[], bool] | None = None) -> tuple[Analysis, bool]:
    """The video's analysis and whether it came whole from the cache. Finished windows are
    stored one by one, so an interrupted analysis resumes where it stopped."""
    from marlin_desk.engine import pipeline

    cache = bench.cache
    if cache is not None:
        cached = cache.get_analysis(bench.key)
        if cached is not None:
            return cached, True
    done = cache.windows_done(bench.key) if cache is not None else {}
    if done and on_window:
        for result in sorted(done.values(), key=lambda r: r.index):
            on_window(result)

    def keep(result: WindowResult) -> None:
        if cache is not None:
            cache.put_window(bench.key, bench.total_windows, bench.video, result)
        if on_window:
            on_window(result)

    session = bench.ensure_session()
    analysis = pipeline.analyze(session, bench.settings.window, bench.settings.overlap,
                                done=done, on_window=keep, on_progress=on_progress,
                                should_stop=should_stop)
    analysis.video = bench.video
    if cache is not None:
        cache.complete(bench.key, analysis)
    return analysis, False


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
                                    on_progress=on_progress, should_stop=should_stop):
            answers[result.query] = result
            if cache is not None:
                cache.put_find(bench.key, result.query, result.spans,
                               {"windows": result.windows})
    results = []
    for q in queries:
        r = answers[q]
        results.append(QueryResult(r.query, r.spans[:top] if top else r.spans, r.seconds,
                                   r.windows))
    return results


def cached_analysis(video: str) -> Analysis | None:
    """The most recent complete analysis of this file (found by content), with no model."""
    cache = AnalysisCache()
    for entry in cache.lookup(video):
        if entry.complete:
            analysis = cache.get_analysis(entry.key)
            if analysis is not None:
                return analysis
    return None


def cached_spans(video: str, query: str) -> list[Any] | None:
    """Spans found earlier for `query` in this file (most recent analysis settings first)."""
    cache = AnalysisCache()
    for entry in cache.lookup(video):
        hit = cache.get_find(entry.key, query)
        if hit is not None:
            return hit.spans
    return None
