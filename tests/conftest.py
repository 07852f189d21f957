"""Test-wide environment: offline, offscreen, and every app folder inside a temporary dir."""

from __future__ import annotations

import os
import tempfile

_TMP = tempfile.mkdtemp(prefix="marlin-tests-")
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["HF_HOME"] = os.path.join(_TMP, "hf")
os.environ["MARLIN_DESK_CACHE"] = os.path.join(_TMP, "cache")
os.environ["MARLIN_DESK_DATA"] = os.path.join(_TMP, "data")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
