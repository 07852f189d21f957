"""A dismissable line at the top of the window for errors and notices."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QToolButton, QWidget


class MessageBar(QFrame):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("messageBar")
        self.label = QLabel(self)
        self.label.setWordWrap(True)
        self.label.setAccessibleName("Message")
        self.label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        close = QToolButton(self)
        close.setText("✕")
        close.setAccessibleName("Dismiss message")
        close.clicked.connect(self.hide)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(8, 4, 4, 4)
        layout.addWidget(self.label, 1)
        layout.addWidget(close)
        self.hide()

    def show_message(self, text: str, error: bool = True) -> None:
        colour = "#7a2630" if error else "#2d5a3d"
        self.setStyleSheet(f"#messageBar {{ background: {colour}; }} QLabel {{ color: white; }}")
        self.label.setText(text)
        self.show()
