"""The events table: start, end, description; editable in place. Edits become undo commands
(the table asks; the main window pushes the command), and they are what subtitles are made of."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QModelIndex, Qt, Signal
from PySide6.QtWidgets import (
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from marlin_desk.core.timeline import Event
from marlin_desk.gui.document import Document
from marlin_desk.gui.panels.doc_table import DocumentTable, Index, row_table
from marlin_desk.gui.timefmt import column_width, count, fmt_time, parse_time

COLUMNS = ("Start", "End", "Description")


class EventsModel(DocumentTable):
    columns = COLUMNS
    editRequested = Signal(int, object)  # row, new Event
    editRejected = Signal(str)

    def __init__(self, doc: Document) -> None:
        self.doc = doc
        super().__init__(doc.eventsChanged)

    def rows(self) -> list[Any]:
        return self.doc.events

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        e = self.doc.events[index.row()]
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.EditRole):
            return (fmt_time(e.start), fmt_time(e.end), e.description)[index.column()]
        if role == Qt.ItemDataRole.ToolTipRole and index.column() == 2:
            return e.description
        return None

    def flags(self, index: Index) -> Qt.ItemFlag:
        return super().flags(index) | Qt.ItemFlag.ItemIsEditable

    def setData(self, index: Index, value: Any,  # noqa: N802
                role: int = Qt.ItemDataRole.EditRole) -> bool:
        if role != Qt.ItemDataRole.EditRole or not index.isValid():
            return False
        e = self.doc.events[index.row()]
        try:
            if index.column() == 0:
                new = Event(parse_time(str(value)), e.end, e.description)
            elif index.column() == 1:
                new = Event(e.start, parse_time(str(value)), e.description)
            else:
                new = Event(e.start, e.end, str(value).strip())
        except ValueError as exc:
            self.editRejected.emit(str(exc))
            return False
        if new.end <= new.start:
            self.editRejected.emit("an event must end after it starts")
            return False
        if new != e:
            self.editRequested.emit(index.row(), new)
        return True


class EventsPanel(QWidget):
    eventSelected = Signal(int)
    addRequested = Signal()  # at the I/O marks when set, else at the playhead
    deleteRequested = Signal(list)  # rows

    def __init__(self, doc: Document, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = EventsModel(doc)
        self.table = row_table(self.model, "Events", self)
        self.table.setAlternatingRowColors(True)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)
        self.table.setColumnWidth(0, column_width(self.table))  # timecode fits
        self.table.setColumnWidth(1, column_width(self.table))
        self.count = QLabel("No events yet: open a video and analyse it.")
        self.add_button = QPushButton("Add", self)
        self.add_button.setToolTip("Add an event from the In/Out marks, or at the playhead")
        self.add_button.setAccessibleName("Add an event")
        self.add_button.clicked.connect(self.addRequested.emit)
        self.delete_button = QPushButton("Delete", self)
        self.delete_button.setToolTip("Delete the selected events")
        self.delete_button.setAccessibleName("Delete the selected events")
        self.delete_button.clicked.connect(self._delete)
        row = QHBoxLayout()
        row.addWidget(self.add_button)
        row.addWidget(self.delete_button)
        row.addWidget(self.count, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addWidget(self.table)
        layout.addLayout(row)
        self.table.selectionModel().currentRowChanged.connect(self._on_row)
        doc.eventsChanged.connect(self._on_events)
        self._syncing = False

    def _on_events(self) -> None:
        n = self.model.rowCount()
        self.count.setText(count(n, "event") if n else "No events yet.")

    def _on_row(self, current: QModelIndex, _previous: QModelIndex) -> None:
        if current.isValid() and not self._syncing:
            self.eventSelected.emit(current.row())

    def select(self, row: int) -> None:
        """Select a row without echoing the selection back (timeline → table sync)."""
        if not 0 <= row < self.model.rowCount():
            return
        self._syncing = True
        try:
            self.table.selectRow(row)
            self.table.scrollTo(self.model.index(row, 0))
        finally:
            self._syncing = False

    def selected_row(self) -> int | None:
        rows = self.selected_rows()
        return rows[0] if rows else None

    def selected_rows(self) -> list[int]:
        return sorted(i.row() for i in self.table.selectionModel().selectedRows())

    def _delete(self) -> None:
        rows = self.selected_rows()
        if rows:
            self.deleteRequested.emit(rows)
