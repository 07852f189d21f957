"""File > Hand Off to an NLE…: the clip bin as a timeline of subclips of the original file,
the events and search results as markers, written by handoff_export.write_timeline (the same
call as `marlin-desk handoff`) on a worker thread. The file never replaces another."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QWidget,
)

from marlin_desk.gui.media_workers import _Worker
from marlin_desk.gui.timefmt import count
from marlin_desk.handoff.targets import TARGETS


class HandoffWorker(_Worker):
    written = Signal(object)  # HandoffResult

    def __init__(self, video: str, target: str, out: str | None, clips: list[Any],
                 events: list[Any], searches: list[Any], parent: Any = None) -> None:
        super().__init__(parent)
        self.args = (video, target, out, clips, events, searches)

    def work(self) -> None:
        from marlin_desk.handoff_export import write_timeline

        video, target, out, clips, events, searches = self.args
        self.written.emit(write_timeline(video, target, out, clips=clips, events=events,
                                         searches=searches))


class HandoffDialog(QDialog):
    def __init__(self, video: str, clips: int, last_target: str | None,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Hand off to an NLE")
        self.video = video
        self.target = QComboBox()
        self.target.setAccessibleName("Timeline for")
        for t in TARGETS:
            self.target.addItem(t.label, t.name)
            self.target.setItemData(self.target.count() - 1, t.help, 3)  # tooltip role
        if last_target and self.target.findData(last_target) >= 0:
            self.target.setCurrentIndex(self.target.findData(last_target))
        self.file = QLineEdit()
        self.file.setAccessibleName("Timeline file")
        browse = QPushButton("Browse…")
        browse.clicked.connect(self._browse)
        row = QHBoxLayout()
        row.addWidget(self.file, 1)
        row.addWidget(browse)
        form = QFormLayout(self)
        form.addRow(QLabel(f"{count(clips, 'clip')} as subclips of "
                           f"{Path(video).name}; the events and search results as markers."))
        form.addRow("Timeline for", self.target)
        form.addRow("File", row)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok
                                   | QDialogButtonBox.StandardButton.Cancel)
        buttons.button(QDialogButtonBox.StandardButton.Ok).setText("Write Timeline")
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        form.addRow(buttons)
        self.target.currentIndexChanged.connect(self._default_file)
        self._default_file()

    def _suffix(self) -> str:
        name = self.target.currentData()
        return next(t.suffix for t in TARGETS if t.name == name)

    def _default_file(self, *_: Any) -> None:
        path = Path(self.video)
        self.file.setText(str(path.with_name(f"{path.stem} {self.target.currentData()}"
                                             f"{self._suffix()}")))

    def _browse(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Timeline file", self.file.text(),
                                              f"Timeline (*{self._suffix()})")
        if path:
            self.file.setText(path)

    def choices(self) -> tuple[str, str]:
        return str(self.target.currentData()), self.file.text().strip()
