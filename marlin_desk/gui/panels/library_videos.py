"""The library's videos with their state, and the analysis queue's controls: queue the selected
or every unanalysed video, pause and resume, take videos out of the queue, move them earlier or
later. The view only shows and asks (signals); the queue controller decides."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QPushButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

STATE_TEXT = {"analysed": "analysed", "partial": "partly analysed",
              "not analysed": "not analysed", "not-analysed": "not analysed"}
FP_ROLE = Qt.ItemDataRole.UserRole + 1


def state_text(video: Any, queued: Any = None, position: int = 0,
               progress: tuple[int, int] | None = None, paused: bool = False) -> str:
    """What the State column says: the queue's word first, else the analysis's."""
    if not video.online:
        return "offline (missing)" + (", queued" if queued is not None else "")
    if progress is not None:
        done, total = progress
        return f"analysing {done}/{total}" if total else "analysing…"
    if queued is not None:
        if queued.failed:
            return f"failed: {queued.failed}"
        return f"{'paused' if paused else 'queued'} ({position})"
    return STATE_TEXT.get(video.state, video.state)


class LibraryVideos(QWidget):
    videoActivated = Signal(str)  # path
    queueRequested = Signal(list)  # fingerprints, in the shown order
    queueAllRequested = Signal()
    dequeueRequested = Signal(list)  # fingerprints
    moveRequested = Signal(str, int)  # fingerprint, steps (negative: earlier)
    pauseRequested = Signal(bool)  # True: pause

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.tree = QTreeWidget()
        self.tree.setHeaderLabels(["Video", "State", "Where"])
        self.tree.setAccessibleName("Library videos")
        self.tree.setRootIsDecorated(False)
        self.tree.setUniformRowHeights(True)  # a thousand rows lay out at once
        self.tree.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.tree.itemActivated.connect(self._activated)
        self.items: dict[str, QTreeWidgetItem] = {}  # fingerprint -> row
        self.videos: dict[str, Any] = {}  # fingerprint -> library.LibraryVideo
        self.paused = False
        self.queue_button = self._button("Analyse Selected", self._queue_selected,
                                         "Add the selected videos to the analysis queue")
        self.all_button = self._button("Analyse All", self.queueAllRequested.emit,
                                       "Queue every video that is not analysed yet")
        self.pause_button = self._button("Pause Queue", self._toggle_pause,
                                         "Pause or resume the analysis queue")
        self.remove_button = self._button("Remove from Queue", self._dequeue_selected,
                                          "Take the selected videos out of the queue "
                                          "(finished windows stay in the cache)")
        self.up_button = self._button("Earlier", lambda: self._move(-1),
                                      "Analyse the selected video earlier")
        self.down_button = self._button("Later", lambda: self._move(1),
                                        "Analyse the selected video later")
        buttons = QHBoxLayout()
        for b in (self.queue_button, self.all_button, self.pause_button, self.remove_button,
                  self.up_button, self.down_button):
            buttons.addWidget(b)
        buttons.addStretch(1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(buttons)
        layout.addWidget(self.tree, 1)

    def _button(self, text: str, slot: Any, tip: str) -> QPushButton:
        button = QPushButton(text)
        button.setToolTip(tip)
        button.clicked.connect(slot)
        return button

    # -- asking ------------------------------------------------------------------------------
    def selected(self) -> list[str]:
        rows = sorted(self.tree.selectedItems(), key=self.tree.indexOfTopLevelItem)
        return [str(item.data(0, FP_ROLE)) for item in rows]

    def _queue_selected(self) -> None:
        if self.selected():
            self.queueRequested.emit(self.selected())

    def _dequeue_selected(self) -> None:
        if self.selected():
            self.dequeueRequested.emit(self.selected())

    def _move(self, steps: int) -> None:
        for fp in self.selected()[:1]:
            self.moveRequested.emit(fp, steps)

    def _toggle_pause(self) -> None:
        self.pauseRequested.emit(not self.paused)

    def _activated(self, item: QTreeWidgetItem, _column: int = 0) -> None:
        self.videoActivated.emit(str(item.data(0, Qt.ItemDataRole.UserRole)))

    # -- showing -----------------------------------------------------------------------------
    def show_videos(self, videos: list[Any]) -> None:
        """Rebuild the rows (after a scan); the queue's states follow with show_queue."""
        selected = set(self.selected())
        self.tree.setUpdatesEnabled(False)
        self.tree.clear()
        self.items, self.videos = {}, {}
        rows = []
        for v in videos:
            where = "offline (missing)" if not v.online else str(Path(v.path).parent)
            item = QTreeWidgetItem([Path(v.path).name, state_text(v), where])
            item.setData(0, Qt.ItemDataRole.UserRole, v.path)
            item.setData(0, FP_ROLE, v.fingerprint)
            item.setToolTip(0, v.path)
            if not v.online:
                item.setDisabled(True)
            self.items[v.fingerprint], self.videos[v.fingerprint] = item, v
            rows.append(item)
        self.tree.addTopLevelItems(rows)
        for fp in selected & self.items.keys():
            self.items[fp].setSelected(True)
        self.tree.setUpdatesEnabled(True)

    def show_queue(self, queue: list[Any], paused: bool, running: str | None = None,
                   progress: tuple[int, int] | None = None) -> None:
        """Each row's State from the queue (position, failed, analysing with its windows)."""
        self.paused = paused
        self.pause_button.setText("Resume Queue" if paused else "Pause Queue")
        queued = {q.fingerprint: (i + 1, q) for i, q in enumerate(queue)}
        for fp, item in self.items.items():
            position, q = queued.get(fp, (0, None))
            text = state_text(self.videos[fp], q, position,
                              (progress or (0, 0)) if fp == running else None, paused)
            if item.text(1) != text:
                item.setText(1, text)
                item.setToolTip(1, text)

    def show_progress(self, fingerprint: str, done: int, total: int) -> None:
        item = self.items.get(fingerprint)
        if item is not None:
            item.setText(1, state_text(self.videos[fingerprint], progress=(done, total)))
