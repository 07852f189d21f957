"""What goes into a hand-off timeline, in frames: subclips back to back and the markers that
fall inside them. Every writer draws the same plan, so every format carries the same frames.

Subclips come from the clip bin in its order; each starts on the frame nearest its start and
ends (exclusive) on the frame nearest its end, at least one frame long, inside the source.
A marker (an event, or a search result) is put on every subclip that holds its first frame, at
that frame; a marker that starts in no subclip is left out and counted.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from marlin_desk.core.project import Clip
from marlin_desk.core.timeline import Event, Span
from marlin_desk.handoff.frames import SourceVideo, to_frame

MARKER_KINDS = ("event", "search")


@dataclass(frozen=True)
class SearchHit:
    """One search result: the span found and the query that found it."""

    query: str
    span: Span


@dataclass(frozen=True)
class HandoffRequest:
    """Everything a hand-off file is made from."""

    source: SourceVideo
    clips: Sequence[Clip]
    events: Sequence[Event] = ()
    searches: Sequence[SearchHit] = ()
    title: str = ""  # the timeline's name; default: the source file's name


@dataclass(frozen=True)
class PlannedMarker:
    kind: str  # "event" or "search"
    name: str  # the event's description, or the query
    note: str  # what else is known: the kind, the length, a search score
    source_frame: int  # frame of the source (0 = its first frame)
    frames: int  # how long it lasts on this subclip (at least 1)
    record_frame: int  # frame of the timeline (0 = its first frame)


@dataclass(frozen=True)
class PlannedClip:
    name: str
    source_in: int  # first frame, inclusive
    source_out: int  # exclusive
    record_in: int
    markers: tuple[PlannedMarker, ...] = ()

    @property
    def frames(self) -> int:
        return self.source_out - self.source_in


@dataclass(frozen=True)
class Plan:
    source: SourceVideo
    title: str
    clips: tuple[PlannedClip, ...]
    unplaced: int = 0  # markers that start in no subclip
    markers: tuple[PlannedMarker, ...] = field(default=())  # all placed markers, timeline order

    @property
    def frames(self) -> int:
        return sum(c.frames for c in self.clips)


@dataclass(frozen=True)
class _Mark:
    kind: str
    name: str
    note: str
    start: int
    end: int


def clean_text(text: str) -> str:
    """One line of text (descriptions may hold newlines and tabs)."""
    return " ".join(text.split())


def _marks(request: HandoffRequest) -> list[_Mark]:
    rate = request.source.rate
    marks = []
    for ev in request.events:
        a, b = to_frame(ev.start, rate), to_frame(ev.end, rate)
        marks.append(_Mark("event", clean_text(ev.description) or "event",
                           f"event, {ev.end - ev.start:.2f} s", a, max(b, a + 1)))
    for hit in request.searches:
        a, b = to_frame(hit.span.start, rate), to_frame(hit.span.end, rate)
        score = "" if hit.span.score is None else f", score {hit.span.score:.3f}"
        marks.append(_Mark("search", clean_text(hit.query) or "search",
                           f"search result{score}", a, max(b, a + 1)))
    marks.sort(key=lambda m: (m.start, MARKER_KINDS.index(m.kind)))
    return marks


def make_plan(request: HandoffRequest) -> Plan:
    """The subclips and markers of `request`, in frames (ValueError when there is no clip)."""
    source = request.source
    total = source.total_frames
    marks = _marks(request)
    clips: list[PlannedClip] = []
    placed: set[int] = set()
    record = 0
    for clip in request.clips:
        first = min(max(0, to_frame(clip.start, source.rate)), total - 1)
        last = min(max(first + 1, to_frame(clip.end, source.rate)), total)
        markers = []
        for i, m in enumerate(marks):
            if first <= m.start < last:
                placed.add(i)
                markers.append(PlannedMarker(m.kind, m.name, m.note, m.start,
                                             min(m.end, last) - m.start,
                                             record + m.start - first))
        name = clean_text(clip.name) or f"{Path(source.name).stem} {len(clips) + 1}"
        clips.append(PlannedClip(name, first, last, record, tuple(markers)))
        record += last - first
    if not clips:
        raise ValueError("a hand-off timeline needs at least one clip")
    everything = tuple(m for c in clips for m in c.markers)
    return Plan(source, clean_text(request.title) or source.name, tuple(clips),
                len(marks) - len(placed), everything)
