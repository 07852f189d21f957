"""A video's shot boundaries as the app and the commands get them: from the analysis cache
(by content fingerprint and detector settings, no model), else detected once and stored."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from marlin_desk.media.probe import VideoInfo
from marlin_desk.media.shots import ShotSettings, detect_shots
from marlin_desk.store.cache import AnalysisCache
from marlin_desk.store.fingerprint import fingerprint

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Shots:
    """Cut times (video seconds, ascending) and where they came from."""

    times: list[float]
    cached: bool  # True: read from the cache, no FFmpeg run
    seconds: float  # wall time of this call (the detection, or the cache read)
    settings: dict[str, Any]

    def to_json(self) -> dict[str, Any]:
        return {"cuts": [round(t, 6) for t in self.times], "count": len(self.times),
                "cached": self.cached, "seconds": round(self.seconds, 3),
                "settings": self.settings}


class _StopToken:
    """CancelToken over a `should_stop()` callable (the GUI worker's flag)."""

    def __init__(self, should_stop: Callable[[], bool]) -> None:
        self._should_stop = should_stop

    def is_set(self) -> bool:
        return bool(self._should_stop())


def find_shots(video: str, cache: AnalysisCache | None = None,
               should_stop: Callable[[], bool] | threading.Event | None = None,
               on_progress: Callable[[float], None] | None = None, *,
               settings: ShotSettings | None = None,
               info: VideoInfo | None = None) -> Shots:
    """The cached cuts of this file's content, else detect them (one FFmpeg pass; progress in
    [0, 1]; core.errors.Cancelled when `should_stop()` turns true) and store them. A cache
    problem never stops detection: the cuts are then detected and not kept."""
    began = time.perf_counter()
    settings = settings or ShotSettings()
    key = settings.to_json()
    fp = ""
    try:
        fp = fingerprint(video)
    except OSError as exc:
        log.info("cannot fingerprint %s: %s", video, exc)
    if cache is not None and fp:
        try:
            hit = cache.get_shots(fp, key)
        except Exception as exc:  # noqa: BLE001 - the cache is an optimisation
            log.info("shots cache look-up failed for %s: %s", video, exc)
            hit = None
        if hit is not None:
            if on_progress is not None:
                on_progress(1.0)
            return Shots(hit, True, time.perf_counter() - began, key)
    token = None
    if isinstance(should_stop, threading.Event):
        token = should_stop
    elif should_stop is not None:
        token = _StopToken(should_stop)
    times = detect_shots(video, settings=settings, info=info, cancel=token,
                         on_progress=on_progress)
    if cache is not None and fp:
        try:
            cache.put_shots(fp, key, times)
        except Exception as exc:  # noqa: BLE001 - not kept: detected again next time
            log.warning("shots not cached for %s: %s", video, exc)
    return Shots(times, False, time.perf_counter() - began, key)


def shot_boundaries(video: str, cache: AnalysisCache | None = None,
                    should_stop: Callable[[], bool] | threading.Event | None = None,
                    on_progress: Callable[[float], None] | None = None, *,
                    settings: ShotSettings | None = None,
                    info: VideoInfo | None = None) -> list[float]:
    """The cut times of `video` (video seconds, the first frame of each new shot), cached."""
    return find_shots(video, cache, should_stop, on_progress, settings=settings,
                      info=info).times
