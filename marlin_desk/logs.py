"""Logging to a rotating file in the app's log folder (and to stderr when verbose).

Python's fault handler writes into the same file: a segfault, abort or other fatal signal in
any thread leaves "Fatal Python error: ..." and every thread's stack in the app's log, where
the next start finds it (see `crashes`). It follows the file across rotations.
"""

from __future__ import annotations

import faulthandler
import logging
import logging.handlers
from pathlib import Path

from marlin_desk.paths import log_dir

LOG_NAME = "marlin-desk.log"


class _LogFile(logging.handlers.RotatingFileHandler):
    """The rotating log file, with the fault handler pointed at whichever file is current."""

    def __init__(self, path: Path) -> None:
        super().__init__(path, maxBytes=2_000_000, backupCount=3, encoding="utf-8")
        self._point_fault_handler()

    def doRollover(self) -> None:  # noqa: N802 - logging's name
        super().doRollover()
        self._point_fault_handler()

    def _point_fault_handler(self) -> None:
        if self.stream is None:
            self.stream = self._open()
        faulthandler.enable(file=self.stream, all_threads=True)


def log_path() -> Path:
    return log_dir() / LOG_NAME


def setup_logging(verbose: bool = False) -> Path:
    path = log_path()
    root = logging.getLogger("marlin_desk")
    if not root.handlers:
        handler = _LogFile(path)
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
        root.addHandler(handler)
        root.setLevel(logging.INFO)
        if verbose:
            stream = logging.StreamHandler()
            stream.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
            root.addHandler(stream)
    return path
