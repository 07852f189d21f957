"""Edits of the open video's events, marks and clips, every one an undo command.

Works on the document and the undo stack alone (times and selections come in as arguments),
so its tests need no window. A refused edit is said through `refused` in plain words.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, Signal, Slot
from PySide6.QtGui import QUndoStack

from marlin_desk.core.options import SNAP_TOLERANCE_SECONDS
from marlin_desk.core.project import Clip
from marlin_desk.core.snap import snap_span
from marlin_desk.core.timeline import Event
from marlin_desk.gui import undo
from marlin_desk.gui.document import Document
from marlin_desk.gui.timefmt import fmt_time

NEW_EVENT_SECONDS = 2.0


class EditsController(QObject):
    refused = Signal(str)

    def __init__(self, doc: Document, stack: QUndoStack,
                 default_preset: Callable[[], str] = lambda: "original",
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.doc, self.stack, self.default_preset = doc, stack, default_preset
        self.shots: list[float] = []  # the open video's shot changes
        self.snap = False  # clips snap their In and Out to the nearest shot change

    def set_shots(self, cuts: list[float]) -> None:
        self.shots = list(cuts)

    def set_snap(self, on: bool) -> None:
        self.snap = bool(on)

    def _span(self, start: float, end: float) -> tuple[float, float]:
        """A new clip's or a trim's edges, snapped to shot changes when the editor asked."""
        if not self.snap or not self.shots:
            return start, end
        a, b, _, _ = snap_span(start, end, self.shots, SNAP_TOLERANCE_SECONDS)
        return a, b

    # -- events --------------------------------------------------------------------------
    @Slot(int, object)
    def edit_event(self, row: int, event: object) -> None:
        self.stack.push(undo.EditEvent(self.doc, row, event))  # type: ignore[arg-type]

    def add_event(self, playhead: float, description: str = "New event") -> int | None:
        """An event over the In/Out marks when both are set, else 2 s at the playhead.
        Returns its row (so the caller can select it for typing)."""
        if not self.doc.video:
            self.refused.emit("Open a video before adding events.")
            return None
        a, b = self.doc.mark_in, self.doc.mark_out
        if a is None or b is None or b <= a:
            a = max(0.0, playhead)
            b = a + NEW_EVENT_SECONDS
            if self.doc.duration > 0:
                b = min(b, self.doc.duration)
                a = min(a, max(0.0, b - NEW_EVENT_SECONDS))
            if b <= a:
                self.refused.emit("There is no room for an event at the end of the video.")
                return None
        command = undo.AddEvent(self.doc, Event(round(a, 3), round(b, 3), description))
        self.stack.push(command)
        return command.index

    @Slot(list)
    def delete_events(self, rows: list[int]) -> None:
        rows = [r for r in rows if 0 <= r < len(self.doc.events)]
        if rows:
            self.stack.push(undo.RemoveEvents(self.doc, rows))

    # -- marks ---------------------------------------------------------------------------
    def mark_in(self, t: float) -> None:
        self.doc.set_marks(t, self.doc.mark_out)

    def mark_out(self, t: float) -> None:
        self.doc.set_marks(self.doc.mark_in, t)

    # -- clips ---------------------------------------------------------------------------
    def add_clip_from_marks(self) -> Clip | None:
        a, b = self.doc.mark_in, self.doc.mark_out
        if a is None or b is None or b <= a:
            self.refused.emit("Set an In mark (I) before an Out mark (O) to make a clip.")
            return None
        a, b = self._span(a, b)
        clip = Clip(a, b, _marks_name(a), self.default_preset(), "marks")
        self.stack.push(undo.AddClips(self.doc, [clip]))
        return clip

    def add_clip_from_event(self, row: int | None) -> Clip | None:
        if row is None or not 0 <= row < len(self.doc.events):
            self.refused.emit("Select an event first.")
            return None
        e = self.doc.events[row]
        a, b = self._span(e.start, e.end)
        clip = Clip(a, b, e.description[:60], self.default_preset(), "event")
        self.stack.push(undo.AddClips(self.doc, [clip]))
        return clip

    @Slot(list)
    def add_clips_from_results(self, indexes: list[int]) -> list[Clip]:
        clips = [Clip(*self._span(self.doc.results[i].start, self.doc.results[i].end),
                      f"{self.doc.query} #{i + 1}", self.default_preset(), "find")
                 for i in indexes if 0 <= i < len(self.doc.results)]
        if not clips:
            self.refused.emit("Select a search result first (or run a search).")
            return []
        self.stack.push(undo.AddClips(self.doc, clips))
        return clips

    def add_clips_from_library(self, hits: list[Any]) -> list[Clip]:
        """Library results as clips: the open video's own go on its timeline (snapped like
        any clip), the others keep the file they are cut from and are exported from it."""
        clips = []
        for h in hits:
            path = os.path.abspath(h.path)
            own = path == self.doc.video
            start, end = self._span(h.start, h.end) if own else (h.start, h.end)
            clips.append(Clip(start, end, h.text[:60], self.default_preset(), "library",
                              video="" if own else path))
        if not clips:
            self.refused.emit("Select library results first (or search the library).")
            return []
        self.stack.push(undo.AddClips(self.doc, clips))
        return clips

    @Slot(str, float, float)
    def trim_clip(self, clip_id: str, start: float, end: float) -> None:
        clip = self.doc.clip(clip_id)
        start, end = self._span(start, end)
        if (clip.start, clip.end) == (start, end):
            return
        trimmed = clip.with_times(start, end)
        if clip.name == _marks_name(clip.start):  # a name the app gave follows its In
            trimmed = trimmed.renamed(_marks_name(start))
        self.stack.push(undo.ChangeClip(self.doc, trimmed, "Trim clip"))

    @Slot(str, str)
    def rename_clip(self, clip_id: str, name: str) -> None:
        self.stack.push(undo.ChangeClip(self.doc, self.doc.clip(clip_id).renamed(name),
                                        "Rename clip"))

    @Slot(str, str)
    def set_clip_preset(self, clip_id: str, preset: str) -> None:
        self.stack.push(undo.ChangeClip(self.doc, self.doc.clip(clip_id).with_preset(preset),
                                        "Set preset"))

    @Slot(str, int)
    def move_clip(self, clip_id: str, delta: int) -> None:
        to = self.doc.clip_index(clip_id) + delta
        if 0 <= to < len(self.doc.clips):
            self.stack.push(undo.MoveClip(self.doc, clip_id, to))

    @Slot(list)
    def delete_clips(self, ids: list[str]) -> None:
        if ids:
            self.stack.push(undo.RemoveClips(self.doc, list(ids)))


def _marks_name(start: float) -> str:
    return f"Clip {fmt_time(start, millis=False)}"
