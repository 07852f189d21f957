"""Moving through the video as an editor does: to the previous or next edit point (event and
clip edges, the clips' reframing pins, the marks), a second back or forward, and playing the
In to Out range (once, or round and round with Loop)."""

from __future__ import annotations

from PySide6.QtCore import QObject, Slot

from marlin_desk.gui.document import Document
from marlin_desk.gui.notifier import Notifier
from marlin_desk.gui.player import PlayerWidget

JUMP_SECONDS = 1.0


class Navigation(QObject):
    def __init__(self, doc: Document, player: PlayerWidget, notifier: Notifier,
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.doc, self.player, self.notifier = doc, player, notifier
        self.loop = False
        doc.marksChanged.connect(self._on_marks)

    def edit_points(self) -> list[float]:
        points = {0.0}
        own = [c for c in self.doc.clips if c.video_of(self.doc.video) == self.doc.video]
        for item in (*self.doc.events, *own):  # another video's clips are not on this one
            points.update((item.start, item.end))
        points.update(t for c in own for p in c.pins for t in (p.t, p.end)
                      if c.start <= t <= c.end)
        points.update(t for t in (self.doc.mark_in, self.doc.mark_out) if t is not None)
        if self.doc.duration > 0:
            points.add(self.doc.duration)
        return sorted(points)

    @Slot()
    def next_edit(self) -> None:
        here = self.player.position + 0.5 / self.player.fps
        later = [t for t in self.edit_points() if t > here]
        if later:
            self._go(later[0])

    @Slot()
    def previous_edit(self) -> None:
        here = self.player.position - 0.5 / self.player.fps
        earlier = [t for t in self.edit_points() if t < here]
        if earlier:
            self._go(earlier[-1])

    def _go(self, t: float) -> None:
        """An edge that ends the video shows its last frame."""
        if self.doc.duration > 0 and t >= self.doc.duration:
            t = max(0.0, self.doc.duration - 1.0 / self.player.fps)
        self.player.pause()
        self.player.seek(t)

    @Slot(float)
    def jump(self, seconds: float) -> None:
        self.player.pause()
        self.player.seek(max(0.0, min(self.player.position + seconds,
                                      max(0.0, self.doc.duration - 1.0 / self.player.fps))))

    @Slot()
    def play_in_to_out(self) -> None:
        a, b = self.doc.mark_in, self.doc.mark_out
        if a is None or b is None or b <= a:
            self.notifier.error("Set an In mark (I) before an Out mark (O) to play between.")
            return
        self.player.play_range(a, b, loop=self.loop)

    @Slot()
    def toggle_loop(self) -> None:
        self.loop = not self.loop
        self.notifier.transient("Loop on: In to Out plays round and round" if self.loop
                                else "Loop off", 4000)

    @Slot()
    def _on_marks(self) -> None:
        self.player.show_marks(self.doc.mark_in, self.doc.mark_out)
