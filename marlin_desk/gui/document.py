"""The open video's editable state: events, clips, find results. One object, signals on change.

Widgets read from it and never change it directly: every edit goes through an undo command
(gui/undo.py), which calls the mutators here; the mutators emit the signals that repaint.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QObject, Signal

from marlin_desk.core.project import Clip
from marlin_desk.core.timeline import Analysis, Event, Span
from marlin_desk.core.transcript import Transcript


class Document(QObject):
    eventsChanged = Signal()
    clipsChanged = Signal()
    resultsChanged = Signal()
    marksChanged = Signal()
    transcriptChanged = Signal()

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.reset()

    def reset(self) -> None:
        self.video: str = ""
        self.info: Any = None  # media.probe.VideoInfo
        self.fingerprint: str = ""
        self.analysis: Analysis | None = None
        self.analysis_ref: dict[str, Any] | None = None
        self.events: list[Event] = []
        self.events_edited = False
        self.clips: list[Clip] = []
        self.query = ""
        self.results: list[Span] = []
        self.mark_in: float | None = None
        self.mark_out: float | None = None
        self.transcript: Transcript | None = None  # what is said (speech/), from the store
        self.dirty = False

    def load_video(self, video: str, info: Any, fingerprint: str) -> None:
        """A newly opened video: everything of the last one goes, and every view hears it."""
        self.reset()
        self.video, self.info, self.fingerprint = video, info, fingerprint
        for signal in (self.eventsChanged, self.clipsChanged, self.resultsChanged,
                       self.marksChanged, self.transcriptChanged):
            signal.emit()

    def set_transcript(self, transcript: Transcript | None) -> None:
        """The video's transcript (derived data, like the analysis: not an edit)."""
        self.transcript = transcript
        self.transcriptChanged.emit()

    @property
    def duration(self) -> float:
        return float(self.info.duration) if self.info is not None else 0.0

    @property
    def fps(self) -> float:
        return float(self.info.fps) if self.info is not None and self.info.fps else 25.0

    def _touch(self) -> None:
        self.dirty = True  # the autosave's cue; the title's • follows the undo stack

    # -- analysis -------------------------------------------------------------------------
    def set_analysis(self, analysis: Analysis | None, ref: dict[str, Any] | None = None,
                     keep_edits: bool = False) -> None:
        self.analysis = analysis
        if ref is not None:
            self.analysis_ref = ref
        if not (keep_edits and self.events_edited):
            self.events = list(analysis.events) if analysis else []
            self.events_edited = False
        self.eventsChanged.emit()

    def add_partial_events(self, events: list[Event]) -> None:
        """Events from one finished window, shown while the analysis goes on."""
        self.events = sorted([*self.events, *events], key=lambda e: (e.start, e.end))
        self.eventsChanged.emit()

    # -- edits (called by undo commands) -----------------------------------------------------
    def set_events(self, events: list[Event], edited: bool = True) -> None:
        self.events = list(events)
        self.events_edited = edited
        self.eventsChanged.emit()
        self._touch()

    def replace_event(self, index: int, event: Event) -> None:
        self.events[index] = event
        self.events_edited = True
        self.eventsChanged.emit()
        self._touch()

    def insert_event(self, event: Event) -> int:
        """Insert in time order (after equal starts); returns the row it went to."""
        key = (event.start, event.end)
        index = next((i for i, e in enumerate(self.events) if (e.start, e.end) > key),
                     len(self.events))
        self.events.insert(index, event)
        self.events_edited = True
        self.eventsChanged.emit()
        self._touch()
        return index

    def remove_events(self, rows: list[int]) -> list[tuple[int, Event]]:
        """Remove these rows; returns (row, event) in ascending row order for undo."""
        rows = sorted({r for r in rows if 0 <= r < len(self.events)})
        removed = [(r, self.events[r]) for r in rows]
        for r in reversed(rows):
            del self.events[r]
        self.events_edited = True
        self.eventsChanged.emit()
        self._touch()
        return removed

    def restore_events(self, removed: list[tuple[int, Event]]) -> None:
        """Undo of remove_events: put each event back at its row (ascending order)."""
        for r, e in removed:
            self.events.insert(r, e)
        self.eventsChanged.emit()
        self._touch()

    def clip_index(self, clip_id: str) -> int:
        for i, c in enumerate(self.clips):
            if c.id == clip_id:
                return i
        raise KeyError(clip_id)

    def clip(self, clip_id: str) -> Clip:
        return self.clips[self.clip_index(clip_id)]

    def insert_clip(self, index: int, clip: Clip) -> None:
        self.clips.insert(index, clip)
        self.clipsChanged.emit()
        self._touch()

    def remove_clip(self, clip_id: str) -> tuple[int, Clip]:
        i = self.clip_index(clip_id)
        clip = self.clips.pop(i)
        self.clipsChanged.emit()
        self._touch()
        return i, clip

    def update_clip(self, clip: Clip) -> None:
        self.clips[self.clip_index(clip.id)] = clip
        self.clipsChanged.emit()
        self._touch()

    def move_clip(self, clip_id: str, to: int) -> None:
        clip = self.clips.pop(self.clip_index(clip_id))
        self.clips.insert(max(0, min(to, len(self.clips))), clip)
        self.clipsChanged.emit()
        self._touch()

    def set_clips(self, clips: list[Clip]) -> None:
        """The clips of a project or of the video's saved clip bin, as opened (not an edit)."""
        self.clips = list(clips)
        self.clipsChanged.emit()

    # -- find ------------------------------------------------------------------------------
    def set_results(self, query: str, spans: list[Span]) -> None:
        self.query = query
        self.results = list(spans)
        self.resultsChanged.emit()

    # -- marks -----------------------------------------------------------------------------
    def set_marks(self, mark_in: float | None, mark_out: float | None) -> None:
        self.mark_in, self.mark_out = mark_in, mark_out
        self.marksChanged.emit()
