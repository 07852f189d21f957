"""The part every document-backed table model shares: rows from one of the document's lists,
fixed column titles, a reset whenever that list changes, and a repaint when the time display
(seconds or timecode) changes; and the view the panels show them in (`row_table`)."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt, Slot
from PySide6.QtWidgets import QAbstractItemView, QTableView, QWidget

from marlin_desk.gui import timefmt

Index = QModelIndex | QPersistentModelIndex


class DocumentTable(QAbstractTableModel):
    columns: tuple[str, ...] = ()

    def __init__(self, changed: Any) -> None:
        super().__init__()
        changed.connect(self._reset)
        timefmt.display.changed.connect(self._redisplay)

    def rows(self) -> list[Any]:
        """The document's list this table shows."""
        raise NotImplementedError

    def _reset(self) -> None:
        self.beginResetModel()
        self.endResetModel()

    @Slot()
    def _redisplay(self) -> None:
        """The same rows, every cell shown again (times in the new display)."""
        rows, cols = self.rowCount(), self.columnCount()
        if rows and cols:
            self.dataChanged.emit(self.index(0, 0), self.index(rows - 1, cols - 1))

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: N802, B008
        return 0 if parent.isValid() else len(self.rows())

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: N802, B008
        return 0 if parent.isValid() else len(self.columns)

    def headerData(self, section: int, orientation: Qt.Orientation,  # noqa: N802
                   role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if role == Qt.ItemDataRole.DisplayRole and orientation == Qt.Orientation.Horizontal:
            return self.columns[section]
        return None


def row_table(model: QAbstractTableModel, name: str, parent: QWidget) -> QTableView:
    """A table of whole rows (several can be selected), compact, without row numbers."""
    table = QTableView(parent)
    table.setModel(model)
    table.setAccessibleName(name)
    table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    table.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
    table.verticalHeader().setVisible(False)
    table.verticalHeader().setDefaultSectionSize(22)
    return table
