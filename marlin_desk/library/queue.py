"""The app's analysis queue over the library (store/analysis_queue.py keeps it): which video
comes next, and videos queued by path. The analysis itself is the same workflow as
`marlin-desk batch` (workflows.open_video + analyze, resuming from the cache's windows)."""

from __future__ import annotations

import os
from collections.abc import Iterable

from marlin_desk.library import scan
from marlin_desk.store.analysis_queue import QueuedVideo, QueueStore
from marlin_desk.store.cache import AnalysisCache
from marlin_desk.store.library import ANALYSED, LibraryStore


def queue_paths(paths: Iterable[str], cache: AnalysisCache, first: bool = False) -> list[str]:
    """Queue video files by path (added to the library first when they are not in it); returns
    their fingerprints in the given order."""
    wanted = [os.path.abspath(p) for p in paths]
    by_path = {v.path: v.fingerprint for v in LibraryStore(cache).videos()}
    if any(p not in by_path for p in wanted):
        scan.add([p for p in wanted if p not in by_path], cache)
        by_path = {v.path: v.fingerprint for v in LibraryStore(cache).videos()}
    fps = [by_path[p] for p in wanted if p in by_path]
    QueueStore(cache).add(fps, first=first)
    return fps


def queue_unanalysed(cache: AnalysisCache) -> int:
    """Queue every online library video that is not fully analysed; returns how many."""
    fps = [v.fingerprint for v in LibraryStore(cache).videos()
           if v.online and v.state != ANALYSED]
    QueueStore(cache).add(fps)
    return len(fps)


def next_waiting(cache: AnalysisCache, skip: Iterable[str] = ()) -> QueuedVideo | None:
    """The first queued video that can run now (not failed, its file online), or None."""
    skipped = set(skip)
    return next((q for q in QueueStore(cache).items()
                 if q.waiting and q.fingerprint not in skipped), None)
