"""The clip bin: clips from events, find results or I/O marks. Rename, retime, reorder, delete,
choose a preset, and send the selection to export. Changes are requested by signal and applied
as undo commands by the main window."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import QMimeData, QModelIndex, Qt, QUrl, Signal, Slot
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QStyledItemDelegate,
    QVBoxLayout,
    QWidget,
)

from marlin_desk.core.reframe import REFRAME_LABELS, REFRAME_MODES
from marlin_desk.gui import timefmt
from marlin_desk.gui.document import Document
from marlin_desk.gui.panels.doc_table import DocumentTable, Index, row_table
from marlin_desk.gui.panels.export_progress import ExportProgress
from marlin_desk.gui.timefmt import column_width, count, fmt_time, parse_time
from marlin_desk.media.presets import PRESETS, get_preset
from marlin_desk.media.reframe import can_reframe, default_mode

COLUMNS = ("Name", "In", "Out", "Length", "Preset", "Video", "Reframe")
REFRAME_COLUMN = 6
# The Reframe column's choices: the preset's default (None), then the core's modes.
REFRAME_CHOICES: tuple[tuple[str | None, str], ...] = (
    (None, "Default"), *((m, REFRAME_LABELS[m]) for m in REFRAME_MODES))


def preset_names() -> list[str]:
    return list(PRESETS)


def preset_label(name: str) -> str:
    """How a preset is shown ("Reels / Shorts 9:16"), by its id ("reels")."""
    preset = PRESETS.get(name)
    return preset.label if preset is not None else name


class ClipsModel(DocumentTable):
    columns = COLUMNS
    renameRequested = Signal(str, str)
    timesRequested = Signal(str, float, float)
    presetRequested = Signal(str, str)
    reframeRequested = Signal(str, object)  # clip id, mode or None (the preset's default)
    editRejected = Signal(str)
    exportForDragRequested = Signal(list)  # clip ids dragged before they were exported

    def __init__(self, doc: Document) -> None:
        self.doc = doc
        self.exported: dict[str, Path] = {}  # clip id -> its last exported file
        super().__init__(doc.clipsChanged)

    def rows(self) -> list[Any]:
        return self.doc.clips

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        c = self.doc.clips[index.row()]
        if role == Qt.ItemDataRole.DisplayRole and index.column() == 4:
            return preset_label(c.preset)
        if index.column() == 5:  # the file it is cut from: blank for the open video's own
            if role == Qt.ItemDataRole.DisplayRole:
                return Path(c.video).name if c.video else ""
            if role == Qt.ItemDataRole.ToolTipRole and c.video:
                return f"cut from {c.video} (exported from that file)"
            return None
        if index.column() == REFRAME_COLUMN:
            return self._reframe_data(c, role)
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.EditRole):
            return (c.name, fmt_time(c.start), fmt_time(c.end), fmt_time(c.duration),
                    c.preset)[index.column()]
        if role == Qt.ItemDataRole.UserRole:
            return c.id
        if role == Qt.ItemDataRole.ToolTipRole:
            return f"from {c.source}"
        return None

    def _reframe_data(self, c: Any, role: int) -> Any:
        """The clip's reframing mode: its own, or the preset's default and what that is here
        (media.reframe decides it); a dash where the preset keeps the source's aspect."""
        if role == Qt.ItemDataRole.EditRole:
            return c.reframe
        info = self.doc.info if not c.video else None
        preset = get_preset(c.preset)
        applies = info is None or can_reframe(preset, info, preset.fill)
        mode = c.reframe or (default_mode(preset, info, preset.fill) if info else None)
        if role == Qt.ItemDataRole.DisplayRole:  # the short name: the column is narrow
            if not applies:
                return "—"
            if mode is None:
                return "Default"
            return mode.capitalize() + ("" if c.reframe else " (default)")
        if role == Qt.ItemDataRole.ToolTipRole:
            if not applies:
                return "the preset keeps the source's aspect: nothing to reframe"
            held = sum(p.until is not None for p in c.pins)
            pins = ", ".join(([count(len(c.pins) - held, "pin")] if len(c.pins) > held else [])
                             + ([count(held, "held shot")] if held else []))
            pins = f", {pins}" if pins else ""
            label = REFRAME_LABELS[mode] if mode else "the preset's default"
            return f"reframing: {label}{pins}"
        return None

    def flags(self, index: Index) -> Qt.ItemFlag:
        flags = super().flags(index) | Qt.ItemFlag.ItemIsDragEnabled
        return flags if index.column() in (3, 5) else flags | Qt.ItemFlag.ItemIsEditable

    def mimeTypes(self) -> list[str]:  # noqa: N802
        return ["text/uri-list", "text/plain"]

    def mimeData(self, indexes: list[QModelIndex]) -> QMimeData:  # noqa: N802
        """A clip dragged out is its exported file (a file manager copies it, an NLE imports
        it). Clips not exported yet are exported now, to be dragged again when done."""
        ids = list(dict.fromkeys(self.doc.clips[i.row()].id for i in indexes
                                 if i.row() < len(self.doc.clips)))
        files = [self.exported[i] for i in ids if i in self.exported and
                 self.exported[i].is_file()]
        missing = [i for i in ids if i not in self.exported or not self.exported[i].is_file()]
        data = QMimeData()
        data.setUrls([QUrl.fromLocalFile(str(f)) for f in files])
        data.setText("\n".join(str(f) for f in files))
        if missing:
            self.exportForDragRequested.emit(missing)
        return data

    def setData(self, index: Index, value: Any,  # noqa: N802
                role: int = Qt.ItemDataRole.EditRole) -> bool:
        if role != Qt.ItemDataRole.EditRole or not index.isValid():
            return False
        c = self.doc.clips[index.row()]
        col = index.column()
        if col == 0:
            if str(value) != c.name:
                self.renameRequested.emit(c.id, str(value).strip())
            return True
        if col == REFRAME_COLUMN:
            mode = value or None
            if mode != c.reframe:
                self.reframeRequested.emit(c.id, mode)
            return True
        if col == 4:
            if str(value) != c.preset:
                self.presetRequested.emit(c.id, str(value))
            return True
        try:
            t = parse_time(str(value))
        except ValueError as exc:
            self.editRejected.emit(str(exc))
            return False
        start, end = (t, c.end) if col == 1 else (c.start, t)
        if end <= start:
            self.editRejected.emit("a clip must end after it starts")
            return False
        self.timesRequested.emit(c.id, start, end)
        return True


class ChoiceDelegate(QStyledItemDelegate):
    """A drop-down of fixed (value, label) choices for one column (Preset, Reframe)."""

    def __init__(self, choices: list[tuple[Any, str]], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.choices = choices

    def createEditor(self, parent: QWidget, option: Any, index: QModelIndex) -> QWidget:  # noqa: N802
        box = QComboBox(parent)
        for value, label in self.choices:
            box.addItem(label, value)
        return box

    def setEditorData(self, editor: QWidget, index: QModelIndex) -> None:  # noqa: N802
        assert isinstance(editor, QComboBox)
        editor.setCurrentIndex(max(0, editor.findData(index.data(Qt.ItemDataRole.EditRole))))

    def setModelData(self, editor: QWidget, model: Any, index: QModelIndex) -> None:  # noqa: N802
        assert isinstance(editor, QComboBox)
        model.setData(index, editor.currentData(), Qt.ItemDataRole.EditRole)


class ClipsPanel(QWidget):
    clipActivated = Signal(str)
    moveRequested = Signal(str, int)  # clip id, +1 / -1
    deleteRequested = Signal(list)
    exportRequested = Signal(list)
    addFromMarksRequested = Signal()

    def __init__(self, doc: Document, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.doc = doc
        self.model = ClipsModel(doc)
        self.table = row_table(self.model, "Clip bin", self)
        presets = [(name, preset_label(name)) for name in preset_names()]
        self.table.setItemDelegateForColumn(4, ChoiceDelegate(presets, self.table))
        self.table.setItemDelegateForColumn(REFRAME_COLUMN,
                                            ChoiceDelegate(list(REFRAME_CHOICES), self.table))
        self.table.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        times = column_width(self.table)  # timecode fits
        for col, width in ((1, times), (2, times), (3, times), (4, 80), (5, 90),
                           (REFRAME_COLUMN, 120)):
            self.table.setColumnWidth(col, width)
        self.table.clicked.connect(self._clicked)
        self.table.setDragEnabled(True)
        self.table.setDragDropMode(QAbstractItemView.DragDropMode.DragOnly)

        def button(text: str, tip: str, slot: Any) -> QPushButton:
            b = QPushButton(text, self)
            b.setToolTip(tip)
            b.setAccessibleName(tip)
            b.clicked.connect(slot)
            return b

        self.add_button = button("Add I/O", "Add a clip from the In and Out marks (I, O)",
                                 self.addFromMarksRequested.emit)
        self.up_button = button("▲", "Move the clip up", lambda: self._move(-1))
        self.down_button = button("▼", "Move the clip down", lambda: self._move(1))
        self.delete_button = button("Delete", "Delete the selected clips", self._delete)
        self.export_button = button("Export…", "Export the selected clips (all if none)",
                                    self._export)
        self.summary = QLabel("No clips yet: press I and O, or add events and find results.")
        self.summary.setWordWrap(True)
        row = QHBoxLayout()
        for b in (self.add_button, self.up_button, self.down_button, self.delete_button):
            row.addWidget(b)
        row.addStretch(1)
        row.addWidget(self.export_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addWidget(self.table, 1)
        layout.addLayout(row)
        layout.addWidget(self.summary)
        self.export_progress = ExportProgress(self)
        layout.addWidget(self.export_progress)
        doc.clipsChanged.connect(self._update_summary)
        # the model resets on every clip edit: the rows selected before stay selected (a pin
        # dragged or a preset chosen does not drop the clip the editor is working on)
        self._kept: list[str] = []
        self.model.modelAboutToBeReset.connect(self._keep_selection)
        self.model.modelReset.connect(self._restore_selection)
        timefmt.display.changed.connect(self._update_summary)

    @Slot()
    def _update_summary(self) -> None:
        clips = self.doc.clips
        total = sum(c.duration for c in clips)
        self.summary.setText(f"{count(len(clips), 'clip')}, {fmt_time(total)} in all" if clips
                             else "No clips yet.")

    @Slot()
    def _keep_selection(self) -> None:
        self._kept = self.selected_ids()

    @Slot()
    def _restore_selection(self) -> None:
        kept, self._kept = set(self._kept), []
        selection = self.table.selectionModel()
        flags = selection.SelectionFlag.Select | selection.SelectionFlag.Rows
        for row, c in enumerate(self.doc.clips):
            if c.id in kept:
                selection.select(self.model.index(row, 0), flags)

    def selected_ids(self) -> list[str]:
        rows = sorted(i.row() for i in self.table.selectionModel().selectedRows())
        return [self.doc.clips[r].id for r in rows if r < len(self.doc.clips)]

    def select_id(self, clip_id: str) -> None:
        for row, c in enumerate(self.doc.clips):
            if c.id == clip_id:
                self.table.selectRow(row)
                return

    def _clicked(self, index: QModelIndex) -> None:
        if index.isValid():
            self.clipActivated.emit(self.doc.clips[index.row()].id)

    def _move(self, delta: int) -> None:
        ids = self.selected_ids()
        if len(ids) == 1:
            self.moveRequested.emit(ids[0], delta)
            self.select_id(ids[0])

    def _delete(self) -> None:
        ids = self.selected_ids()
        if ids:
            self.deleteRequested.emit(ids)

    def _export(self) -> None:
        self.exportRequested.emit(self.selected_ids() or [c.id for c in self.doc.clips])
