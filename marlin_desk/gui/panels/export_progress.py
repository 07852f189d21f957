"""Export progress under the clip bin: one row per clip (bar, status, cancel) and an overall bar
with Cancel all. Hidden when no export has run; the last export's outcome stays until the next."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

STATUS_TEXT = {"done": "done", "cancelled": "cancelled", "failed": "failed"}


class ExportProgress(QWidget):
    cancelClip = Signal(int)  # 0-based clip index
    cancelAll = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.overall = QProgressBar(self)
        self.overall.setRange(0, 1000)
        self.overall.setAccessibleName("Export progress")
        self.overall.setFormat("Export %p%")
        self.cancel_all = QPushButton("Cancel all", self)
        self.cancel_all.setAccessibleName("Cancel the whole export")
        self.cancel_all.clicked.connect(self.cancelAll.emit)
        self.close_button = QToolButton(self)
        self.close_button.setText("✕")
        self.close_button.setAccessibleName("Hide export progress")
        self.close_button.clicked.connect(self.hide)
        top = QHBoxLayout()
        top.setContentsMargins(0, 0, 0, 0)
        top.addWidget(self.overall, 1)
        top.addWidget(self.cancel_all)
        top.addWidget(self.close_button)
        self.grid = QGridLayout()
        self.grid.setContentsMargins(0, 0, 0, 0)
        self.grid.setColumnStretch(1, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 2, 0, 2)
        layout.addLayout(top)
        layout.addLayout(self.grid)
        self.bars: list[QProgressBar] = []
        self.states: list[QLabel] = []
        self.cancels: list[QToolButton] = []
        self._row_widgets: list[QWidget] = []
        self.running = False
        self.hide()

    def clear(self) -> None:
        """Forget the last export's rows (another video opened); hidden until the next one."""
        if self.running:
            return  # an export of the last video still runs: its rows stay until it ends
        for w in self._row_widgets:
            self.grid.removeWidget(w)
            w.deleteLater()
        self._row_widgets, self.bars, self.states, self.cancels = [], [], [], []
        self.hide()

    def start(self, names: list[str]) -> None:
        self.running = False
        self.clear()
        for i, name in enumerate(names):
            label = QLabel(name or f"clip {i + 1}", self)
            label.setMaximumWidth(160)
            bar = QProgressBar(self)
            bar.setRange(0, 1000)
            bar.setMaximumHeight(14)
            bar.setTextVisible(False)
            bar.setAccessibleName(f"Progress of clip {i + 1}")
            state = QLabel("waiting", self)
            cancel = QToolButton(self)
            cancel.setText("✕")
            cancel.setToolTip("Cancel this clip")
            cancel.setAccessibleName(f"Cancel clip {i + 1}")
            cancel.clicked.connect(lambda _=False, i=i: self._cancel(i))
            for col, w in enumerate((label, bar, state, cancel)):
                self.grid.addWidget(w, i, col)
                self._row_widgets.append(w)
            self.bars.append(bar)
            self.states.append(state)
            self.cancels.append(cancel)
        self.overall.setValue(0)
        self.cancel_all.setEnabled(True)
        self.running = True
        self.show()

    def _cancel(self, index: int) -> None:
        self.cancels[index].setEnabled(False)
        self.states[index].setText("cancelling…")
        self.cancelClip.emit(index)

    def set_progress(self, index: int, clip: float, overall: float) -> None:
        self.overall.setValue(int(max(0.0, min(1.0, overall)) * 1000))
        if 0 <= index < len(self.bars):
            self.bars[index].setValue(int(max(0.0, min(1.0, clip)) * 1000))
            if 0.0 < clip < 1.0 and self.cancels[index].isEnabled():
                self.states[index].setText(f"{clip:.0%}")

    def set_result(self, result: Any) -> None:
        i = int(result.index) - 1  # ExportResult.index is 1-based
        if not 0 <= i < len(self.bars):
            return
        self.states[i].setText(STATUS_TEXT.get(result.status, str(result.status)))
        if result.status == "done":
            self.bars[i].setValue(1000)
        if result.error:
            self.states[i].setToolTip(str(result.error))
        self.cancels[i].setEnabled(False)

    def finish(self) -> None:
        self.running = False
        self.cancel_all.setEnabled(False)
        for i, b in enumerate(self.cancels):
            b.setEnabled(False)
            if self.states[i].text() in ("waiting", "cancelling…"):
                self.states[i].setText("cancelled")

    def status(self, index: int) -> str:
        return self.states[index].text()
