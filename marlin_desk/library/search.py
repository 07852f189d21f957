"""The library search in two stages: the text index across every video, then Marlin in the
best windows only.

Stage one ("index"): the full-text index (store/search_index.py) ranks events and window
scenes of every library video by BM25; no model, milliseconds for hundreds of hours. Repeats
(the same event seen by two analyses of one file, an event cut in two by a window boundary)
and a window's scene hit beside a better event hit in it are folded into the best one.

Speech is in the same index (kind "speech": a transcript segment, its span narrowed to the
words that matched), so "when does she say launch date" finds the moment she says it. Marlin
sees pictures, not sound, so speech hits are never refined: they stay stage-one hits and rank
among the refined ones by how many of the query's words they hold.

Stage two ("model", `refine=K` or a model given): Marlin's own find runs in K windows only: the
windows of the best online candidates, in rank order (each from its reused prefill;
workflows.find_in_windows). Each gives one hit: the model's span and score, with the text of
the candidate that span overlaps; candidates of that window it does not touch stay stage-one
hits. Ordering: a refined hit that holds more of the
query's words stays ahead of one that holds fewer (the text decides what matches), and among
equals the model's score decides; the hits not refined follow in stage-one order. Every hit
says which stage produced it.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from marlin_desk.core.errors import BadInput, MarlinError, ModelUnavailable
from marlin_desk.core.timeline import Span, round_time
from marlin_desk.core.windows import Window, plan_windows
from marlin_desk.store.cache import AnalysisCache
from marlin_desk.store.library import LibraryStore
from marlin_desk.store.search_index import EVENT, SCENE, SPEECH, Candidate
from marlin_desk.workflows import JobSettings, Workbench, find_in_windows, open_video

log = logging.getLogger(__name__)

INDEX, MODEL = "index", "model"
DEFAULT_TOP = 10


@dataclass(frozen=True)
class LibraryHit:
    """One result: where in which video, the event text that matched, and the stage's score
    (stage "index": BM25, higher is better; stage "model": the model's mean digit
    log-probability, higher is better, as `find` reports it)."""

    path: str
    fingerprint: str
    start: float  # video time
    end: float
    text: str  # the matching event (or window scene, or spoken segment) text
    score: float
    stage: str  # INDEX or MODEL
    online: bool
    kind: str  # "event", "scene" or "speech" (what was said, from the transcript)
    index_score: float  # the stage-one BM25, kept when the model refined it
    words_matched: int = 0
    low_confidence: bool = False

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "fingerprint": self.fingerprint,
                "start": round_time(self.start), "end": round_time(self.end),
                "text": self.text, "score": round(self.score, 4), "stage": self.stage,
                "online": self.online, "kind": self.kind,
                "index_score": round(self.index_score, 4), "words_matched": self.words_matched,
                "low_confidence": self.low_confidence}


@dataclass
class SearchResult:
    query: str
    hits: list[LibraryHit]
    index_ms: float  # stage one, milliseconds
    refine_s: float = 0.0  # stage two, seconds (model load included)
    refined_windows: int = 0
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"query": self.query, "index_ms": round(self.index_ms, 2),
                "refine_seconds": round(self.refine_s, 3),
                "refined_windows": self.refined_windows, "notes": self.notes,
                "results": [h.to_json() for h in self.hits]}


def _overlap(a0: float, a1: float, b0: float, b1: float) -> float:
    return max(0.0, min(a1, b1) - max(a0, b0))


def _fold(candidates: list[Candidate]) -> list[Candidate]:
    """Best first in, repeats out: the same text over an overlapping span of the same video,
    and a scene hit whose window holds an event hit already kept."""
    kept: list[Candidate] = []
    for c in candidates:
        same_video = [k for k in kept if k.fingerprint == c.fingerprint]
        if any(k.text.casefold() == c.text.casefold() and
               _overlap(k.start, k.end, c.start, c.end) > 0 for k in same_video):
            continue
        if c.kind == SCENE and any(k.kind == EVENT and c.start <= k.start < c.end
                                   for k in same_video):
            continue
        kept.append(c)
    return kept


def _hit(c: Candidate, words: int = 0) -> LibraryHit:
    return LibraryHit(c.path, c.fingerprint, c.start, c.end, c.text, c.score, INDEX, c.online,
                      c.kind, c.score, words)


def stage_one(store: LibraryStore, query: str, limit: int) -> list[Candidate]:
    """The best `limit` distinct candidates for `query` across the library (no model)."""
    if limit <= 0:
        return []
    wanted = limit * 4 + 20  # room for the repeats folded away
    return _fold(store.search(query, wanted))[:limit]


def _best_window(plan: list[Window], c: Candidate) -> Window | None:
    """The refine plan's window that holds most of the candidate's span (its middle, for a
    moment shorter than a frame)."""
    def share(w: Window) -> float:
        if c.end > c.start:
            return _overlap(w.start, w.end, c.start, c.end)
        return 1.0 if w.start <= c.start < w.end else 0.0
    best = max(plan, key=share, default=None)
    return best if best is not None and share(best) > 0 else None


def _answer_for(spans: list[Span], window: Window) -> Span | None:
    inside = [s for s in spans if _overlap(s.start, s.end, window.start, window.end) > 0
              or s.window == window.index]
    return max(inside, key=lambda s: (s.window == window.index,
                                      _overlap(s.start, s.end, window.start, window.end)),
               default=None)


def search_library(query: str, *, top: int = DEFAULT_TOP, refine: int | None = None,
                   settings: JobSettings | None = None, engine: Any = None,
                   cache: AnalysisCache | None = None,
                   should_stop: Callable[[], bool] | None = None,
                   on_note: Callable[[str], None] | None = None) -> SearchResult:
    """Search every library video for `query`: stage one always; stage two in the best
    `refine` windows when refine > 0, or (refine None) in the best `top` windows when a
    model is given (`settings` names it; `engine`: one already loaded, as the app keeps).
    Any text is a valid query (none of it is FTS syntax); a query without a word finds
    nothing.

    Returns at most `top` hits. Raises ModelUnavailable when stage two cannot load its model;
    a video that cannot be opened for stage two keeps its stage-one hits, with a note.
    """
    if top < 1:
        raise BadInput(f"--top must be 1 or more, got {top}")
    if refine is not None and refine < 0:
        raise BadInput(f"--refine must be 0 or more, got {refine}")
    k = (top if settings is not None else 0) if refine is None else refine
    if k and settings is None:
        raise BadInput("the refine stage needs a model: pass its settings")
    store = LibraryStore(cache if cache is not None else AnalysisCache())
    started = time.perf_counter()
    candidates = stage_one(store, query, max(top, 4 * k))  # K windows may need more
    result = SearchResult(query, [], (time.perf_counter() - started) * 1000)
    if not k or not candidates:
        result.hits = [_hit(c) for c in candidates[:top]]
        return result
    assert settings is not None
    started = time.perf_counter()
    refined, used = _stage_two(store, query, candidates, k, settings, engine, should_stop,
                               on_note, result)
    result.refine_s = time.perf_counter() - started
    said = [c for c in candidates if c.kind == SPEECH]
    words = store.coverage(query, [c.row for c in said]) if said else {}
    spoken = [_hit(c, words.get(c.row, 0)) for c in said]
    refined.sort(key=lambda h: (-h.words_matched, -h.score))
    ranked = sorted(refined + spoken, key=lambda h: -h.words_matched)  # stable: refined first
    rest = [_hit(c) for c in candidates if c.row not in used and c.kind != SPEECH]
    result.hits = (ranked + rest)[:top]
    return result


@dataclass
class _Video:
    """One video of the refine stage: its workbench, its refine plan, and the candidates picked
    in each of its windows (rank order)."""

    bench: Workbench
    plan: list[Window]
    picks: dict[int, list[Candidate]] = field(default_factory=dict)


def _open(c: Candidate, settings: JobSettings, cache: AnalysisCache,
          notes: list[str]) -> _Video | None:
    try:
        bench = open_video(c.path, settings, cache=cache)
    except ModelUnavailable:
        raise
    except MarlinError as exc:
        notes.append(f"not refined: {c.path}: {exc}")
        return None
    if bench.key.fingerprint != c.fingerprint:
        notes.append(f"not refined: {c.path} changed since it was scanned (library scan)")
        return None
    plan = plan_windows(bench.info.duration, bench.settings.window, bench.settings.overlap,
                        max_window=bench.settings.budget.max_window_seconds)
    return _Video(bench, plan)


def _pick(candidates: list[Candidate], k: int, settings: JobSettings, cache: AnalysisCache,
          notes: list[str]) -> dict[str, _Video]:
    """The best K windows, in the candidates' rank order; later candidates that fall in a
    window already picked join it."""
    videos: dict[str, _Video | None] = {}
    taken = 0
    for c in candidates:
        if not c.online:
            note = f"offline: {c.path} (its index hits are shown, not refined)"
            if note not in notes:
                notes.append(note)
            continue
        if c.fingerprint not in videos:
            if taken >= k:
                continue
            videos[c.fingerprint] = _open(c, settings, cache, notes)
        video = videos[c.fingerprint]
        window = _best_window(video.plan, c) if video is not None else None
        if video is None or window is None or (window.index not in video.picks and taken >= k):
            continue
        taken += window.index not in video.picks
        video.picks.setdefault(window.index, []).append(c)
    return {fp: v for fp, v in videos.items() if v is not None and v.picks}


def _stage_two(store: LibraryStore, query: str, candidates: list[Candidate], k: int,
               settings: JobSettings, engine: Any, should_stop: Callable[[], bool] | None,
               on_note: Callable[[str], None] | None, result: SearchResult,
               ) -> tuple[list[LibraryHit], set[int]]:
    """Marlin's find in the best K windows: one hit per window, carrying the text of the
    candidate its span overlaps (the best-ranked one when none does). Returns the hits and
    the candidate rows they stand for (candidates in a refined window that the model's span
    does not touch stay stage-one hits)."""
    words = store.coverage(query, [c.row for c in candidates])
    videos = _pick([c for c in candidates if c.kind != SPEECH], k, settings, store.cache,
                   result.notes)
    hits: list[LibraryHit] = []
    used: set[int] = set()
    for video in videos.values():
        bench = video.bench
        if on_note:
            on_note(f"refining {len(video.picks)} window(s) of {bench.video}")
        bench.engine = bench.engine or engine  # one model for every video
        try:
            answer = find_in_windows(bench, query, set(video.picks), should_stop=should_stop)
        finally:
            engine = bench.engine
            bench.close()
        result.refined_windows += len(video.picks)
        for idx, picked in video.picks.items():
            window = next(w for w in video.plan if w.index == idx)
            span = _answer_for(answer.spans, window)
            if span is None or span.score is None:
                continue
            touching = [c for c in picked if _overlap(c.start, c.end, span.start, span.end) > 0]
            c = (touching or picked)[0]
            used.update(x.row for x in touching or [c])
            hits.append(LibraryHit(c.path, c.fingerprint, span.start, span.end, c.text,
                                   span.score, MODEL, c.online, c.kind, c.score,
                                   words.get(c.row, 0), span.low_confidence))
    return hits, used
