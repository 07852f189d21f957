"""What the timeline draws, indexed for painting thousands of items per frame.

Items are kept sorted by start with the longest duration remembered, so the items visible in
[t0, t1] are found by bisection (start >= t0 - longest) instead of a scan of every item.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass
from typing import Any

from marlin_desk.core.project import Clip
from marlin_desk.core.timeline import Event, Span


@dataclass(frozen=True)
class Item:
    """One drawable range. `ref` is the index (events, results) or id (clips) in the document."""

    start: float
    end: float
    label: str
    ref: Any
    weight: float = 1.0  # 0..1: results are shaded by it
    row: int = 0  # sub-row inside the lane, for overlapping items


class Lane:
    """Items of one lane, sorted by start, with the longest duration for range queries."""

    def __init__(self, items: list[Item] | None = None, pack: bool = False) -> None:
        items = sorted(items or [], key=lambda i: (i.start, i.end))
        if pack:
            items = _pack(items)
        self.items = items
        self.starts = [i.start for i in items]
        self.longest = max((i.end - i.start for i in items), default=0.0)
        self.rows = 1 + max((i.row for i in items), default=0)

    def visible(self, t0: float, t1: float) -> list[Item]:
        lo = bisect.bisect_left(self.starts, t0 - self.longest)
        hi = bisect.bisect_right(self.starts, t1)
        return [i for i in self.items[lo:hi] if i.end >= t0]

    def at(self, t: float, row: int | None = None) -> Item | None:
        """The shortest item under `t` (the most specific one when items nest)."""
        hits = [i for i in self.visible(t, t) if i.start <= t <= i.end
                and (row is None or i.row == row)]
        return min(hits, key=lambda i: i.end - i.start) if hits else None


def _pack(items: list[Item], max_rows: int = 3) -> list[Item]:
    """Greedy lane packing: overlapping items go to the next free row (at most max_rows)."""
    ends = [-1.0] * max_rows
    out: list[Item] = []
    for item in items:
        row = next((r for r in range(max_rows) if ends[r] <= item.start), None)
        if row is None:
            row = min(range(max_rows), key=lambda r: ends[r])
        ends[row] = max(ends[row], item.end)
        out.append(Item(item.start, item.end, item.label, item.ref, item.weight, row))
    return out


class TimelineData:
    """All lanes plus the filmstrip and waveform; rebuilt when the document changes."""

    def __init__(self) -> None:
        self.duration = 0.0
        self.events = Lane()
        self.results = Lane()
        self.clips = Lane()
        self.speech = Lane()  # the transcript's words ("Said")
        self.thumbs: list[tuple[float, Any]] = []  # (time, QPixmap), sorted
        self._thumb_times: list[float] = []
        self.wave: Any = None  # numpy peaks 0..1
        self.wave_step = 0.02  # seconds per peak
        self.shots: list[float] = []  # shot changes (video time), drawn as ticks
        # the clips' reframing pins: (time, end, clip row); end > time for a held crop
        self.pins: list[tuple[float, float, int]] = []

    def set_events(self, events: list[Event]) -> None:
        self.events = Lane([Item(e.start, e.end, e.description, i)
                            for i, e in enumerate(events)], pack=True)

    def set_results(self, spans: list[Span]) -> None:
        scores = [s.score for s in spans if s.score is not None]
        lo, hi = (min(scores), max(scores)) if scores else (0.0, 0.0)
        items = []
        for i, s in enumerate(spans):
            w = 1.0 if s.score is None or hi <= lo else 0.25 + 0.75 * (s.score - lo) / (hi - lo)
            label = f"#{i + 1}" + ("" if s.score is None else f"  {s.score:.2f}")
            items.append(Item(s.start, s.end, label, i, w))
        self.results = Lane(items, pack=True)

    def set_clips(self, clips: list[Clip]) -> None:
        self.clips = Lane([Item(c.start, c.end, c.name or "clip", c.id) for c in clips],
                          pack=True)
        rows = {i.ref: i.row for i in self.clips.items}
        # a pin a trim left outside its clip does nothing (the path ignores it): not drawn
        self.pins = sorted((p.t, min(p.end, c.end), rows[c.id]) for c in clips for p in c.pins
                           if c.start <= p.t <= c.end)

    def set_words(self, words: list[Any]) -> None:
        """The spoken words (core.transcript.Word), one item each; ref: the word's start."""
        self.speech = Lane([Item(w.start, max(w.end, w.start + 0.01), w.text.strip(), w.start)
                            for w in words])

    def add_thumb(self, t: float, pixmap: Any) -> None:
        i = bisect.bisect_left(self._thumb_times, t)
        if i < len(self._thumb_times) and abs(self._thumb_times[i] - t) < 1e-3:
            self.thumbs[i] = (t, pixmap)
            return
        self._thumb_times.insert(i, t)
        self.thumbs.insert(i, (t, pixmap))

    def thumb_at(self, t: float) -> Any:
        """The thumbnail at or before `t` (the first one when t is before all)."""
        if not self.thumbs:
            return None
        i = max(0, bisect.bisect_right(self._thumb_times, t) - 1)
        return self.thumbs[i][1]

    def clear_media(self) -> None:
        self.thumbs, self._thumb_times, self.wave = [], [], None
        self.shots: list[float] = []
