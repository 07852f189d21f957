"""Shared makers for the store tests: small video-like files, windows, keys, a cache."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from marlin_desk.core.timeline import Analysis, Event, WindowResult
from marlin_desk.store import AnalysisCache, CacheKey

SETTINGS: dict[str, Any] = {"window_s": 120, "overlap_s": 2,
                            "budget": {"fps": 1.0, "max_frames": 64, "max_pixels": 200704},
                            "prompt_version": 3}


def make_window(i: int, raw_size: int = 40) -> WindowResult:
    """A window whose content depends on its index, so a mix-up between windows shows."""
    start = i * 120.0
    return WindowResult(index=i, start=start, end=start + 120.0,
                        raw=f"answer {i} " + "x" * raw_size, format_ok=True, scene=f"scene {i}",
                        events=[Event(start + 1.5, start + 9.25, f"event in window {i}")],
                        frames=32, frame_times=[start + t * 3.75 for t in range(32)],
                        grid=[16, 14, 20], video_tokens=4480, prompt_tokens=120, seconds=1.234)


def make_analysis(n: int, video: str = "") -> Analysis:
    windows = [make_window(i) for i in range(n)]
    return Analysis(duration=n * 120.0, model="marlin-2b", scene="a test video",
                    events=[e for w in windows for e in w.events], windows=windows, video=video)


def make_key(path: str | os.PathLike[str], **changes: Any) -> CacheKey:
    parts: dict[str, Any] = {"model_id": "marlin/Marlin-2B", "revision": "0123456789abcdef",
                             "precision": "bf16", "settings": SETTINGS}
    parts.update(changes)
    return CacheKey.for_file(path, **parts)


@pytest.fixture
def make_video(tmp_path: Path) -> Callable[..., Path]:
    """Files of random bytes standing in for videos (the fingerprint only reads bytes)."""

    def make(name: str = "clip.mp4", size: int = 3 * 1024 * 1024, seed: bytes = b"") -> Path:
        path = tmp_path / "videos" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(seed + os.urandom(size - len(seed)))
        return path

    return make


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "cache" / "analyses.sqlite3"


@pytest.fixture
def cache(db_path: Path) -> Iterator[AnalysisCache]:
    c = AnalysisCache(db_path)
    yield c
    c.close()
