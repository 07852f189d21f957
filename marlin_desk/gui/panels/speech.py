"""The "Said" table: what is said in the open video, sentence by sentence (the transcript's
segments) with their times. Click a row to go there; selected rows become clips; Transcribe
asks for the transcript when there is none."""

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

from marlin_desk.gui.document import Document
from marlin_desk.gui.panels.doc_table import DocumentTable, Index, row_table
from marlin_desk.gui.timefmt import column_width, count, fmt_time

COLUMNS = ("Start", "End", "Said")


class SpeechModel(DocumentTable):
    columns = COLUMNS

    def __init__(self, doc: Document) -> None:
        self.doc = doc
        super().__init__(doc.transcriptChanged)

    def rows(self) -> list[Any]:
        return list(self.doc.transcript.segments) if self.doc.transcript is not None else []

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or index.row() >= len(self.rows()):
            return None
        s = self.rows()[index.row()]
        if role == Qt.ItemDataRole.DisplayRole:
            return (fmt_time(s.start), fmt_time(s.end), s.text.strip())[index.column()]
        if role == Qt.ItemDataRole.ToolTipRole and index.column() == 2:
            return s.text.strip()
        return None


class SpeechPanel(QWidget):
    seekRequested = Signal(float)
    transcribeRequested = Signal()
    clipsRequested = Signal(list)  # (start, end, text) of the selected sentences

    def __init__(self, doc: Document, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.doc = doc
        self.model = SpeechModel(doc)
        self.table = row_table(self.model, "What is said", self)
        self.table.horizontalHeader().setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)
        for col in (0, 1):
            self.table.setColumnWidth(col, column_width(self.table))
        self.table.clicked.connect(self._clicked)
        self.transcribe_button = QPushButton("Transcribe")
        self.transcribe_button.setToolTip("What is said, word by word (Ctrl+T)")
        self.transcribe_button.clicked.connect(self.transcribeRequested.emit)
        self.clip_button = QPushButton("Add as Clips")
        self.clip_button.setToolTip("The selected sentences become clips")
        self.clip_button.clicked.connect(self._clips)
        self.summary = QLabel("Not transcribed yet.")
        self.summary.setWordWrap(True)
        row = QHBoxLayout()
        row.addWidget(self.transcribe_button)
        row.addWidget(self.clip_button)
        row.addWidget(self.summary, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addWidget(self.table, 1)
        layout.addLayout(row)
        doc.transcriptChanged.connect(self._update_summary)

    def _update_summary(self) -> None:
        t = self.doc.transcript
        if t is None:
            self.summary.setText("Not transcribed yet." if self.doc.video else "")
        elif not t.segments:
            self.summary.setText(t.note or "Nothing is said.")
        else:
            lang = f" ({t.language})" if t.language else ""
            self.summary.setText(f"{count(len(t.words), 'word')} in "
                                 f"{count(len(t.segments), 'sentence')}{lang}")

    def _clicked(self, index: QModelIndex) -> None:
        rows = self.model.rows()
        if index.isValid() and index.row() < len(rows):
            self.seekRequested.emit(rows[index.row()].start)

    def _clips(self) -> None:
        rows = self.model.rows()
        picked = sorted({i.row() for i in self.table.selectionModel().selectedRows()})
        self.clipsRequested.emit([(rows[r].start, rows[r].end, rows[r].text.strip())
                                  for r in picked if r < len(rows)])
