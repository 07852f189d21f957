"""Helpers shared by the command modules: JSON output, progress on stderr."""

from __future__ import annotations

import json
import sys
from typing import Any


def emit_json(doc: Any) -> None:
    """One JSON document on stdout (the scripting contract); nothing else goes to stdout."""
    json.dump(doc, sys.stdout, ensure_ascii=False, indent=2)
    sys.stdout.write("\n")
    sys.stdout.flush()


def progress(message: str) -> None:
    """Progress and chatter go to stderr so that stdout stays parseable."""
    print(message, file=sys.stderr, flush=True)
