"""The main window's widgets and where they sit: the player over the timeline in the middle,
the panels docked on the right (Search with Library, Events with Said, the clip bin), the model
and job status below. The behaviour is in the controllers the window wires to them."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDockWidget, QLabel, QSplitter, QVBoxLayout, QWidget

from marlin_desk.gui.panels.clips import ClipsPanel
from marlin_desk.gui.panels.events import EventsPanel
from marlin_desk.gui.panels.library import LibraryPanel
from marlin_desk.gui.panels.message_bar import MessageBar
from marlin_desk.gui.panels.search import SearchPanel
from marlin_desk.gui.panels.speech import SpeechPanel
from marlin_desk.gui.player import PlayerWidget
from marlin_desk.gui.statusbar import JobBar
from marlin_desk.gui.timeline import TimelineWidget


def build_views(w: Any) -> None:
    """The window's player, timeline, panels, docks and status bar, set as its attributes."""
    w.player = PlayerWidget(w)
    w.timeline = TimelineWidget(w)
    w.messages = MessageBar(w)
    w.events_panel = EventsPanel(w.doc, w)
    w.speech_panel = SpeechPanel(w.doc, w)
    w.search_panel = SearchPanel(w)
    w.clips_panel = ClipsPanel(w.doc, w)
    w.library_panel = LibraryPanel(w)
    w.search_panel.set_recent(w.settings.recent_queries())
    w.player.volume.setValue(int(w.settings.get("volume")))
    splitter = QSplitter(Qt.Orientation.Vertical, w)
    splitter.addWidget(w.player)
    splitter.addWidget(w.timeline)
    splitter.setStretchFactor(0, 3)
    splitter.setStretchFactor(1, 1)
    central = QWidget(w)
    col = QVBoxLayout(central)
    col.setContentsMargins(0, 0, 0, 0)
    col.setSpacing(0)
    col.addWidget(w.messages)
    col.addWidget(splitter, 1)
    w.setCentralWidget(central)
    right = Qt.DockWidgetArea.RightDockWidgetArea
    w.search_dock = _dock(w, "Search", w.search_panel, right)
    w.events_dock = _dock(w, "Events", w.events_panel, right)
    w.speech_dock = _dock(w, "Said", w.speech_panel, right)
    w.tabifyDockWidget(w.events_dock, w.speech_dock)
    w.events_dock.raise_()
    w.clips_dock = _dock(w, "Clip bin", w.clips_panel, right)
    w.library_dock = _dock(w, "Library", w.library_panel, right)
    w.tabifyDockWidget(w.search_dock, w.library_dock)
    w.search_dock.raise_()
    w.resizeDocks([w.search_dock, w.events_dock, w.clips_dock], [260, 300, 240],
                  Qt.Orientation.Vertical)
    w.resizeDocks([w.search_dock], [460], Qt.Orientation.Horizontal)
    w.model_label = QLabel("Model: not loaded yet")
    w.model_label.setAccessibleName("Model status")
    w.jobs = JobBar(w)
    w.notice = QLabel("")
    w.notice.setAccessibleName("Status message")
    w.statusBar().addWidget(w.model_label)
    w.statusBar().addWidget(w.notice, 1)
    w.statusBar().addPermanentWidget(w.jobs)


def _dock(w: Any, title: str, widget: QWidget, area: Qt.DockWidgetArea) -> QDockWidget:
    dock = QDockWidget(title, w)
    dock.setObjectName(f"dock-{title}")
    dock.setWidget(widget)
    dock.setAccessibleName(title)
    dock.setFeatures(QDockWidget.DockWidgetFeature.DockWidgetMovable
                     | QDockWidget.DockWidgetFeature.DockWidgetFloatable
                     | QDockWidget.DockWidgetFeature.DockWidgetClosable)
    w.addDockWidget(area, dock)
    return dock
