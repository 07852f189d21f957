"""The analysis queue's rows (schema v5): order, front, moves, failures and pause, kept in the
cache's file across a reopen; a v4 file migrates to an empty queue."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from marlin_desk.store import sql
from marlin_desk.store.analysis_queue import QueueStore
from marlin_desk.store.cache import AnalysisCache


def _order(store: QueueStore) -> list[str]:
    return [q.fingerprint for q in store.items()]


def test_order_front_move_remove_and_failed_survive_a_reopen(tmp_path: Path) -> None:
    path = tmp_path / "cache.sqlite"
    with AnalysisCache(path) as cache:
        store = QueueStore(cache)
        store.add(["a", "b", "c", "d"])
        store.add(["b"])  # already queued: keeps its place
        assert _order(store) == ["a", "b", "c", "d"]
        store.add(["c"], first=True)
        assert _order(store) == ["c", "a", "b", "d"]
        store.move("c", 2)
        store.move("d", -10)  # clamped at the front
        assert _order(store) == ["d", "a", "b", "c"]
        store.set_failed("a", "the file is truncated")
        store.remove(["b"])
        store.set_paused(True)
    with AnalysisCache(path) as cache:
        store = QueueStore(cache)
        items = store.items()
        assert [q.fingerprint for q in items] == ["d", "a", "c"]
        assert items[1].failed == "the file is truncated" and not items[1].waiting
        assert items[0].path is None and not items[0].waiting  # not in the library
        assert store.paused()
        store.add(["a"])  # queued again: retried
        assert store.items()[1].failed is None
        store.set_paused(False)
        assert not store.paused()


def test_a_v4_cache_migrates_to_an_empty_queue(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    conn = sqlite3.connect(path)
    for migration in sql.MIGRATIONS[:4]:
        migration(conn)
    conn.execute("PRAGMA user_version = 4")
    conn.execute(f"PRAGMA application_id = {sql.APPLICATION_ID}")
    conn.commit()
    conn.close()
    with AnalysisCache(path) as cache:
        assert cache.recovery_reason is None
        store = QueueStore(cache)
        assert store.items() == [] and not store.paused()
        assert cache.read(lambda c: c.execute("PRAGMA user_version").fetchone()) == (sql.LATEST,)
