"""The keyboard shortcut sheet, built from the window's actions so it is never out of date."""

from __future__ import annotations

from collections.abc import Iterable

from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)


def shortcut_rows(actions: Iterable[QAction]) -> list[tuple[str, str]]:
    rows = []
    for a in actions:
        key = a.shortcut().toString(QKeySequence.SequenceFormat.NativeText)
        if key:
            rows.append((a.text().replace("&", ""), key))
    return sorted(set(rows))


class ShortcutsDialog(QDialog):
    def __init__(self, actions: Iterable[QAction], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Keyboard shortcuts")
        rows = shortcut_rows(actions)
        table = QTableWidget(len(rows), 2, self)
        table.setAccessibleName("Keyboard shortcuts")
        table.setHorizontalHeaderLabels(["Action", "Keys"])
        for i, (text, key) in enumerate(rows):
            table.setItem(i, 0, QTableWidgetItem(text))
            table.setItem(i, 1, QTableWidgetItem(key))
        table.resizeColumnsToContents()
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(table)
        layout.addWidget(buttons)
        self.resize(420, 520)
