"""Where the app keeps its files (per-OS folders via platformdirs; overridable for tests)."""

from __future__ import annotations

import os
from pathlib import Path

from platformdirs import PlatformDirs

_DIRS = PlatformDirs("marlin-desk", "MarlinDesk")


def _dir(env: str, default: str) -> Path:
    path = Path(os.environ.get(env) or default)
    path.mkdir(parents=True, exist_ok=True)
    return path


def cache_dir() -> Path:
    """Analysis cache, logs. MARLIN_DESK_CACHE overrides (tests use a temporary folder)."""
    return _dir("MARLIN_DESK_CACHE", _DIRS.user_cache_dir)


def data_dir() -> Path:
    """Downloaded models and other user data. MARLIN_DESK_DATA overrides."""
    return _dir("MARLIN_DESK_DATA", _DIRS.user_data_dir)


def log_dir() -> Path:
    return _dir("MARLIN_DESK_LOGS", str(cache_dir() / "logs"))
