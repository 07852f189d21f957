"""Batch fixtures: the tiny random model (built once), short synthetic videos, bad files, and a
cache of each test's own."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import av
import pytest

from marlin_desk.dev.videos import make_video

# The random model writes noise until its token cap: a small cap keeps each window ~1 s on CPU
# (the cap is part of the cache key, so every run of one test must use the same settings).
CAPTION_TOKENS = 8
WINDOW = 2.0


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from marlin_desk.dev.tiny_model import build_tiny_model

    return build_tiny_model(tmp_path_factory.mktemp("batch-tiny"))


@pytest.fixture(autouse=True)
def own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    cache = tmp_path / "cache"
    monkeypatch.setenv("MARLIN_DESK_CACHE", str(cache))
    return cache


@pytest.fixture
def fast_cli(monkeypatch: pytest.MonkeyPatch) -> None:
    """`marlin-desk batch` in this process with the small caption cap."""
    from marlin_desk.cli import batch_cmd

    original = batch_cmd._job_settings
    monkeypatch.setattr(batch_cmd, "_job_settings", lambda args: dataclasses.replace(
        original(args), caption_tokens=CAPTION_TOKENS))


def job(model: Path, **kw: Any) -> Any:
    from marlin_desk.workflows import JobSettings

    return JobSettings(model=str(model), device="cpu", window=WINDOW,
                       caption_tokens=CAPTION_TOKENS, **kw)


def video(path: Path, seconds: float = 2.0, colour: tuple[int, int, int] = (200, 40, 40)) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    return make_video(path, segments=[(seconds, colour)], size=(96, 64), fps=10)


def garbage(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"this is not a video\n" * 200)
    return path


def audio_only(path: Path) -> Path:
    """An MP4 with a sound track and no video stream."""
    import numpy as np

    path.parent.mkdir(parents=True, exist_ok=True)
    with av.open(str(path), "w") as out:
        stream = out.add_stream("aac", rate=48_000, layout="mono")
        for i in range(20):
            frame = av.AudioFrame.from_ndarray(np.zeros((1, 1024), dtype=np.float32),
                                               format="fltp", layout="mono")
            frame.sample_rate = 48_000
            frame.pts = i * 1024
            for packet in stream.encode(frame):
                out.mux(packet)
        for packet in stream.encode(None):
            out.mux(packet)
    return path


def truncated(path: Path) -> Path:
    """The first third of a real MP4 (its index, written at the end, is gone)."""
    full = video(path.with_name("full-" + path.name), 4.0)
    data = full.read_bytes()
    full.unlink()
    path.write_bytes(data[: len(data) // 3])
    return path
