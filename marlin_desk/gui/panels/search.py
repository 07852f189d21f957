"""The search panel: type what you are looking for, press Enter, get ranked moments.

Clicking a result previews it (the main window seeks and loops the span); "Add as clip" sends
the selected spans to the clip bin. Recent queries are one click away.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from marlin_desk.core.timeline import Span
from marlin_desk.gui import timefmt
from marlin_desk.gui.timefmt import column_width, count, fmt_time


class SearchPanel(QWidget):
    queryRequested = Signal(str)
    resultActivated = Signal(int)
    addClipsRequested = Signal(list)  # result indexes

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.query = QLineEdit(self)
        self.query.setPlaceholderText("Describe the moment, e.g. “a dog jumps into the pool”")
        self.query.setAccessibleName("Search query")
        self.query.setClearButtonEnabled(True)
        self.query.returnPressed.connect(self._run)
        self.run_button = QPushButton("Find", self)
        self.run_button.setAccessibleName("Find")
        self.run_button.clicked.connect(self._run)
        self.recent = QComboBox(self)
        self.recent.setAccessibleName("Recent queries")
        self.recent.setPlaceholderText("Recent")
        self.recent.setMinimumWidth(90)
        self.recent.textActivated.connect(self._use_recent)
        self.results = QTreeWidget(self)
        self.results.setAccessibleName("Search results")
        self.results.setHeaderLabels(["#", "Start", "End", "Score"])
        self.results.setRootIsDecorated(False)
        self.results.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.results.setColumnWidth(0, 34)
        self.results.setColumnWidth(1, column_width(self.results))  # timecode fits
        self.results.setColumnWidth(2, column_width(self.results))
        self.results.itemClicked.connect(self._clicked)
        self.results.itemActivated.connect(self._clicked)
        self._spans: list[Span] = []  # the results shown, to show their times again
        timefmt.display.changed.connect(self._redisplay)
        self.add_button = QPushButton("Add as clip", self)
        self.add_button.setAccessibleName("Add result as clip")
        self.add_button.clicked.connect(self._add)
        self.status = QLabel("", self)
        self.status.setWordWrap(True)

        row = QHBoxLayout()
        row.addWidget(self.query, 1)
        row.addWidget(self.run_button)
        row.addWidget(self.recent)
        bottom = QHBoxLayout()
        bottom.addWidget(self.status, 1)
        bottom.addWidget(self.add_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addLayout(row)
        layout.addWidget(self.results, 1)
        layout.addLayout(bottom)

    def _run(self) -> None:
        text = self.query.text().strip()
        if text:
            self.queryRequested.emit(text)

    def _use_recent(self, text: str) -> None:
        self.query.setText(text)
        self._run()

    def set_recent(self, queries: list[str]) -> None:
        self.recent.blockSignals(True)
        self.recent.clear()
        self.recent.addItems(queries)
        self.recent.setCurrentIndex(-1)
        self.recent.blockSignals(False)

    def set_busy(self, busy: bool, message: str = "") -> None:
        self.run_button.setEnabled(not busy)
        self.status.setText(message)

    def set_results(self, query: str, spans: list[Span], seconds: float = 0.0,
                    cached: bool = False) -> None:
        self.results.clear()
        self._spans = list(spans)
        for i, s in enumerate(spans):
            score = "" if s.score is None else f"{s.score:.2f}"
            if s.low_confidence:
                score += " (low)"
            item = QTreeWidgetItem([str(i + 1), fmt_time(s.start), fmt_time(s.end), score])
            item.setData(0, Qt.ItemDataRole.UserRole, i)
            item.setToolTip(3, "the model's own confidence (log-probability); "
                               "“low” means it may be absent")
            self.results.addTopLevelItem(item)
        where = " (from the cache)" if cached else (f" in {seconds:.1f} s" if seconds else "")
        self.status.setText(f"{count(len(spans), 'moment')} for “{query}”{where}" if spans
                            else f"Nothing found for “{query}”{where}")

    @Slot()
    def _redisplay(self) -> None:
        """The time display changed: the same results, their times shown again."""
        for i, s in enumerate(self._spans):
            item = self.results.topLevelItem(i)
            if item is not None:
                item.setText(1, fmt_time(s.start))
                item.setText(2, fmt_time(s.end))

    def clear(self) -> None:
        """Another video opened: no results or status of the last one remain."""
        self.results.clear()
        self._spans = []
        self.status.setText("")
        self.run_button.setEnabled(True)

    def select(self, index: int) -> None:
        item = self.results.topLevelItem(index)
        if item is not None:
            self.results.setCurrentItem(item)

    def _clicked(self, item: QTreeWidgetItem, _column: int = 0) -> None:
        self.resultActivated.emit(int(item.data(0, Qt.ItemDataRole.UserRole)))

    def selected(self) -> list[int]:
        return sorted(int(i.data(0, Qt.ItemDataRole.UserRole))
                      for i in self.results.selectedItems())

    def _add(self) -> None:
        chosen = self.selected()
        if chosen:
            self.addClipsRequested.emit(chosen)
