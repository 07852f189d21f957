"""Reframing footage for the tests: the astronaut's face over textured 16:9 frames, written
once per session (640x360, 25 fps, 3-4 s: small, yet the detector sees a 40 px face)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from marlin_desk.dev.reframe_videos import ReframeTruth, make_reframe_video

Footage = Callable[[str], tuple[Path, ReframeTruth]]


@pytest.fixture(scope="session")
def footage(tmp_path_factory: pytest.TempPathFactory) -> Footage:
    folder = tmp_path_factory.mktemp("reframe-videos")
    made: dict[str, tuple[Path, ReframeTruth]] = {}

    def get(scenario: str) -> tuple[Path, ReframeTruth]:
        if scenario not in made:
            path = folder / f"{scenario}.mp4"
            duration = 4.0 if scenario == "moving" else 3.0
            made[scenario] = (path, make_reframe_video(path, scenario, duration=duration))
        return made[scenario]

    return get
