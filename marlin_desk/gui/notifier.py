"""Telling the editor things: errors and notices in the message bar, transient lines in the
status bar, everything in the log. Every controller reports through one of these; nothing
here ends the app."""

from __future__ import annotations

import logging

from PySide6.QtCore import QObject, QTimer, Signal, Slot
from PySide6.QtWidgets import QLabel

from marlin_desk.gui.panels.message_bar import MessageBar

log = logging.getLogger(__name__)


class Notifier(QObject):
    errorShown = Signal(str)

    def __init__(self, bar: MessageBar, status: QLabel, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.bar, self.status = bar, status
        self.errors: list[str] = []
        self.last_error = ""
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.timeout.connect(status.clear)

    @Slot(str)
    def error(self, message: str) -> None:
        """Plain words in the window and in the log; never a crash."""
        log.warning("shown to the user: %s", message)
        self.last_error = message
        self.errors.append(message)
        self.bar.show_message(message, error=True)
        self.transient(message, 10_000)
        self.errorShown.emit(message)

    @Slot(str)
    def notice(self, message: str) -> None:
        log.info("%s", message)
        self.bar.show_message(message, error=False)
        self.transient(message, 8_000)

    def transient(self, message: str, ms: int = 8000) -> None:
        """A line in the status bar that clears itself (beside the model description)."""
        self.status.setText(message)
        self._timer.start(ms)

    def clear(self) -> None:
        self.bar.hide()
        self.status.clear()
        self.last_error = ""
