"""The views follow the document and each other: the timeline's lanes redraw when events,
results, clips or marks change; a click on the timeline selects the row in its table and the
other way round; choosing an item seeks the player there."""

from __future__ import annotations

from PySide6.QtCore import QObject, Slot

from marlin_desk.gui.document import Document
from marlin_desk.gui.panels.clips import ClipsPanel
from marlin_desk.gui.panels.events import EventsPanel
from marlin_desk.gui.panels.search import SearchPanel
from marlin_desk.gui.player import PlayerWidget
from marlin_desk.gui.timeline import TimelineWidget


class ViewSync(QObject):
    def __init__(self, doc: Document, player: PlayerWidget, timeline: TimelineWidget,
                 events: EventsPanel, search: SearchPanel, clips: ClipsPanel,
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.doc, self.player, self.timeline = doc, player, timeline
        self.events, self.search, self.clips = events, search, clips
        player.positionChanged.connect(timeline.set_playhead)
        timeline.seekRequested.connect(self.seek)
        timeline.eventClicked.connect(self._on_timeline_event)
        timeline.resultClicked.connect(self.preview_result)
        timeline.clipClicked.connect(clips.select_id)
        timeline.trimPreviewed.connect(self._show_edge)
        doc.eventsChanged.connect(self._on_events_changed)
        doc.clipsChanged.connect(self._on_clips_changed)
        doc.resultsChanged.connect(self._on_results_changed)
        doc.marksChanged.connect(self._on_marks_changed)
        events.eventSelected.connect(self._on_table_event)
        search.resultActivated.connect(self.preview_result)
        clips.clipActivated.connect(self._on_clip_activated)

    @Slot(float)
    def seek(self, t: float) -> None:
        self.player.clear_loop()
        self.player.seek(t)

    @Slot(int)
    def preview_result(self, index: int) -> None:
        """Seek to the span and loop it, so the editor can judge it."""
        if not 0 <= index < len(self.doc.results):
            return
        span = self.doc.results[index]
        self.timeline.selected_result = index
        self.search.select(index)
        self.player.set_loop(span.start, span.end)
        self.timeline.set_playhead(span.start)

    def select_event(self, row: int) -> None:
        self.events.select(row)
        self.timeline.selected_event = row
        self.timeline.update()

    def selected_event(self) -> int | None:
        row = self.events.selected_row()
        return row if row is not None else self.timeline.selected_event

    def selected_events(self) -> list[int]:
        rows = self.events.selected_rows()
        if not rows and self.timeline.selected_event is not None:
            rows = [self.timeline.selected_event]
        return rows

    @Slot(str, float)
    def _show_edge(self, which: str, t: float) -> None:
        """While a clip edge is dragged the viewer shows the edge frame: the first frame of the
        clip at its In, the last frame kept at its Out."""
        if which == "end":
            t = max(0.0, t - 1.0 / self.player.fps)
        self.seek(t)

    @Slot(int)
    def _on_timeline_event(self, index: int) -> None:
        self.events.select(index)
        if 0 <= index < len(self.doc.events):
            self.seek(self.doc.events[index].start)

    @Slot(int)
    def _on_table_event(self, index: int) -> None:
        self.timeline.selected_event = index
        self.timeline.update()
        if 0 <= index < len(self.doc.events):
            self.seek(self.doc.events[index].start)

    @Slot(str)
    def _on_clip_activated(self, clip_id: str) -> None:
        clip = self.doc.clip(clip_id)
        if clip.video_of(self.doc.video) != self.doc.video:
            return  # cut from another video: it is not on this timeline
        self.timeline.selected_clip = clip_id
        self.seek(clip.start)

    def _on_events_changed(self) -> None:
        self.timeline.data.set_events(self.doc.events)
        sel = self.timeline.selected_event
        if sel is not None and sel >= len(self.doc.events):
            self.timeline.selected_event = None
        self.timeline.relayout()

    def _on_clips_changed(self) -> None:  # clips of other videos are in the bin, not here
        self.timeline.data.set_clips([c for c in self.doc.clips
                                      if c.video_of(self.doc.video) == self.doc.video])
        self.timeline.relayout()

    def _on_results_changed(self) -> None:
        self.timeline.data.set_results(self.doc.results)
        self.timeline.selected_result = None
        self.timeline.relayout()

    def _on_marks_changed(self) -> None:
        self.timeline.marks = (self.doc.mark_in, self.doc.mark_out)
        self.timeline.update()
