"""Test-wide environment: offline, offscreen, and every app folder inside a temporary dir;
and the fixtures the export and caption tests share."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

_TMP = tempfile.mkdtemp(prefix="marlin-tests-")
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["HF_HOME"] = os.path.join(_TMP, "hf")
os.environ["MARLIN_DESK_CACHE"] = os.path.join(_TMP, "cache")
os.environ["MARLIN_DESK_DATA"] = os.path.join(_TMP, "data")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


@pytest.fixture()
def out_dir(tmp_path: Path) -> Path:
    d = tmp_path / "out"
    d.mkdir()
    return d


@pytest.fixture()
def ffprobe() -> str:
    exe = shutil.which("ffprobe")
    if not exe:
        pytest.skip("ffprobe is not installed (the bundled FFmpeg has none)")
    return exe
