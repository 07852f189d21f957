"""Start the desktop app: QApplication, theme, main window; the file from the command line."""

from __future__ import annotations

import logging
import os
import sys
import traceback
from types import TracebackType

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication

from marlin_desk import __version__
from marlin_desk.gui.native_libs import load_before_gl

log = logging.getLogger(__name__)

# Python hands the GIL to a waiting thread after this long (default 5 ms): shorter lets the GUI
# thread run sooner while the model worker executes Python code between its torch calls.
SWITCH_INTERVAL = 0.002


def needs_offscreen() -> bool:
    """True on Linux without a display server (CI, SSH, the packaged smoke test)."""
    return sys.platform.startswith("linux") and not (
        os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def make_app(argv: list[str] | None = None, offscreen: bool = False) -> QApplication:
    sys.setswitchinterval(SWITCH_INTERVAL)
    load_before_gl()  # before Qt can load the GL driver: see native_libs
    if offscreen and not os.environ.get("QT_QPA_PLATFORM"):
        os.environ["QT_QPA_PLATFORM"] = "offscreen"
    app = QApplication.instance()
    if not isinstance(app, QApplication):
        app = QApplication(argv or [sys.argv[0]])
    app.setApplicationName("Marlin Desk")
    app.setOrganizationName("MarlinDesk")
    app.setApplicationVersion(__version__)
    return app


def _install_excepthook() -> None:
    """An exception escaping a slot is logged and shown, never the end of the app."""
    def hook(kind: type[BaseException], exc: BaseException, tb: TracebackType | None) -> None:
        log.error("unhandled error\n%s", "".join(traceback.format_exception(kind, exc, tb)))
        app = QApplication.instance()
        for w in (app.topLevelWidgets() if isinstance(app, QApplication) else []):
            show = getattr(w, "show_error", None)
            if callable(show):
                show(f"Something went wrong ({exc}); details are in the log.")
                break

    sys.excepthook = hook


def run_app(path: str | None = None) -> int:
    from marlin_desk import crashes
    from marlin_desk.gui.dialogs.crash import offer_crash_report
    from marlin_desk.gui.main_window import MainWindow
    from marlin_desk.gui.settings import Settings
    from marlin_desk.gui.theme import apply_theme

    app = make_app(offscreen=needs_offscreen())
    crashed = crashes.unfinished_sessions()  # before this session leaves its own marker
    marker = crashes.begin_session()
    settings = Settings()
    apply_theme(app, settings.get("theme"))
    _install_excepthook()
    window = MainWindow(settings)
    window.show()
    if crashed:
        QTimer.singleShot(0, lambda: offer_crash_report(window, crashed[-1]))
    if path:
        QTimer.singleShot(0, lambda: window.open_path(path))
    else:
        QTimer.singleShot(0, window.project.recover)
    _quit_on_terminate(window)
    code = int(app.exec())
    crashes.end_session(marker)
    return code


def _quit_on_terminate(window: object) -> None:
    """SIGTERM (a logout, a system shutdown, `kill`): keep the unsaved work in the autosave and
    quit cleanly, so the next start offers to recover it rather than report a crash. Python
    runs signal handlers only between bytecodes, so a timer lets it look every half second."""
    import signal

    if not hasattr(signal, "SIGTERM") or sys.platform == "win32":
        return

    def terminate(*_: object) -> None:
        window.project.autosave()  # type: ignore[attr-defined]
        window.shutdown()  # type: ignore[attr-defined]
        QApplication.quit()

    signal.signal(signal.SIGTERM, terminate)
    timer = QTimer(window)  # type: ignore[arg-type]
    timer.timeout.connect(lambda: None)
    timer.start(500)
