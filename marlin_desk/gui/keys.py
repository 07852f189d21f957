"""Keys go to the focused button first: Space and Return press it, as on every desktop, even
though Space is the window's Play/Pause shortcut (a window shortcut would win otherwise)."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QAbstractButton

PRESS_KEYS = (Qt.Key.Key_Space, Qt.Key.Key_Return, Qt.Key.Key_Enter)


class FocusedButtonKeys(QObject):
    """An application event filter; install it once with `app.installEventFilter`."""

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802
        kind = event.type()
        if kind not in (QEvent.Type.ShortcutOverride, QEvent.Type.KeyPress):
            return False
        if not isinstance(watched, QAbstractButton) or not isinstance(event, QKeyEvent):
            return False
        if event.key() not in PRESS_KEYS or event.modifiers() not in (
                Qt.KeyboardModifier.NoModifier, Qt.KeyboardModifier.KeypadModifier):
            return False
        if kind == QEvent.Type.ShortcutOverride:
            event.accept()  # the button takes the key: no shortcut fires
            return False
        if event.key() != Qt.Key.Key_Space:  # buttons outside dialogs ignore Return
            watched.animateClick()
            return True
        return False
