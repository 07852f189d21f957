"""Whole-video jobs on one session: caption every window, and find queries in every window.

Results stream out through callbacks window by window, so a timeline can fill while the work goes
on; `should_stop` is polled between windows and between generated tokens.

A session is the local `VideoSession` or a server's `RemoteSession` (same methods). A server
answers several windows at once, so jobs run `concurrency` at a time when the session allows
it; callbacks are always called from the caller's thread.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from typing import Any, TypeVar

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
    close_boundary_gaps,
    drop_guesses_beside_sure_spans,
    merge_events,
    merge_spans,
    plan_windows,
    rank_spans,
    shift_events,
    shift_span,
    summarize_scenes,
)
from marlin_desk.engine.session import OnNote, ShouldStop, VideoSession

T = TypeVar("T")

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
    facts = session.facts(window)
    parsed = parse_caption(answer.text, clip_duration=window.duration)
    return WindowResult(
        index=window.index, start=window.start, end=window.end, raw=answer.text,
        format_ok=parsed.format_ok, scene=parsed.scene,
        events=shift_events(parsed.events, window.start),
        frames=len(facts.frame_times), frame_times=list(facts.frame_times),
        grid=facts.grid, video_tokens=facts.video_tokens,
        prompt_tokens=answer.prompt_tokens, seconds=facts.seconds + answer.seconds,
        new_tokens=answer.new_tokens,
    )


def analyze(session: VideoSession, window: float = 120.0, overlap: float = 0.0, *,
            done: dict[int, WindowResult] | None = None,
            on_window: Callable[[WindowResult], None] | None = None,
            on_progress: Callable[[Progress], None] | None = None,
            should_stop: ShouldStop | None = None,
            max_new_tokens: int = CAPTION_MAX_NEW_TOKENS, concurrency: int = 1) -> Analysis:
    """Caption every window (skipping those in `done`, e.g. from the cache) and merge."""
    plan = windows_for(session, window, overlap)
    results: dict[int, WindowResult] = dict(done or {})
    started, tokens = time.perf_counter(), 0

    def note(message: str) -> None:
        if on_progress:
            on_progress(Progress(len(results), len(plan), tokens,
                                 time.perf_counter() - started, message))

    todo = [w for w in plan if w.index not in results]
    jobs = [lambda w=w: caption_window(session, w, should_stop, max_new_tokens, on_note=note)
            for w in todo]
    for _, result in run_jobs(jobs, _workers(session, concurrency), should_stop,
                              "analysis cancelled"):
        results[result.index] = result
        tokens += result.new_tokens
        if on_window:
            on_window(result)
        if on_progress:
            on_progress(Progress(len(results), len(plan), tokens, time.perf_counter() - started,
                                 f"window {result.index + 1} of {len(plan)}"))
    ordered = [results[w.index] for w in plan]
    events = merge_events([e for r in ordered for e in r.events])
    return Analysis(duration=session.info.duration, model=session.engine.model_id,
                    scene=summarize_scenes([r.scene for r in ordered]), events=events,
                    windows=ordered, video=session.video)


def find(session: VideoSession, queries: list[str], window: float = 120.0, overlap: float = 0.0,
         *, top: int | None = None, on_progress: Callable[[Progress], None] | None = None,
         should_stop: ShouldStop | None = None, concurrency: int = 1,
         only: Collection[int] | None = None) -> list[QueryResult]:
    """Run every query in every window from the window's reused prefill; rank by the model's own
    confidence. Windows are the outer loop so that each prefill is computed once for all
    queries even when not every window fits in memory. `only`: these window indices alone
    (the library search's refine stage)."""
    plan = windows_for(session, window, overlap)
    if only is not None:
        plan = [w for w in plan if w.index in only]
    per_query: dict[str, list[Span]] = {q: [] for q in queries}
    raw: dict[str, list[dict[str, Any]]] = {q: [] for q in queries}
    seconds: dict[str, float] = dict.fromkeys(queries, 0.0)
    started, tokens, steps, finished = time.perf_counter(), 0, len(plan) * len(queries), 0

    def note(message: str) -> None:
        if on_progress:
            on_progress(Progress(finished, steps, tokens, time.perf_counter() - started, message))

    pairs = [(w, q) for w in plan for q in queries]
    jobs = [lambda w=w, q=q: session.ask_retrying(w, find_prompt(q), FIND_MAX_NEW_TOKENS,
                                                  should_stop, on_note=note)
            for w, q in pairs]
    answers: dict[int, Any] = {}
    for i, answer in run_jobs(jobs, _workers(session, concurrency), should_stop,
                              "search cancelled"):
        answers[i] = answer
        finished += 1
        tokens += answer.new_tokens
        w, q = pairs[i]
        note(f"window {w.index + 1} of {len(plan)}: {q}")
    for i, (w, q) in enumerate(pairs):  # in plan order, whatever order the answers came in
        answer = answers[i]
        seconds[q] += answer.seconds
        parsed = parse_find(answer.text, clip_duration=w.duration)
        score = answer.score
        raw[q].append({"window": w.index, "raw": answer.text, "format_ok": parsed.format_ok,
                       "score": round(score, 4)})
        if parsed.span is not None:
            span = shift_span(parsed.span, w.start)
            per_query[q].append(Span(span.start, span.end, score, w.index,
                                     score < LOW_CONFIDENCE_LOGPROB))
    return [QueryResult(q, rank_spans(merge_spans(drop_guesses_beside_sure_spans(
        close_boundary_gaps(per_query[q], plan))), top), seconds[q], raw[q]) for q in queries]


def _workers(session: Any, concurrency: int) -> int:
    """A local model answers one window at a time; a server several."""
    return max(1, min(concurrency, getattr(session, "max_concurrency", 1)))


def run_jobs(jobs: list[Callable[[], T]], workers: int, should_stop: ShouldStop | None,
             cancelled: str) -> Iterator[tuple[int, T]]:
    """(index, result) for each job as it finishes, at most `workers` running at once. A failure
    or a stop cancels the jobs not yet started and is raised here, in the caller's thread;
    jobs already running are not waited for (a server request cannot be taken back)."""
    if workers <= 1:
        for i, job in enumerate(jobs):
            if should_stop and should_stop():
                raise Cancelled(cancelled)
            yield i, job()
        return
    pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="marlin-window")
    pending: dict[Future[T], int] = {}
    try:
        waiting = iter(enumerate(jobs))
        for i, job in waiting:
            pending[pool.submit(job)] = i
            if len(pending) >= workers:
                break
        while pending:
            finished, _ = wait(list(pending), timeout=0.2, return_when=FIRST_COMPLETED)
            if should_stop and should_stop():
                raise Cancelled(cancelled)
            for future in finished:
                i = pending.pop(future)
                yield i, future.result()
                nxt = next(waiting, None)
                if nxt is not None:
                    pending[pool.submit(nxt[1])] = nxt[0]
    finally:
        pool.shutdown(wait=False, cancel_futures=True)
