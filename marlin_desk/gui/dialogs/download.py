"""Download Marlin-2B from the hub on a worker thread (the window keeps working)."""

from __future__ import annotations

import logging

from PySide6.QtCore import QThread, Signal
from PySide6.QtWidgets import (
    QDialog,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QProgressBar,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

log = logging.getLogger(__name__)


class _Download(QThread):
    done = Signal(str)
    failed = Signal(str)

    def __init__(self, model: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = model

    def run(self) -> None:
        try:
            from huggingface_hub import snapshot_download

            folder = snapshot_download(self.model, allow_patterns=[
                "*.json", "*.safetensors", "*.jinja", "*.txt", "*.model"])
        except Exception as exc:  # noqa: BLE001 - offline, no space, bad id: all shown as words
            log.warning("download failed: %s", exc)
            self.failed.emit(f"The download failed: {exc}")
        else:
            self.done.emit(str(folder))


class DownloadDialog(QDialog):
    downloaded = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        from marlin_desk.engine.loader import DEFAULT_MODEL  # no torch at import time

        self.setWindowTitle("Download the model")
        self.model = QLineEdit(DEFAULT_MODEL)
        self.model.setAccessibleName("Model id")
        self.status = QLabel("Marlin-2B is about 4 GB. The app keeps working while it "
                             "downloads.")
        self.status.setWordWrap(True)
        self.bar = QProgressBar()
        self.bar.setRange(0, 0)
        self.bar.hide()
        self.start = QPushButton("Download")
        self.start.clicked.connect(self._start)
        close = QPushButton("Close")
        close.clicked.connect(self.close)
        row = QHBoxLayout()
        row.addStretch(1)
        row.addWidget(self.start)
        row.addWidget(close)
        layout = QVBoxLayout(self)
        layout.addWidget(self.model)
        layout.addWidget(self.status)
        layout.addWidget(self.bar)
        layout.addLayout(row)
        self._thread: _Download | None = None

    def _start(self) -> None:
        self.start.setEnabled(False)
        self.bar.show()
        self.status.setText("Downloading…")
        self._thread = _Download(self.model.text().strip(), self)
        self._thread.done.connect(self._done)
        self._thread.failed.connect(self._failed)
        self._thread.start()

    def _done(self, folder: str) -> None:
        self.bar.hide()
        self.status.setText(f"Done: {folder}")
        self.downloaded.emit(folder)

    def _failed(self, message: str) -> None:
        self.bar.hide()
        self.start.setEnabled(True)
        self.status.setText(message)

    def closeEvent(self, event) -> None:  # noqa: ANN001, N802
        if self._thread is not None and self._thread.isRunning():
            self.hide()  # the download goes on; the thread is parented and finishes on its own
            event.ignore()
            return
        super().closeEvent(event)
