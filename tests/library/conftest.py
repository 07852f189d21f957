"""Makers for the library tests: a cache in a temporary folder, files standing in for videos
(the fingerprint and the scan read only bytes), windows with chosen event texts."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from marlin_desk.core.timeline import Event, WindowResult
from marlin_desk.store import AnalysisCache, CacheKey


def window(i: int, events: list[str], scene: str = "A plain room.", length: float = 20.0,
           ) -> WindowResult:
    """Window i (i * length s on) with one 4 s event per text, 5 s apart."""
    start = i * length
    return WindowResult(i, start, start + length, "raw", True, scene,
                        [Event(start + 1 + 5 * n, start + 5 + 5 * n, text)
                         for n, text in enumerate(events)])


def key_for(path: str | os.PathLike[str], model: str = "test/model") -> CacheKey:
    return CacheKey.for_file(path, model, "r1", "fp32", {"window": 20})


def store_windows(cache: AnalysisCache, path: Path, windows: list[WindowResult],
                  total: int | None = None) -> CacheKey:
    key = key_for(path)
    for w in windows:
        cache.put_window(key, total or len(windows), path, w)
    return key


@pytest.fixture
def cache(tmp_path: Path) -> Iterator[AnalysisCache]:
    c = AnalysisCache(tmp_path / "cache" / "analyses.sqlite3")
    yield c
    c.close()


@pytest.fixture
def make_file(tmp_path: Path) -> Callable[..., Path]:
    """A file of random bytes at videos/NAME (distinct content each call)."""

    def make(name: str = "clip.mp4", size: int = 4096) -> Path:
        path = tmp_path / "videos" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(os.urandom(size))
        return path

    return make
