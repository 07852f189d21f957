"""The keyboard shortcut sheet, built from the same table as the menus (gui/actions.py)."""

from __future__ import annotations

from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from marlin_desk.gui.actions import shortcut_sheet


class ShortcutsDialog(QDialog):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Keyboard shortcuts")
        rows = shortcut_sheet()
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
