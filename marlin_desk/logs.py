"""Logging to a rotating file in the app's log folder (and to stderr when verbose)."""

from __future__ import annotations

import logging
import logging.handlers
from pathlib import Path

from marlin_desk.paths import log_dir


def setup_logging(verbose: bool = False) -> Path:
    path = log_dir() / "marlin-desk.log"
    root = logging.getLogger("marlin_desk")
    if not root.handlers:
        handler = logging.handlers.RotatingFileHandler(path, maxBytes=2_000_000, backupCount=3,
                                                       encoding="utf-8")
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
        root.addHandler(handler)
        root.setLevel(logging.INFO)
        if verbose:
            stream = logging.StreamHandler()
            stream.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
            root.addHandler(stream)
    return path
