"""One real X server for the desktop tests (each test runs the app in its own process, so a
crash is an exit code, not the end of the test run)."""

from __future__ import annotations

import sys
from collections.abc import Iterator

import pytest

from tests.xserver import xvfb


@pytest.fixture(scope="session")
def x_display() -> Iterator[str]:
    if not sys.platform.startswith("linux"):
        pytest.skip("Xvfb is a Linux X server")
    with xvfb() as display:
        yield display
