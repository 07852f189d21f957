"""Download a model through the model manager, exactly as `marlin-desk models pull` does:
free-space check, resumable (Download again after Cancel goes on where it stopped), every file
matched against the hub's checksums, progress with speed and time left. The window keeps
working meanwhile; the next model load uses the finished model without a restart. The list
holds the Marlin checkpoints, then the speech (Whisper) ones, which the next transcription
uses."""

from __future__ import annotations

import logging
import threading
from typing import Any

from PySide6.QtCore import QThread, Signal, Slot
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from marlin_desk.core.errors import Cancelled, MarlinError
from marlin_desk.models import (
    CATALOGUE,
    DEFAULT_MODEL,
    UNKNOWN_LICENCE,
    ModelManager,
    Progress,
    card_licence,
    human_size,
    is_offline,
)
from marlin_desk.models.catalogue import SPEECH_CATALOGUE, speech_entry

log = logging.getLogger(__name__)


def offline_message(model_id: str) -> str:
    """What to do when this machine cannot reach the hub, in an editor's words."""
    meanwhile = ("the bundled tiny.en transcribes English" if is_speech(model_id) else
                 "the bundled demo model runs")
    return (f"This computer has no connection to the model hub, so {model_id} cannot be "
            f"downloaded here. On a computer with a connection, run `marlin-desk models pull "
            f"{model_id}`, copy the folder that `marlin-desk models where {model_id}` names "
            f"(a USB stick will do), then on this computer run `marlin-desk models pull --from "
            f"FOLDER {model_id}`. Until then {meanwhile}.")


def is_speech(model_id: str) -> bool:
    return speech_entry(model_id) is not None


class _Pull(QThread):
    progress = Signal(object)  # models.Progress
    done = Signal(object)  # ModelStatus
    failed = Signal(str)
    cancelled = Signal()

    def __init__(self, manager: ModelManager, model_id: str, parent: QWidget | None = None
                 ) -> None:
        super().__init__(parent)
        self.manager, self.model_id = manager, model_id
        self.stop = threading.Event()

    def run(self) -> None:
        try:
            status = self.manager.pull(self.model_id, progress=self.progress.emit,
                                       cancel=self.stop)
        except Cancelled:
            self.cancelled.emit()
        except MarlinError as exc:
            log.warning("download of %s failed: %s", self.model_id, exc)
            self.failed.emit(str(exc))
        except Exception as exc:  # noqa: BLE001 - shown as words; details in the log
            log.exception("download of %s crashed", self.model_id)
            self.failed.emit(f"unexpected error: {exc}")
        else:
            self.done.emit(status)


class DownloadDialog(QDialog):
    downloaded = Signal(str)  # the model id, usable now

    def __init__(self, parent: QWidget | None = None, manager: ModelManager | None = None
                 ) -> None:
        super().__init__(parent)
        self.setWindowTitle("Download a model")
        self.manager = manager or ModelManager()
        self.model = QComboBox()
        self.model.setAccessibleName("Model")
        for entry in CATALOGUE:
            self.model.addItem(f"{entry.id} (about {entry.size_gb:g} GB; {entry.note})",
                               entry.id)
        self.model.insertSeparator(self.model.count())
        for entry in SPEECH_CATALOGUE:
            self.model.addItem(f"Speech: {entry.alias} — {entry.id} (about "
                               f"{entry.size_gb:g} GB; {entry.note})", entry.id)
        self.model.setCurrentIndex(next(i for i, e in enumerate(CATALOGUE)
                                        if e.id == DEFAULT_MODEL))
        self.licence = QLabel()
        self.licence.setWordWrap(True)
        self.licence.setAccessibleName("Licence")
        self.status = QLabel("The app keeps working while the model downloads; a cancelled "
                             "download goes on where it stopped.")
        self.status.setWordWrap(True)
        self.status.setAccessibleName("Download status")
        self.bar = QProgressBar()
        self.bar.setRange(0, 1000)
        self.bar.hide()
        self.start = QPushButton("Download")
        self.start.clicked.connect(self.start_download)
        self.cancel = QPushButton("Cancel Download")
        self.cancel.clicked.connect(self.cancel_download)
        self.cancel.setEnabled(False)
        close = QPushButton("Close")
        close.clicked.connect(self.close)
        row = QHBoxLayout()
        row.addStretch(1)
        for button in (self.start, self.cancel, close):
            row.addWidget(button)
        layout = QVBoxLayout(self)
        for widget in (self.model, self.licence, self.status, self.bar):
            layout.addWidget(widget)
        layout.addLayout(row)
        self.resize(620, 220)
        self._pull: _Pull | None = None
        self.model.currentIndexChanged.connect(self._show_licence)
        self._show_licence()

    def model_id(self) -> str:
        return str(self.model.currentData())

    def _show_licence(self, *_: Any) -> None:
        status = self.manager.status(self.model_id())
        licence = card_licence(status.folder) if status.usable else UNKNOWN_LICENCE
        self.licence.setText(f"Licence: {licence} (from the model card"
                             f"{'' if status.usable else ', once downloaded'}). "
                             f"State here: {status.state}.")

    @Slot()
    def start_download(self) -> None:
        model_id = self.model_id()
        if is_offline():
            self.status.setText(offline_message(model_id))
            return
        self.start.setEnabled(False)
        self.cancel.setEnabled(True)
        self.model.setEnabled(False)
        self.bar.show()
        self.status.setText(f"Starting the download of {model_id}…")
        self._pull = _Pull(self.manager, model_id, self)
        self._pull.progress.connect(self._on_progress)
        self._pull.done.connect(self._on_done)
        self._pull.failed.connect(self._on_failed)
        self._pull.cancelled.connect(self._on_cancelled)
        self._pull.start()

    @Slot()
    def cancel_download(self) -> None:
        if self._pull is not None:
            self._pull.stop.set()
            self.status.setText("Cancelling…")

    @Slot(object)
    def _on_progress(self, p: Progress) -> None:
        self.bar.setValue(int(p.fraction * 1000))
        speed = f", {human_size(p.speed_bps)}/s" if p.speed_bps else ""
        eta = f", about {p.eta_s:.0f} s left" if p.eta_s else ""
        self.status.setText(f"{p.phase}: {p.file or p.model_id} — {human_size(p.bytes_done)} "
                            f"of {human_size(p.bytes_total)}{speed}{eta}")

    def _finish(self, text: str) -> None:
        self.start.setEnabled(True)
        self.cancel.setEnabled(False)
        self.model.setEnabled(True)
        self.status.setText(text)
        self._show_licence()

    @Slot(object)
    def _on_done(self, status: Any) -> None:
        self.bar.setValue(1000)
        self._finish(f"{status.id} is downloaded and verified ({human_size(status.size_on_disk)}"
                     f" in {status.folder}).")
        self.downloaded.emit(status.id)

    @Slot(str)
    def _on_failed(self, message: str) -> None:
        self.bar.hide()
        offline = "offline" in message or "cannot be reached" in message
        self._finish(offline_message(self.model_id()) if offline else
                     f"The download failed: {message}")

    @Slot()
    def _on_cancelled(self) -> None:
        self._finish("Download cancelled. Download again to go on where it stopped.")

    def busy(self) -> bool:
        return self._pull is not None and self._pull.isRunning()

    def closeEvent(self, event: Any) -> None:  # noqa: N802
        if self.busy():
            self.hide()  # the download goes on; the thread is parented and finishes on its own
            event.ignore()
            return
        super().closeEvent(event)
