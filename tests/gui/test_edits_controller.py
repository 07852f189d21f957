"""The edits controller on a document and an undo stack alone: no window, no player."""

from __future__ import annotations

from PySide6.QtGui import QUndoStack

from marlin_desk.core.timeline import Event, Span
from marlin_desk.gui.controllers.edits import EditsController
from marlin_desk.gui.document import Document


class _Info:
    duration = 10.0
    fps = 25.0


def _controller(qapp):  # noqa: ANN001, ANN202
    doc = Document()
    doc.load_video("/footage/a.mp4", _Info(), "fp")
    stack = QUndoStack()
    refused: list[str] = []
    edits = EditsController(doc, stack, lambda: "reels")
    edits.refused.connect(refused.append)
    return doc, stack, edits, refused


def test_clips_from_marks_results_and_events_with_undo(qapp) -> None:  # noqa: ANN001
    doc, stack, edits, refused = _controller(qapp)
    assert edits.add_clip_from_marks() is None and "In mark" in refused[-1]
    edits.mark_in(1.0)
    edits.mark_out(3.0)
    clip = edits.add_clip_from_marks()
    assert clip is not None and clip.preset == "reels" and doc.clips == [clip]
    doc.set_results("q", [Span(4.0, 5.0, 0.8)])
    assert edits.add_clips_from_results([]) == [] and "search result" in refused[-1]
    (found,) = edits.add_clips_from_results([0])
    assert (found.start, found.end, found.source) == (4.0, 5.0, "find")
    doc.set_analysis(None)
    row = edits.add_event(6.0, "a goal")
    assert row is not None and doc.events[row] == Event(1.0, 3.0, "a goal")  # over the marks
    edits.trim_clip(clip.id, 1.5, 3.0)
    assert doc.clips[0].name == "Clip 0:01"
    for _ in range(4):
        stack.undo()
    assert doc.clips == [] and doc.events == []
    assert not stack.canUndo()


def test_an_event_at_the_playhead_fits_before_the_end(qapp) -> None:  # noqa: ANN001
    doc, _stack, edits, refused = _controller(qapp)
    row = edits.add_event(9.5)
    assert row is not None and (doc.events[row].start, doc.events[row].end) == (8.0, 10.0)
    assert not refused
