"""The library's tables: the folders and files the user added, and the videos found in them.

Decisions, and why:
- A video is its content fingerprint, not its path: a renamed or moved file is the same row
  (and the same analyses) once a scan finds it at its new path. A video the last scan did not
  find is offline, never deleted: a drive can be unplugged, and its analyses must wait for it.
- The library never deletes analyses, and `cache clear` never deletes library rows: a video
  whose analyses were cleared is simply "not analysed" again.
- A scan knows each file's size and mtime from the last scan, so only new or changed files are
  hashed again (15 ms each, but a library of thousands of files rescans in well under a second).
- The filesystem walk is not here (the store knows SQLite, not folders): the library workflow
  (marlin_desk/library/scan.py) walks, and hands the result to `record_scan` in one
  transaction.
"""

from __future__ import annotations

import logging
import sqlite3
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from marlin_desk.store import search_index, sql
from marlin_desk.store.cache import AnalysisCache
from marlin_desk.store.search_index import Candidate, IndexBroken

log = logging.getLogger(__name__)

FOLDER, FILE, EXCLUDE = "folder", "file", "exclude"
NOT_ANALYSED, PARTIAL, ANALYSED = "not analysed", "partial", "analysed"


@dataclass(frozen=True)
class Root:
    """A folder or file the user added (or a video path taken out of a folder: EXCLUDE)."""

    path: str
    kind: str
    added_at: float


@dataclass(frozen=True)
class SeenFile:
    """A video file a scan found: where, its content fingerprint, and its size and mtime."""

    path: str
    fingerprint: str
    size: int
    mtime_ns: int


@dataclass(frozen=True)
class LibraryVideo:
    """One library video as `library list` shows it."""

    fingerprint: str
    path: str  # where it was last seen
    size: int
    online: bool  # found by the last scan
    state: str  # NOT_ANALYSED, PARTIAL or ANALYSED (its best analysis, any model)
    windows_done: int
    windows_total: int
    added_at: float
    seen_at: float

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "fingerprint": self.fingerprint, "size": self.size,
                "state": self.state, "online": self.online,
                "windows_done": self.windows_done, "windows_total": self.windows_total,
                "added_at": round(self.added_at, 3), "seen_at": round(self.seen_at, 3)}


@dataclass(frozen=True)
class ScanCounts:
    """What a scan changed: videos new to the library, found at a new path, gone offline, back
    online, and the number online in all."""

    new: int
    moved: int
    offline: int
    back: int
    online: int

    def to_json(self) -> dict[str, int]:
        return {"new": self.new, "moved": self.moved, "offline": self.offline,
                "back": self.back, "online": self.online}


def _best_state(rows: Iterable[Sequence[Any]]) -> tuple[str, int, int]:
    """(state, windows done, windows planned) of a video's best analysis."""
    best = (NOT_ANALYSED, 0, 0)
    rank = {NOT_ANALYSED: 0, PARTIAL: 1, ANALYSED: 2}
    for complete, total, done in rows:
        state = ANALYSED if complete else PARTIAL if done else NOT_ANALYSED
        candidate = (state, int(done), int(total))
        if (rank[state], candidate[1]) > (rank[best[0]], best[1]):
            best = candidate
    return best


class LibraryStore:
    """The library's rows in the analysis cache's database (its connections, its transactions
    and its recovery)."""

    def __init__(self, cache: AnalysisCache) -> None:
        self.cache = cache

    def add_roots(self, roots: Iterable[tuple[str, str]]) -> None:
        """Add (path, kind) roots; a path added again keeps its first date. Adding a path that
        was excluded makes it a root again."""
        now = time.time()
        rows = [(path, kind, now) for path, kind in roots]
        self.cache.write(lambda c: c.executemany(sql.ADD_ROOT, rows))

    def roots(self) -> list[Root]:
        rows = self.cache.read(lambda c: c.execute(sql.SELECT_ROOTS).fetchall())
        return [Root(str(p), str(k), float(t)) for p, k, t in rows]

    def remove_root(self, path: str) -> bool:
        return self.cache.write(lambda c: c.execute(sql.DELETE_ROOT, (path,)).rowcount) > 0

    def exclude(self, path: str) -> None:
        """Keep a scan from picking this file up again (it lives in a folder root)."""
        self.add_roots([(path, EXCLUDE)])

    def forget(self, fingerprints: Iterable[str]) -> int:
        """Take videos out of the library (their analyses stay in the cache)."""
        rows = [(fp,) for fp in fingerprints]
        return self.cache.write(lambda c: _count(c.executemany(sql.DELETE_LIBRARY_VIDEO, rows)))

    def known_files(self) -> dict[str, SeenFile]:
        """What the last scans saw, by path: a file with the same size and mtime is not
        hashed again."""
        rows = self.cache.read(lambda c: c.execute(sql.SELECT_LIBRARY_FILES).fetchall())
        return {str(p): SeenFile(str(p), str(fp), int(s), int(m)) for p, fp, s, m in rows}

    def record_scan(self, found: Sequence[SeenFile]) -> ScanCounts:
        """One scan's result in one transaction: every found video online at its path (new ones
        added), every other library video offline. The analyses' last-seen paths follow."""
        now = time.time()

        def op(conn: sqlite3.Connection) -> ScanCounts:
            before = {str(fp): (str(path), bool(online)) for fp, path, _s, online, _a, _t
                      in conn.execute(sql.SELECT_LIBRARY_VIDEOS)}
            seen: dict[str, SeenFile] = {}
            for f in found:  # the same content twice: the path it had before wins, else first
                if f.fingerprint not in seen or before.get(f.fingerprint, ("",))[0] == f.path:
                    seen[f.fingerprint] = f
            new = moved = back = 0
            for f in seen.values():
                conn.execute(sql.UPSERT_LIBRARY_VIDEO, {
                    "fingerprint": f.fingerprint, "path": f.path, "size": f.size,
                    "mtime_ns": f.mtime_ns, "now": now})
                old = before.get(f.fingerprint)
                if old is None:
                    new += 1
                    continue
                moved += old[0] != f.path
                back += not old[1]
                if old[0] != f.path:
                    conn.execute(sql.TOUCH_BY_FINGERPRINT, (_name(f.path), f.path,
                                                            f.fingerprint, f.path))
            gone = [fp for fp, (_p, online) in before.items() if online and fp not in seen]
            conn.executemany(sql.SET_OFFLINE, [(fp,) for fp in gone])
            return ScanCounts(new, moved, len(gone), back, len(seen))

        return self.cache.write(op)

    def videos(self) -> list[LibraryVideo]:
        """Every library video, by path, with its state."""

        def op(conn: sqlite3.Connection) -> tuple[list[Any], list[Any]]:
            return (conn.execute(sql.SELECT_LIBRARY_VIDEOS).fetchall(),
                    conn.execute(sql.SELECT_LIBRARY_ANALYSES).fetchall())

        videos, analyses = self.cache.read(op)
        by_fp: dict[str, list[Sequence[Any]]] = {}
        for fp, *rest in analyses:
            by_fp.setdefault(str(fp), []).append(rest)
        out = []
        for fp, path, size, online, added, seen in videos:
            state, done, total = _best_state(by_fp.get(str(fp), []))
            out.append(LibraryVideo(str(fp), str(path), int(size), bool(online), state, done,
                                    total, float(added), float(seen)))
        return out


    def search(self, text: str, limit: int) -> list[Candidate]:
        """Stage one of the library search (search_index.search). A missing, stale or damaged
        index is rebuilt and the search asked again, once; user text never raises."""
        try:
            return self.cache.read(lambda c: search_index.search(c, text, limit))
        except IndexBroken as exc:
            self.reindex(f"unreadable at search ({exc})")
        return self.cache.read(lambda c: search_index.search(c, text, limit))

    def coverage(self, text: str, rows: Iterable[int]) -> dict[int, int]:
        """How many of the query's words each index row holds (search_index.coverage)."""
        rows = list(rows)
        try:
            return self.cache.read(lambda c: search_index.coverage(c, text, rows))
        except IndexBroken as exc:
            self.reindex(f"unreadable at search ({exc})")
            return dict.fromkeys(rows, 0)

    def reindex(self, reason: str = "asked for") -> int:
        """Rebuild the full-text index from the stored windows; the windows indexed."""
        windows = self.cache.write(search_index.rebuild)
        log.warning("search index %s: rebuilt from %d windows", reason, windows)
        return windows

    def check_index(self) -> str | None:
        """FTS5's full integrity check: None when the index is sound, else what is wrong."""
        return self.cache.read(search_index.integrity)


def _name(path: str) -> str:
    return Path(path).name


def _count(cursor: sqlite3.Cursor) -> int:
    return max(cursor.rowcount, 0)
