"""Shared synthetic videos for the media tests: each is written once per session."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from marlin_desk.dev.videos import make_video

DATA = Path(__file__).resolve().parent.parent / "data"

MakeVideo = Callable[..., Path]


@pytest.fixture(scope="session")
def video(tmp_path_factory: pytest.TempPathFactory) -> MakeVideo:
    """make_video with a session cache: the same arguments give the same file."""
    folder = tmp_path_factory.mktemp("videos")
    cache: dict[str, Path] = {}

    def get(name: str = "clip.mp4", **kwargs: object) -> Path:
        key = name + json.dumps(kwargs, sort_keys=True, default=str)
        if key not in cache:
            target = folder / f"{len(cache):03d}-{name}"
            cache[key] = make_video(target, **kwargs)
        return cache[key]

    return get


@pytest.fixture(scope="session")
def data_dir() -> Path:
    return DATA
