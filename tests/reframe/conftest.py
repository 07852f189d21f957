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
        """`name` or `name@90`: the scenario stored turned, with a display matrix."""
        if scenario not in made:
            name, _, turn = scenario.partition("@")
            path = folder / f"{name}-{turn or 0}.mp4"
            duration = 4.0 if name in ("moving", "walker") else 3.0
            made[scenario] = (path, make_reframe_video(path, name, duration=duration,
                                                       rotation=int(turn or 0)))
        return made[scenario]

    return get
