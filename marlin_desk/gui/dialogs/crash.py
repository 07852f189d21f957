"""After a crash: say so at the next start and offer the report (copy it, or show the file)."""

from __future__ import annotations

from PySide6.QtCore import QUrl
from PySide6.QtGui import QDesktopServices, QGuiApplication
from PySide6.QtWidgets import QMessageBox, QWidget

from marlin_desk.crashes import CrashReport
from marlin_desk.gui.dialogs.about import versions


def report_text(report: CrashReport) -> str:
    """What to paste into a message to support: versions first, then the session's stacks."""
    lines = [f"{k}: {v}" for k, v in versions().items()]
    return "\n".join([*lines, "", report.path.read_text(encoding="utf-8", errors="replace")
                      if report.path.is_file() else report.details])


def offer_crash_report(parent: QWidget, report: CrashReport) -> QMessageBox:
    """Non-blocking: the window keeps working while the box is open."""
    box = QMessageBox(QMessageBox.Icon.Warning, "Marlin Desk quit unexpectedly",
                      f"Marlin Desk quit unexpectedly last time (session started "
                      f"{report.started}): {report.reason}", parent=parent)
    box.setObjectName("crashReport")
    box.setInformativeText(f"A report was saved to {report.path}. Please send it with a few "
                           "words on what you were doing.")
    box.setDetailedText(report.details[:20_000])
    copy = box.addButton("Copy Report", QMessageBox.ButtonRole.ActionRole)
    show = box.addButton("Show Report File", QMessageBox.ButtonRole.ActionRole)
    box.addButton(QMessageBox.StandardButton.Close)

    def clicked(button: object) -> None:
        if button is copy:
            QGuiApplication.clipboard().setText(report_text(report))
        elif button is show:
            QDesktopServices.openUrl(QUrl.fromLocalFile(str(report.path.parent)))

    box.buttonClicked.connect(clicked)
    box.open()
    return box
