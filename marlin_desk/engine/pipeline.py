"""Whole-video jobs on one session: caption every window, and find queries in every window.

Results stream out through callbacks window by window, so a timeline can fill while the work goes
on; `should_stop` is polled between windows and between generated tokens.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from marlin_desk.core.errors import Cancelled
from marlin_desk.core.parsing import parse_caption, parse_find
from marlin_desk.core.prompts import (
    CAPTION_MAX_NEW_TOKENS,
    CAPTION_PROMPT,
    FIND_MAX_NEW_TOKENS,
    find_prompt,
)
from marlin_desk.core.timeline import Analysis, Span, WindowResult
from marlin_desk.core.windows import (
    Window,
    merge_events,
    merge_spans,
    plan_windows,
    rank_spans,
    shift_events,
    shift_span,
    summarize_scenes,
)
from marlin_desk.engine.session import OnNote, ShouldStop, VideoSession

# A span whose digit tokens average below this log-probability (about 1 chance in 3 per digit)
# is flagged: the model always answers with a span, even for an absent event.
LOW_CONFIDENCE_LOGPROB = -1.1


@dataclass(frozen=True)
class Progress:
    """What a long job reports: windows done, tokens generated, and an estimate of what is left."""

    done: int
    total: int
    tokens: int
    elapsed: float
    message: str = ""

    @property
    def eta(self) -> float | None:
        if self.done == 0:
            return None
        return self.elapsed / self.done * (self.total - self.done)

    def to_json(self) -> dict[str, Any]:
        return {"done": self.done, "total": self.total, "tokens": self.tokens,
                "elapsed": round(self.elapsed, 2),
                "eta": None if self.eta is None else round(self.eta, 1), "message": self.message}


@dataclass
class QueryResult:
    query: str
    spans: list[Span]  # video time, merged and ranked
    seconds: float
    windows: list[dict[str, Any]] = field(default_factory=list)  # per-window raw answers

    def to_json(self) -> dict[str, Any]:
        return {"query": self.query, "seconds": round(self.seconds, 3),
                "spans": [s.to_json() for s in self.spans], "windows": self.windows}


def windows_for(session: VideoSession, window: float = 120.0,
                overlap: float = 0.0) -> list[Window]:
    # the opening budget: an out-of-memory retry lowers the frames, not the window plan
    return plan_windows(session.info.duration, window, overlap,
                        max_window=session.original_budget.max_window_seconds)


def caption_window(session: VideoSession, window: Window,
                   should_stop: ShouldStop | None = None,
                   max_new_tokens: int = CAPTION_MAX_NEW_TOKENS,
                   on_note: OnNote | None = None) -> WindowResult:
    """Caption one window and shift its events to video time. Out of GPU memory, the window
    is retried with a smaller frame budget (`on_note` hears of it; WindowResult.frames and
    grid show what was used)."""
    answer = session.ask_retrying(window, CAPTION_PROMPT, max_new_tokens, should_stop, on_note)
    state = session.prefill(window)
    parsed = parse_caption(answer.text, clip_duration=window.duration)
    return WindowResult(
        index=window.index, start=window.start, end=window.end, raw=answer.text,
        format_ok=parsed.format_ok, scene=parsed.scene,
        events=shift_events(parsed.events, window.start),
        frames=len(state.frame_times), frame_times=list(state.frame_times),
        grid=state.prefix.grid, video_tokens=state.prefix.video_tokens,
        prompt_tokens=answer.prompt_tokens, seconds=state.seconds + answer.seconds,
        new_tokens=answer.new_tokens,
    )


def analyze(session: VideoSession, window: float = 120.0, overlap: float = 0.0, *,
            done: dict[int, WindowResult] | None = None,
            on_window: Callable[[WindowResult], None] | None = None,
            on_progress: Callable[[Progress], None] | None = None,
            should_stop: ShouldStop | None = None,
            max_new_tokens: int = CAPTION_MAX_NEW_TOKENS) -> Analysis:
    """Caption every window (skipping those in `done`, e.g. from the cache) and merge."""
    plan = windows_for(session, window, overlap)
    results: dict[int, WindowResult] = dict(done or {})
    started, tokens = time.perf_counter(), 0

    def note(message: str) -> None:
        if on_progress:
            on_progress(Progress(len(results), len(plan), tokens,
                                 time.perf_counter() - started, message))

    for w in plan:
        if w.index in results:
            continue
        if should_stop and should_stop():
            raise Cancelled("analysis cancelled")
        result = caption_window(session, w, should_stop, max_new_tokens, on_note=note)
        results[w.index] = result
        tokens += result.new_tokens
        if on_window:
            on_window(result)
        if on_progress:
            on_progress(Progress(len(results), len(plan), tokens, time.perf_counter() - started,
                                 f"window {w.index + 1} of {len(plan)}"))
    ordered = [results[w.index] for w in plan]
    events = merge_events([e for r in ordered for e in r.events])
    return Analysis(duration=session.info.duration, model=session.engine.model_id,
                    scene=summarize_scenes([r.scene for r in ordered]), events=events,
                    windows=ordered, video=session.video)


def find(session: VideoSession, queries: list[str], window: float = 120.0, overlap: float = 0.0,
         *, top: int | None = None, on_progress: Callable[[Progress], None] | None = None,
         should_stop: ShouldStop | None = None) -> list[QueryResult]:
    """Run every query in every window from the window's reused prefill; rank by the model's own
    confidence. Windows are the outer loop so that each prefill is computed once for all
    queries even when not every window fits in memory."""
    plan = windows_for(session, window, overlap)
    per_query: dict[str, list[Span]] = {q: [] for q in queries}
    raw: dict[str, list[dict[str, Any]]] = {q: [] for q in queries}
    seconds: dict[str, float] = dict.fromkeys(queries, 0.0)
    started, tokens, steps = time.perf_counter(), 0, len(plan) * len(queries)
    for w in plan:
        for q in queries:
            if should_stop and should_stop():
                raise Cancelled("search cancelled")
            done_before = w.index * len(queries) + queries.index(q)

            def note(message: str, done: int = done_before, used: int = tokens) -> None:
                if on_progress:
                    on_progress(Progress(done, steps, used, time.perf_counter() - started,
                                         message))

            answer = session.ask_retrying(w, find_prompt(q), FIND_MAX_NEW_TOKENS, should_stop,
                                          on_note=note)
            seconds[q] += answer.seconds
            tokens += answer.new_tokens
            parsed = parse_find(answer.text, clip_duration=w.duration)
            score = answer.number_logprob if answer.number_logprob is not None \
                else answer.mean_logprob
            raw[q].append({"window": w.index, "raw": answer.text, "format_ok": parsed.format_ok,
                           "score": round(score, 4)})
            if parsed.span is not None:
                span = shift_span(parsed.span, w.start)
                per_query[q].append(Span(span.start, span.end, score, w.index,
                                         score < LOW_CONFIDENCE_LOGPROB))
            if on_progress:
                done = w.index * len(queries) + queries.index(q) + 1
                on_progress(Progress(done, steps, tokens, time.perf_counter() - started,
                                     f"window {w.index + 1} of {len(plan)}: {q}"))
    return [QueryResult(q, rank_spans(merge_spans(per_query[q]), top), seconds[q], raw[q])
            for q in queries]
