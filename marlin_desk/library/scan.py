"""What `library add|scan|remove|list` do: the folders and files of the library, walked and
recorded by content fingerprint.

Decisions, and why:
- Folders are walked recursively for files with a video extension (core.media_types, the one
  list), hidden names skipped; a file added by name is taken whatever its folder.
- Every add, remove and scan rescans every root: a video moved from one root folder to another
  must be found at its new path in the same scan that misses it at the old one, or it would
  flicker offline. Unchanged files (same size and mtime) are not hashed again.
- A root that is missing (an unplugged drive) is reported, and its videos go offline with
  their analyses kept; nothing is deleted because a file is not there.
- Removing a folder or file root takes its videos out of the library (unless another root
  holds them); removing one video inside a folder root also keeps later scans from adding it
  again. Analyses stay in the cache either way (`cache clear` deletes them).
"""

from __future__ import annotations

import logging
import os
import time
from dataclasses import dataclass, field
from typing import Any

from marlin_desk.core.errors import BadInput
from marlin_desk.core.media_types import VIDEO_EXTENSIONS, is_hidden_name, is_video_name
from marlin_desk.store.cache import AnalysisCache
from marlin_desk.store.fingerprint import fingerprint
from marlin_desk.store.library import (
    EXCLUDE,
    FILE,
    FOLDER,
    LibraryStore,
    LibraryVideo,
    Root,
    ScanCounts,
    SeenFile,
)

log = logging.getLogger(__name__)


@dataclass
class ScanReport:
    """What a scan found: the counts, roots that are not there, files that could not be read."""

    counts: ScanCounts
    missing_roots: list[str] = field(default_factory=list)
    unreadable: list[str] = field(default_factory=list)  # "path: why"
    hashed: int = 0  # files fingerprinted (new or changed); the rest were known
    seconds: float = 0.0

    def to_json(self) -> dict[str, Any]:
        return {**self.counts.to_json(), "missing_roots": self.missing_roots,
                "unreadable": self.unreadable, "hashed": self.hashed,
                "seconds": round(self.seconds, 3)}


def _absolute(path: str | os.PathLike[str]) -> str:
    return os.path.abspath(os.path.expanduser(os.fspath(path)))


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def walk(folder: str) -> list[str]:
    """Video files under `folder` (by extension), hidden files and folders skipped, sorted."""
    found: list[str] = []
    for root, dirs, files in os.walk(folder, onerror=lambda exc: log.warning("%s", exc)):
        dirs[:] = sorted(d for d in dirs if not is_hidden_name(d))
        found.extend(os.path.join(root, name) for name in sorted(files)
                     if not is_hidden_name(name) and is_video_name(name))
    return found


def _files(roots: list[Root], report: ScanReport) -> list[str]:
    excluded = {r.path for r in roots if r.kind == EXCLUDE}
    paths: list[str] = []
    for root in roots:
        if root.kind == FOLDER and os.path.isdir(root.path):
            paths.extend(walk(root.path))
        elif root.kind == FILE and os.path.isfile(root.path):
            paths.append(root.path)
        elif root.kind != EXCLUDE:
            report.missing_roots.append(root.path)
    return [p for p in dict.fromkeys(paths) if p not in excluded]


def scan(cache: AnalysisCache | None = None) -> ScanReport:
    """Look at every root again: new videos join, moved ones are found at their new path,
    missing ones go offline (their analyses kept)."""
    started = time.perf_counter()
    store = LibraryStore(cache if cache is not None else AnalysisCache())
    report = ScanReport(ScanCounts(0, 0, 0, 0, 0))
    known = store.known_files()
    seen: list[SeenFile] = []
    for path in _files(store.roots(), report):
        try:
            st = os.stat(path)
        except OSError as exc:
            report.unreadable.append(f"{path}: {exc.strerror or exc}")
            continue
        old = known.get(path)
        if old is not None and (old.size, old.mtime_ns) == (st.st_size, st.st_mtime_ns):
            seen.append(old)
            continue
        try:
            fp = fingerprint(path)
        except BadInput as exc:
            report.unreadable.append(str(exc))
            continue
        report.hashed += 1
        seen.append(SeenFile(path, fp, st.st_size, st.st_mtime_ns))
    report.counts = store.record_scan(seen)
    report.seconds = time.perf_counter() - started
    return report


def add(paths: list[str], cache: AnalysisCache | None = None) -> ScanReport:
    """Add folders (walked recursively) and video files to the library, then scan."""
    cache = cache if cache is not None else AnalysisCache()
    roots: list[tuple[str, str]] = []
    for given in paths:
        path = _absolute(given)
        if os.path.isdir(path):
            roots.append((path, FOLDER))
        elif os.path.isfile(path):
            if not is_video_name(path):
                raise BadInput(f"{given} is not a video file (looked for "
                               f"{', '.join(sorted(VIDEO_EXTENSIONS)[:6])}... files)")
            roots.append((path, FILE))
        else:
            raise BadInput(f"{given} does not exist (give folders or video files)")
    LibraryStore(cache).add_roots(roots)
    return scan(cache)


def remove(paths: list[str], cache: AnalysisCache | None = None) -> int:
    """Take roots, or single videos, out of the library; returns the videos removed. Their
    analyses stay in the cache. BadInput for a path the library does not know."""
    cache = cache if cache is not None else AnalysisCache()
    store = LibraryStore(cache)
    removed = 0
    for given in paths:
        path = _absolute(given)
        videos = store.videos()
        if store.remove_root(path):
            left = [r for r in store.roots() if r.kind != EXCLUDE]
            gone = [v.fingerprint for v in videos if _inside(v.path, path)
                    and not any(_covers(r, v.path) for r in left)]
            removed += store.forget(gone)
            continue
        match = [v for v in videos if v.path == path]
        if not match and os.path.isfile(path):
            fp = fingerprint(path)
            match = [v for v in videos if v.fingerprint == fp]
        if not match:
            raise BadInput(f"{given} is not in the library (see `marlin-desk library list`)")
        for video in match:
            store.exclude(video.path)
        removed += store.forget(v.fingerprint for v in match)
    return removed


def _covers(root: Root, path: str) -> bool:
    return _inside(path, root.path) if root.kind == FOLDER else root.path == path


def videos(cache: AnalysisCache | None = None) -> list[LibraryVideo]:
    """Every library video with its state (not analysed / partial / analysed) and whether the
    last scan found it (offline otherwise)."""
    return LibraryStore(cache if cache is not None else AnalysisCache()).videos()


def roots(cache: AnalysisCache | None = None) -> list[Root]:
    return LibraryStore(cache if cache is not None else AnalysisCache()).roots()


def reindex(cache: AnalysisCache | None = None) -> int:
    """Rebuild the full-text index from every stored window; the windows indexed."""
    return LibraryStore(cache if cache is not None else AnalysisCache()).reindex()
