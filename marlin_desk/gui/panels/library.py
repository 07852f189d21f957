"""The Library panel: one search box over every analysed video (the full-text index: no model,
milliseconds; refined by the model when one is loaded), the folders' videos with their state and
the analysis queue (library_videos). Double-click a result to open its video at the moment."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtGui import QIcon, QImage, QPixmap
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from marlin_desk.gui.hit_thumbnails import THUMB_HEIGHT
from marlin_desk.gui.panels.library_videos import LibraryVideos
from marlin_desk.gui.timefmt import count, fmt_time


class LibraryPanel(QWidget):
    addFolderRequested = Signal(str)
    rescanRequested = Signal()
    searchRequested = Signal(str)
    hitActivated = Signal(str, float, float)  # video path, start, end
    addHitsRequested = Signal(list)  # rows of the results, to become clips
    videoActivated = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.query = QLineEdit()
        self.query.setPlaceholderText("Search every video, e.g. “a dog jumps into the pool”")
        self.query.setAccessibleName("Library search")
        self.query.returnPressed.connect(self._search)
        search = QPushButton("Search Library")
        search.clicked.connect(self._search)
        self.add_hits_button = QPushButton("Add to Clip Bin")
        self.add_hits_button.setToolTip("The selected results become clips (from any video)")
        self.add_hits_button.clicked.connect(self._add_hits)
        add = QPushButton("Add Folder…")
        add.clicked.connect(self._add_folder)
        rescan = QPushButton("Rescan")
        rescan.clicked.connect(self.rescanRequested.emit)
        self.status = QLabel("")
        self.status.setWordWrap(True)
        self.status.setAccessibleName("Library status")
        self.hits = QTreeWidget()
        self.hits.setHeaderLabels(["Video", "Start", "End", "What", "From"])
        self.hits.setAccessibleName("Library results")
        self.hits.setRootIsDecorated(False)
        self.hits.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.hits.itemActivated.connect(self._hit_activated)
        self.hits.setIconSize(QSize(72, THUMB_HEIGHT))
        self.hits.setColumnWidth(0, 72 + 140)  # the picture and the file's name beside it
        self.video_list = LibraryVideos()
        self.videos = self.video_list.tree
        self.video_list.videoActivated.connect(self.videoActivated)
        row = QHBoxLayout()
        row.addWidget(self.query, 1)
        row.addWidget(search)
        row.addWidget(self.add_hits_button)
        buttons = QHBoxLayout()
        buttons.addWidget(add)
        buttons.addWidget(rescan)
        buttons.addStretch(1)
        layout = QVBoxLayout(self)
        layout.addLayout(row)
        layout.addWidget(self.hits, 2)
        layout.addWidget(self.status)
        layout.addLayout(buttons)
        layout.addWidget(self.video_list, 1)

    def _search(self) -> None:
        if self.query.text().strip():
            self.searchRequested.emit(self.query.text().strip())

    def _add_hits(self) -> None:
        rows = sorted(self.hits.indexOfTopLevelItem(i) for i in self.hits.selectedItems())
        self.addHitsRequested.emit(rows)

    def _add_folder(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Add a folder of videos")
        if folder:
            self.addFolderRequested.emit(folder)

    def _hit_activated(self, item: QTreeWidgetItem, _column: int = 0) -> None:
        path, start, end = item.data(0, Qt.ItemDataRole.UserRole)
        self.hitActivated.emit(path, float(start), float(end))

    def show_videos(self, videos: list[Any]) -> None:
        self.video_list.show_videos(videos)

    def set_thumbnail(self, row: int, image: QImage) -> None:
        item = self.hits.topLevelItem(row)
        if item is not None:
            item.setIcon(0, QIcon(QPixmap.fromImage(image)))

    def show_hits(self, result: Any) -> None:
        self.hits.clear()
        for h in result.hits:
            item = QTreeWidgetItem([Path(h.path).name, fmt_time(h.start), fmt_time(h.end),
                                    h.text, "model" if h.stage == "model" else "index"])
            item.setData(0, Qt.ItemDataRole.UserRole, (h.path, h.start, h.end))
            item.setToolTip(0, h.path + ("" if h.online else " (offline)"))
            self.hits.addTopLevelItem(item)
        found = count(len(result.hits), "moment")
        self.status.setText(f"{found} for “{result.query}” in {result.index_ms:.0f} ms"
                            if result.hits else f"Nothing in the library for “{result.query}”")
