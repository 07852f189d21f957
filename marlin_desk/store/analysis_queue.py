"""The app's analysis queue, kept in the cache's database so that it survives a restart.

Decisions, and why:
- A queued video is its content fingerprint (like the library): a file moved while it waits is
  analysed at its new path once a scan finds it; an offline one waits, it is not dropped.
- Only the order is kept here, never progress: the cache's finished windows are the progress,
  so a video interrupted by a quit or a crash resumes from them when its turn comes again.
- A failed video stays in the queue with its reason (the editor sees why, and retries or
  removes it); the queue goes on with the next one.
- Positions are integers renumbered in one transaction when the order changes: a queue of a
  thousand videos renumbers in about a millisecond, and the order is always a plain list.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterable
from dataclasses import dataclass

from marlin_desk.store import sql
from marlin_desk.store.cache import AnalysisCache

PAUSED = "paused"


@dataclass(frozen=True)
class QueuedVideo:
    """One queue row: the video, where the library last saw it, and why it failed (if it did)."""

    fingerprint: str
    path: str | None  # None: no longer in the library
    online: bool
    failed: str | None = None

    @property
    def waiting(self) -> bool:
        """Ready for its turn: not failed, and its file is where the library saw it."""
        return self.failed is None and self.online and self.path is not None


class QueueStore:
    """The queue's rows in the analysis cache (its connections, transactions and recovery)."""

    def __init__(self, cache: AnalysisCache) -> None:
        self.cache = cache

    def items(self) -> list[QueuedVideo]:
        rows = self.cache.read(lambda c: c.execute(sql.QUEUE_ROWS).fetchall())
        return [QueuedVideo(str(fp), None if path is None else str(path), bool(online),
                            None if failed is None else str(failed))
                for fp, _pos, failed, path, online in rows]

    def add(self, fingerprints: Iterable[str], first: bool = False) -> None:
        """Queue videos at the end (or at the front, in the given order). A video already queued
        keeps its place (or moves to the front with `first`); a failed one is retried."""
        fps = list(dict.fromkeys(fingerprints))
        now = time.time()

        def op(conn: sqlite3.Connection) -> None:
            end = int(conn.execute(sql.QUEUE_MAX_POSITION).fetchone()[0])
            conn.executemany(sql.QUEUE_ADD, [(fp, end + 1 + i, now) for i, fp in enumerate(fps)])
            if first:
                order = [q for q in _order(conn) if q not in fps]
                _renumber(conn, fps + order)

        self.cache.write(op)

    def remove(self, fingerprints: Iterable[str]) -> int:
        rows = [(fp,) for fp in fingerprints]
        return self.cache.write(lambda c: max(c.executemany(sql.QUEUE_REMOVE, rows).rowcount, 0))

    def move(self, fingerprint: str, steps: int) -> None:
        """Move one video `steps` places later (negative: earlier), within the queue's ends."""

        def op(conn: sqlite3.Connection) -> None:
            order = _order(conn)
            if fingerprint not in order:
                return
            at = order.index(fingerprint)
            order.pop(at)
            order.insert(max(0, min(len(order), at + steps)), fingerprint)
            _renumber(conn, order)

        self.cache.write(op)

    def set_failed(self, fingerprint: str, reason: str | None) -> None:
        self.cache.write(lambda c: c.execute(sql.QUEUE_SET_FAILED, (reason, fingerprint)))

    def paused(self) -> bool:
        row = self.cache.read(lambda c: c.execute(sql.QUEUE_STATE_GET, (PAUSED,)).fetchone())
        return row is not None and row[0] == "1"

    def set_paused(self, paused: bool) -> None:
        self.cache.write(lambda c: c.execute(sql.QUEUE_STATE_SET, (PAUSED, "1" if paused
                                                                   else "0")))


def _order(conn: sqlite3.Connection) -> list[str]:
    return [str(row[0]) for row in conn.execute(sql.QUEUE_ROWS)]


def _renumber(conn: sqlite3.Connection, order: list[str]) -> None:
    conn.executemany(sql.QUEUE_SET_POSITION, [(i + 1, fp) for i, fp in enumerate(order)])
