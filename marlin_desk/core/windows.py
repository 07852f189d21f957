"""Window planning for long videos, and putting the windows' answers back together.

Beyond 120 s the model's 240-frame cap lowers the frame rate, so a long video is analysed in
windows of at most 120 s. Each window answers in its own time; here those answers are shifted to
video time, events cut by a window boundary (or seen twice by overlapping windows) are merged,
find spans are merged and ranked, and the windows' scene paragraphs become one short summary.

Decisions:
- The last window is never a sliver: when it would bring less than ``MIN_WINDOW_SECONDS`` of
  footage the previous window has not seen (or, with no overlap, be shorter than that), it is
  started earlier so that it is a full window ending at the video's end. Below 2 s (4 frames at
  2 fps, the least the model was trained on) the model cannot place events in time, and a full
  window gives those last seconds the context the model needs; it costs at most one window's
  extra compute per video. A larger fraction-of-a-window rule was rejected: a 30 s tail is a
  fine clip for the model, and re-reading 90 s of footage for it would double a short video's
  cost.
- Similarity of two descriptions is the Jaccard overlap of their content words (lowercased,
  punctuation stripped, filler words dropped, plurals and -ing/-ed folded). Character ratios
  (difflib) score unrelated sentences that share "a", "the" and spaces near 0.5 and punish a
  reworded order; word overlap does neither. No lexical measure can tell "opens the door" from
  "closes the door", which is why events must also be close in time to merge.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from marlin_desk.core.timeline import Event, Span, round_time

MIN_WINDOW_SECONDS = 2.0  # 4 frames at 2 fps: the shortest clip the model was trained on
MAX_WINDOWS = 100_000  # a plan this long means a mistaken overlap, not a real video
SCENE_DUPLICATE_SIMILARITY = 0.7  # scene sentences this alike say the same thing
_EPS = 1e-6  # seconds: float noise, far below the model's 0.1 s resolution


@dataclass(frozen=True)
class Window:
    """One analysis window, in video time; ``index`` is its position in the plan."""

    index: int
    start: float
    end: float

    @property
    def duration(self) -> float:
        return self.end - self.start

    def to_json(self) -> dict[str, Any]:
        return {"index": self.index, "start": round_time(self.start),
                "end": round_time(self.end)}


def _finite(name: str, value: float) -> float:
    if not isinstance(value, int | float) or not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number of seconds, got {value!r}")
    return float(value)


def plan_windows(duration: float, window: float = 120.0, overlap: float = 0.0, *,
                 max_window: float = 120.0) -> list[Window]:
    """Windows that cover [0, duration] completely, ``window - overlap`` apart, no sliver last.

    ``max_window`` guards the model's budget: a longer window silently lowers its frame rate.
    """
    duration = _finite("the duration", duration)
    window = _finite("the window", window)
    overlap = _finite("the overlap", overlap)
    max_window = _finite("max_window", max_window)
    if duration <= 0:
        raise ValueError(f"the video's duration must be positive, got {duration:g} s")
    if window <= 0:
        raise ValueError(f"the window must be positive, got {window:g} s")
    if window > max_window + _EPS:
        raise ValueError(
            f"a {window:g} s window is longer than the {max_window:g} s maximum (beyond it the "
            "model's 240-frame cap lowers the frame rate); pass max_window to allow it")
    if not 0 <= overlap < window:
        raise ValueError(
            f"the overlap must be at least 0 and shorter than the window ({window:g} s), "
            f"got {overlap:g} s")
    if duration <= window + _EPS or duration < MIN_WINDOW_SECONDS:
        return [Window(0, 0.0, duration)]

    step = window - overlap
    # Smallest n with (n - 1) * step + window >= duration, forgiving float noise.
    n = math.ceil((duration - window) / step) + 1
    while n > 2 and (n - 2) * step + window >= duration - _EPS:
        n -= 1
    if n > MAX_WINDOWS:
        raise ValueError(f"{n} windows of {window:g} s with {overlap:g} s overlap: "
                         "the overlap is too close to the window")
    windows = [Window(i, i * step, i * step + window) for i in range(n - 1)]
    last_start = (n - 1) * step
    if duration - last_start < min(window, overlap + MIN_WINDOW_SECONDS):
        last_start = duration - window  # a full window ending at the end, not a sliver
    windows.append(Window(n - 1, last_start, duration))
    return windows


def shift_events(events: Iterable[Event], offset: float) -> list[Event]:
    """Window-relative events to video time (``offset`` is the window's start)."""
    return [e.shifted(offset) for e in events]


def shift_span(span: Span, offset: float) -> Span:
    """A window-relative span to video time (``offset`` is the window's start)."""
    return span.shifted(offset)


# --------------------------------------------------------------------------------------------
# text similarity

_WORD = re.compile(r"[^\W_]+")
# Filler words only: direction words (up, down, out, off) are kept, they tell actions apart.
_STOPWORDS = frozenset({
    "a", "an", "the", "and", "or", "but", "of", "to", "in", "into", "on", "onto", "at", "by",
    "for", "from", "with", "as", "while", "then", "there", "here", "is", "are", "was", "were",
    "be", "been", "being", "am", "it", "its", "this", "that", "these", "those", "he", "she",
    "they", "them", "his", "her", "hers", "their", "theirs", "him", "some",
})


def normalize_text(text: str) -> str:
    """Lowercase words without punctuation, single-spaced: the form descriptions compare in."""
    return " ".join(_WORD.findall(text.casefold()))


def _fold(word: str) -> str:
    """A crude stem, enough for "opens"/"opening"/"opened" to meet; never shorter than 3."""
    for suffix in ("ing", "ed"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            if len(word) >= 4 and word[-1] == word[-2] and word[-1] not in "aeiousl":
                word = word[:-1]  # running -> run, stopped -> stop
            break
    else:
        if word.endswith("ies") and len(word) > 4:
            word = word[:-3] + "y"
        elif word.endswith(("ches", "shes", "sses", "xes", "zes")) and len(word) > 4:
            word = word[:-2]
        elif word.endswith("s") and not word.endswith(("ss", "us", "is")) and len(word) > 3:
            word = word[:-1]
    if word.endswith("e") and len(word) > 3:
        word = word[:-1]  # close/closes/closing/closed all become "clos"
    return word


def content_words(text: str) -> frozenset[str]:
    """The folded content words of a description (what similarity compares)."""
    return frozenset(_fold(w) for w in normalize_text(text).split() if w not in _STOPWORDS)


def text_similarity(a: str, b: str) -> float:
    """Jaccard overlap of content words, 0..1 (1 for the same words in any order)."""
    return _similarity(a, content_words(a), b, content_words(b))


def _similarity(a: str, wa: frozenset[str], b: str, wb: frozenset[str]) -> float:
    """text_similarity with the word sets already computed (merging compares many pairs)."""
    if not wa or not wb:  # only filler words: fall back to exact (normalised) equality
        return 1.0 if normalize_text(a) == normalize_text(b) else 0.0
    return len(wa & wb) / len(wa | wb)


def _informative(description: str, index: int) -> tuple[int, int, int]:
    """Sort key for the description a merged event keeps: more content, then longer, then first."""
    return (len(content_words(description)), len(description.strip()), -index)


# --------------------------------------------------------------------------------------------
# merging events

@dataclass
class _Group:
    start: float
    end: float
    members: list[tuple[int, str, frozenset[str]]]  # (first-seen index, description, words)

    def similarity(self, description: str, words: frozenset[str]) -> float:
        return max(_similarity(description, words, other, other_words)
                   for _, other, other_words in self.members)

    def event(self) -> Event:
        index, description, _ = max(self.members, key=lambda m: _informative(m[1], m[0]))
        return Event(float(self.start), float(self.end), description)


def _merge_pass(events: list[Event], min_similarity: float, max_gap: float) -> list[Event]:
    """One sweep in start order; each event joins the most similar nearby group, if any."""
    ordered = sorted(enumerate(events), key=lambda ie: (min(ie[1].start, ie[1].end), ie[0]))
    active: list[_Group] = []
    done: list[_Group] = []
    for index, e in ordered:
        start, end = min(e.start, e.end), max(e.start, e.end)
        still = []
        for g in active:
            (still if g.end + max_gap >= start - _EPS else done).append(g)
        active = still
        words = content_words(e.description)
        best: _Group | None = None
        best_sim = -1.0
        for g in active:
            sim = g.similarity(e.description, words)
            if sim >= min_similarity and sim > best_sim:
                best, best_sim = g, sim
        if best is None:
            active.append(_Group(start, end, [(index, e.description, words)]))
        else:
            best.start, best.end = min(best.start, start), max(best.end, end)
            best.members.append((index, e.description, words))
    done.extend(active)
    merged = [g.event() for g in done]
    merged.sort(key=lambda ev: (ev.start, ev.end, ev.description))
    return merged


def merge_events(events: Sequence[Event], *, min_similarity: float = 0.5,
                 max_gap: float = 1.0) -> list[Event]:
    """Merge the same event seen by several windows (or cut by a boundary) into one.

    Two events are the same when their ranges overlap or lie within ``max_gap`` seconds AND
    their descriptions have ``text_similarity >= min_similarity``. The merged event spans the
    union of the ranges and keeps the most informative description. Repeated to a fixed point,
    so the result merges no further (an event that joins two groups brings them together).
    """
    if not 0.0 <= min_similarity <= 1.0:
        raise ValueError(f"min_similarity must be between 0 and 1, got {min_similarity!r}")
    if not (math.isfinite(max_gap) and max_gap >= 0):
        raise ValueError(f"max_gap must be a non-negative number of seconds, got {max_gap!r}")
    current = list(events)
    while True:
        merged = _merge_pass(current, min_similarity, max_gap)
        if len(merged) == len(current):
            return merged
        current = merged


# --------------------------------------------------------------------------------------------
# spans

def _better(a: Span, b: Span) -> bool:
    """Whether a's score beats b's (a number beats None; ties keep b, the earlier one)."""
    if a.score is None:
        return False
    return b.score is None or a.score > b.score


def merge_spans(spans: Iterable[Span], *, max_gap: float = 0.0) -> list[Span]:
    """Overlapping spans (video time) become their union, keeping the best-scored one's facts.

    Spans that only touch (or lie within ``max_gap``) merge too: two windows answering about the
    same moment split at their boundary.
    """
    if not (math.isfinite(max_gap) and max_gap >= 0):
        raise ValueError(f"max_gap must be a non-negative number of seconds, got {max_gap!r}")
    ordered = sorted((Span(min(s.start, s.end), max(s.start, s.end), s.score, s.window,
                           s.low_confidence) for s in spans), key=lambda s: (s.start, s.end))
    out: list[Span] = []
    for s in ordered:
        if out and s.start <= out[-1].end + max_gap + _EPS:
            cur = out[-1]
            best = s if _better(s, cur) else cur
            out[-1] = Span(cur.start, max(cur.end, s.end), best.score, best.window,
                           best.low_confidence)
        else:
            out.append(s)
    return out


def drop_guesses_beside_sure_spans(spans: Iterable[Span]) -> list[Span]:
    """Low-confidence spans that overlap or touch a confident one, dropped (before merging).

    Marlin answers a span in every window, even one without the event (docs/model.md): beside
    the real moment, the next window's guess would otherwise merge into it and stretch it.
    Guesses elsewhere stay (ranked last), so a query nothing matches still shows the best
    candidates.
    """
    spans = list(spans)
    sure = [s for s in spans if not s.low_confidence]

    def beside_sure(s: Span) -> bool:
        lo, hi = min(s.start, s.end), max(s.start, s.end)
        return any(lo <= max(t.start, t.end) + _EPS and min(t.start, t.end) <= hi + _EPS
                   for t in sure)

    return [s for s in spans if not (s.low_confidence and beside_sure(s))]


# Marlin sees a frame every 0.5 s and two frames per time step, so the last moment it can
# point at in a window is up to about a second before the window's end.
BOUNDARY_SLACK = 1.0


def close_boundary_gaps(spans: Iterable[Span], windows: Sequence[Window],
                        slack: float = BOUNDARY_SLACK) -> list[Span]:
    """Sure spans that reach a window boundary from both sides (within ``slack``) are stretched
    to meet at it, so that merge_spans joins a moment the boundary cut in two."""
    spans = list(spans)
    by_window = {w.index: w for w in windows}
    sure: dict[int, list[Span]] = {}
    for s in spans:
        if not s.low_confidence and s.window in by_window:
            sure.setdefault(s.window, []).append(s)

    def reaches(index: int, side: str) -> bool:
        """Whether a sure span of window `index` comes within slack of its start or end."""
        w = by_window.get(index)
        return w is not None and any(
            (s.start - w.start if side == "start" else w.end - s.end) <= slack
            for s in sure.get(index, []))

    out = []
    for s in spans:
        start, end = s.start, s.end
        w = by_window.get(s.window) if s.window is not None else None
        if w is not None and not s.low_confidence:
            if w.end - end <= slack and reaches(w.index + 1, "start"):
                end = max(end, by_window[w.index + 1].start)
            if start - w.start <= slack and reaches(w.index - 1, "end"):
                start = min(start, by_window[w.index - 1].end)
        out.append(Span(start, end, s.score, s.window, s.low_confidence))
    return out


def rank_spans(spans: Iterable[Span], top: int | None = None) -> list[Span]:
    """Best score first (unscored last, then by start); the first ``top`` when given."""
    if top is not None and top < 0:
        raise ValueError(f"top must be 0 or more, got {top}")
    ranked = sorted(spans, key=lambda s: (s.score is None,
                                          -s.score if s.score is not None else 0.0,
                                          s.start, s.end))
    return ranked if top is None else ranked[:top]


# --------------------------------------------------------------------------------------------
# scene summary

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[\"'(\[]?[A-Z0-9])")


def _first_sentence(text: str) -> str:
    text = " ".join(text.split())
    if not text:
        return ""
    sentence = _SENTENCE_END.split(text, maxsplit=1)[0].strip()
    return sentence if sentence[-1] in ".!?" else sentence + "."


def summarize_scenes(scenes: Iterable[str], max_chars: int = 400) -> str:
    """One short paragraph from the windows' scene paragraphs, without another model call.

    The first sentence of each scene says where we are; windows of one video often repeat it, so
    near-duplicates are dropped. Cut at a sentence boundary; a first sentence that alone is too
    long is cut at a word and ends with an ellipsis.
    """
    if max_chars <= 0:
        raise ValueError(f"max_chars must be positive, got {max_chars}")
    kept: list[str] = []
    for scene in scenes:
        sentence = _first_sentence(scene)
        if sentence and all(text_similarity(sentence, k) < SCENE_DUPLICATE_SIMILARITY
                            for k in kept):
            kept.append(sentence)
    out = ""
    for sentence in kept:
        candidate = f"{out} {sentence}" if out else sentence
        if len(candidate) > max_chars:
            break
        out = candidate
    if not out and kept:
        cut = kept[0][: max_chars - 1]
        if " " in cut and len(kept[0]) > max_chars - 1:
            cut = cut.rsplit(" ", 1)[0]
        out = cut.rstrip(" ,;:") + "\u2026"
    return out
