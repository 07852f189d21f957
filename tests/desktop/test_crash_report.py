"""A fatal signal leaves its stacks in the app's log; the next start offers a report, once."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from marlin_desk import crashes

CRASH = """
import faulthandler
from marlin_desk import crashes
from marlin_desk.logs import setup_logging
setup_logging()
crashes.begin_session()
def model_thread_work():
    faulthandler._sigsegv()
model_thread_work()
"""


@pytest.fixture
def logs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv("MARLIN_DESK_CACHE", str(folder))
    monkeypatch.delenv("MARLIN_DESK_LOGS", raising=False)
    return folder / "logs"


def test_a_segfault_is_in_the_log_and_offered_once_at_the_next_start(logs: Path) -> None:
    run = subprocess.run([sys.executable, "-c", CRASH], env=dict(os.environ),
                         capture_output=True, timeout=120)
    assert run.returncode == -signal.SIGSEGV
    text = (logs / "marlin-desk.log").read_text(encoding="utf-8")
    assert "Fatal Python error: Segmentation fault" in text
    assert "model_thread_work" in text  # the crashing thread's stack, by function name

    reports = crashes.unfinished_sessions()
    assert len(reports) == 1
    report = reports[0]
    assert report.reason == "Segmentation fault"
    assert "model_thread_work" in report.details
    assert "model_thread_work" in report.path.read_text(encoding="utf-8")
    assert crashes.unfinished_sessions() == []  # offered once


def test_a_clean_exit_and_a_running_window_are_not_crashes(logs: Path) -> None:
    marker = crashes.begin_session()
    crashes.end_session(marker)
    assert crashes.unfinished_sessions() == []
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:  # another app window, still running
        (logs / "sessions" / f"{other.pid}.json").write_text(
            f'{{"pid": {other.pid}, "token": "abc", "started": "now"}}', encoding="utf-8")
        assert crashes.unfinished_sessions() == []
    finally:
        other.kill()
        other.wait()
    reports = crashes.unfinished_sessions()  # now it is gone without a clean exit
    assert len(reports) == 1 and "killed" in reports[0].reason


def test_the_report_box_copies_the_report(qtbot, logs: Path) -> None:  # type: ignore[no-untyped-def]
    from PySide6.QtGui import QGuiApplication
    from PySide6.QtWidgets import QWidget

    from marlin_desk.gui.dialogs.crash import offer_crash_report

    subprocess.run([sys.executable, "-c", CRASH], env=dict(os.environ), capture_output=True,
                   timeout=120)
    report = crashes.unfinished_sessions()[0]
    parent = QWidget()
    qtbot.addWidget(parent)
    box = offer_crash_report(parent, report)
    assert "Segmentation fault" in box.text()
    copy = next(b for b in box.buttons() if b.text() == "Copy Report")
    copy.click()
    pasted = QGuiApplication.clipboard().text()
    assert "Marlin Desk:" in pasted and "model_thread_work" in pasted
    box.close()
