"""Undo commands: every edit of events and clips is one of these, pushed on the QUndoStack."""

from __future__ import annotations

from typing import Any

from PySide6.QtGui import QUndoCommand

from marlin_desk.core.project import Clip
from marlin_desk.core.timeline import Analysis, Event
from marlin_desk.gui.document import Document


class EditEvent(QUndoCommand):
    def __init__(self, doc: Document, index: int, new: Event) -> None:
        super().__init__("Edit event")
        self.doc, self.index, self.new = doc, index, new
        self.old = doc.events[index]

    def redo(self) -> None:
        self.doc.replace_event(self.index, self.new)

    def undo(self) -> None:
        self.doc.replace_event(self.index, self.old)


class AddEvent(QUndoCommand):
    def __init__(self, doc: Document, event: Event) -> None:
        super().__init__("Add event")
        self.doc, self.event = doc, event
        self.index = -1

    def redo(self) -> None:
        self.index = self.doc.insert_event(self.event)

    def undo(self) -> None:
        self.doc.remove_events([self.index])


class RemoveEvents(QUndoCommand):
    def __init__(self, doc: Document, rows: list[int]) -> None:
        super().__init__("Delete event" if len(rows) == 1 else f"Delete {len(rows)} events")
        self.doc, self.rows = doc, list(rows)
        self.removed: list[tuple[int, Event]] = []

    def redo(self) -> None:
        self.removed = self.doc.remove_events(self.rows)

    def undo(self) -> None:
        self.doc.restore_events(self.removed)


class AddClips(QUndoCommand):
    def __init__(self, doc: Document, clips: list[Clip]) -> None:
        super().__init__("Add clip" if len(clips) == 1 else f"Add {len(clips)} clips")
        self.doc, self.clips = doc, clips

    def redo(self) -> None:
        for c in self.clips:
            self.doc.insert_clip(len(self.doc.clips), c)

    def undo(self) -> None:
        for c in reversed(self.clips):
            self.doc.remove_clip(c.id)


class RemoveClips(QUndoCommand):
    def __init__(self, doc: Document, ids: list[str]) -> None:
        super().__init__("Delete clip" if len(ids) == 1 else f"Delete {len(ids)} clips")
        self.doc, self.ids = doc, ids
        self.removed: list[tuple[int, Clip]] = []

    def redo(self) -> None:
        self.removed = [self.doc.remove_clip(i) for i in self.ids]

    def undo(self) -> None:
        for index, clip in reversed(self.removed):
            self.doc.insert_clip(index, clip)


class ChangeClip(QUndoCommand):
    """Trim, retime, rename or re-preset one clip (the whole clip is swapped)."""

    def __init__(self, doc: Document, new: Clip, text: str) -> None:
        super().__init__(text)
        self.doc, self.new = doc, new
        self.old = doc.clip(new.id)

    def redo(self) -> None:
        self.doc.update_clip(self.new)

    def undo(self) -> None:
        self.doc.update_clip(self.old)


class MoveClip(QUndoCommand):
    def __init__(self, doc: Document, clip_id: str, to: int) -> None:
        super().__init__("Reorder clips")
        self.doc, self.clip_id, self.to = doc, clip_id, to
        self.frm = doc.clip_index(clip_id)

    def redo(self) -> None:
        self.doc.move_clip(self.clip_id, self.to)

    def undo(self) -> None:
        self.doc.move_clip(self.clip_id, self.frm)


class ReplaceAnalysis(QUndoCommand):
    """A re-analysis that replaced the events: Undo brings the earlier result back."""

    def __init__(self, doc: Document, analysis: Analysis, ref: dict[str, Any] | None) -> None:
        super().__init__("Re-analyse")
        self.doc, self.new, self.new_ref = doc, analysis, ref
        self.old = (doc.analysis, doc.analysis_ref, list(doc.events), doc.events_edited)

    def redo(self) -> None:
        self.doc.set_analysis(self.new, self.new_ref, keep_edits=True)

    def undo(self) -> None:
        analysis, ref, events, edited = self.old
        self.doc.set_analysis(analysis, ref)
        if edited:
            self.doc.set_events(events, edited=True)
