"""What goes into a hand-off timeline, in frames: subclips back to back and the markers that
fall inside them. Every writer draws the same plan, so every format carries the same frames.

Subclips come from the clip bin in its order; each starts on the frame nearest its start and
ends (exclusive) on the frame nearest its end, at least one frame long, inside its source.
A marker (an event, or a search result) is put on every subclip that holds its first frame, at
that frame; a marker that starts in no subclip is left out and counted.

A clip cut from another video (a library result: `Clip.video`) references that file; the
request's `sources` say what each such file is. The markers are the main source's events and
searches, so they go on its own subclips only. All sources must share the timeline's frame
rate: an NLE conforms mixed rates in its own way, and a hand-off that guessed would put cuts on
frames nobody asked for.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
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
    sources: Mapping[str, SourceVideo] = field(default_factory=dict)  # Clip.video -> its file


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
    source: SourceVideo | None = None  # another file than the plan's source (None: that one)

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

    def source_of(self, clip: PlannedClip) -> SourceVideo:
        return clip.source or self.source

    @property
    def sources(self) -> list[SourceVideo]:
        """Every file the timeline references, the main source first."""
        seen = {self.source.path: self.source}
        for c in self.clips:
            seen.setdefault(self.source_of(c).path, self.source_of(c))
        return list(seen.values())


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


def _source_of(clip: Clip, request: HandoffRequest) -> SourceVideo:
    """The file a clip is cut from (ValueError: unknown, or at another frame rate)."""
    if not clip.video or clip.video == request.source.path:
        return request.source
    own = request.sources.get(clip.video)
    if own is None:
        raise ValueError(f"the clip {clip.name!r} is cut from {clip.video}, which the hand-off "
                         "was not given")
    if own.rate != request.source.rate:
        raise ValueError(f"{own.name} runs at {float(own.rate):.3f} fps and the timeline at "
                         f"{float(request.source.rate):.3f} fps: one timeline takes clips of "
                         "one frame rate (export the others as files)")
    return own


def make_plan(request: HandoffRequest) -> Plan:
    """The subclips and markers of `request`, in frames (ValueError when there is no clip)."""
    source = request.source
    marks = _marks(request)
    clips: list[PlannedClip] = []
    placed: set[int] = set()
    record = 0
    for clip in request.clips:
        own = _source_of(clip, request)
        total = own.total_frames
        first = min(max(0, to_frame(clip.start, own.rate)), total - 1)
        last = min(max(first + 1, to_frame(clip.end, own.rate)), total)
        markers = []
        for i, m in enumerate(marks):
            if own is source and first <= m.start < last:
                placed.add(i)
                markers.append(PlannedMarker(m.kind, m.name, m.note, m.start,
                                             min(m.end, last) - m.start,
                                             record + m.start - first))
        name = clean_text(clip.name) or f"{Path(own.name).stem} {len(clips) + 1}"
        clips.append(PlannedClip(name, first, last, record, tuple(markers),
                                 None if own is source else own))
        record += last - first
    if not clips:
        raise ValueError("a hand-off timeline needs at least one clip")
    everything = tuple(m for c in clips for m in c.markers)
    return Plan(source, clean_text(request.title) or source.name, tuple(clips),
                len(marks) - len(placed), everything)
