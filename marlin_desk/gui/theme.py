"""Dark (default) and light themes: a Fusion palette plus the timeline's own colours."""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QApplication


@dataclass(frozen=True)
class TimelineColours:
    """Colours the custom-painted timeline uses (kept here so both themes stay consistent)."""

    background: str
    lane: str
    ruler: str
    text: str
    grid: str
    event: str
    event_selected: str
    result: str
    clip: str
    clip_selected: str
    playhead: str
    wave: str
    marks: str
    speech: str = "#b07cc6"  # the "Said" lane's words



DARK = TimelineColours("#1b1d22", "#23262d", "#2b2f37", "#d7dae0", "#3a3f4b", "#3d7bd9",
                       "#f2b134", "#e0566b", "#3fb68b", "#8fe3c4", "#ff4d4d", "#6fa8dc",
                       "#c792ea")
LIGHT = TimelineColours("#f4f5f7", "#e8eaee", "#dfe2e8", "#22252b", "#c3c8d2", "#2f6fd0",
                        "#d48806", "#c8324a", "#21946b", "#5fcfa5", "#e02020", "#3d6fb0",
                        "#8e44ad")
_current = DARK


def colours() -> TimelineColours:
    return _current


def apply_theme(app: QApplication, name: str = "dark") -> None:
    """Fusion style with a dark or light palette; unknown names fall back to dark."""
    global _current
    app.setStyle("Fusion")
    pal = QPalette()
    if name == "light":
        _current = LIGHT
        app.setPalette(app.style().standardPalette())
        app.setStyleSheet("")
        return
    _current = DARK
    base, window, text = QColor("#1e2026"), QColor("#262930"), QColor("#e1e4ea")
    pal.setColor(QPalette.ColorRole.Window, window)
    pal.setColor(QPalette.ColorRole.WindowText, text)
    pal.setColor(QPalette.ColorRole.Base, base)
    pal.setColor(QPalette.ColorRole.AlternateBase, QColor("#2a2d35"))
    pal.setColor(QPalette.ColorRole.ToolTipBase, QColor("#33363f"))
    pal.setColor(QPalette.ColorRole.ToolTipText, text)
    pal.setColor(QPalette.ColorRole.Text, text)
    pal.setColor(QPalette.ColorRole.Button, QColor("#30333b"))
    pal.setColor(QPalette.ColorRole.ButtonText, text)
    pal.setColor(QPalette.ColorRole.BrightText, QColor("#ff5555"))
    pal.setColor(QPalette.ColorRole.Highlight, QColor("#3d7bd9"))
    pal.setColor(QPalette.ColorRole.HighlightedText, QColor("#ffffff"))
    pal.setColor(QPalette.ColorRole.PlaceholderText, QColor("#8a8f9a"))
    for role in (QPalette.ColorRole.Text, QPalette.ColorRole.ButtonText,
                 QPalette.ColorRole.WindowText):
        pal.setColor(QPalette.ColorGroup.Disabled, role, QColor("#6b7080"))
    app.setPalette(pal)
    app.setStyleSheet(
        "QToolTip { color: #e1e4ea; background: #33363f; border: 1px solid #4a4f5c; }"
        "QDockWidget::title { background: #2b2f37; padding: 4px; }"
        "QStatusBar { background: #1b1d22; }"
    )
