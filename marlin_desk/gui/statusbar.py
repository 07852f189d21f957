"""Status bar pieces: what model runs where (and why), and one progress bar with ETA and a
Cancel button shared by every long job (the most recent active job is shown)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from PySide6.QtWidgets import QHBoxLayout, QLabel, QProgressBar, QPushButton, QWidget

from marlin_desk.gui.timefmt import fmt_time


@dataclass
class _Job:
    label: str
    cancel: Callable[[], None] | None
    done: int = 0
    total: int = 0
    eta: float = -1.0
    message: str = ""


class JobBar(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.jobs: dict[Any, _Job] = {}
        self.label = QLabel("")
        self.bar = QProgressBar()
        self.bar.setMaximumWidth(200)
        self.bar.setMaximumHeight(16)
        self.bar.setAccessibleName("Job progress")
        self.eta = QLabel("")
        self.eta.setAccessibleName("Time left")
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setAccessibleName("Cancel the running job")
        self.cancel_button.clicked.connect(self.cancel_current)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        for w in (self.label, self.bar, self.eta, self.cancel_button):
            layout.addWidget(w)
        self._refresh()

    def add(self, key: Any, label: str, cancel: Callable[[], None] | None = None) -> None:
        self.jobs[key] = _Job(label, cancel)
        self._refresh()

    def update_job(self, key: Any, done: int, total: int, eta: float = -1.0,
                   message: str = "") -> None:
        job = self.jobs.get(key)
        if job is None:
            return
        job.done, job.total, job.eta, job.message = done, total, eta, message
        self._refresh()

    def remove(self, key: Any) -> None:
        self.jobs.pop(key, None)
        self._refresh()

    def current(self) -> tuple[Any, _Job] | None:
        if not self.jobs:
            return None
        key = next(reversed(self.jobs))
        return key, self.jobs[key]

    def cancel_current(self) -> None:
        cur = self.current()
        if cur and cur[1].cancel:
            cur[1].label += " (cancelling…)"
            cur[1].cancel()
            self._refresh()

    def _refresh(self) -> None:
        cur = self.current()
        visible = cur is not None
        for w in (self.label, self.bar, self.eta, self.cancel_button):
            w.setVisible(visible)
        if not cur:
            return
        _, job = cur
        more = f" (+{len(self.jobs) - 1} more)" if len(self.jobs) > 1 else ""
        self.label.setText(f"{job.label}{more}" + (f": {job.message}" if job.message else ""))
        if job.total > 0:
            self.bar.setRange(0, job.total)
            self.bar.setValue(job.done)
        else:
            self.bar.setRange(0, 0)  # busy indicator
        eta = fmt_time(job.eta, millis=False, mode="seconds")  # a duration: never timecode
        self.eta.setText(f"about {eta} left" if job.eta >= 0 else "")
        self.cancel_button.setEnabled(job.cancel is not None)
