"""The shots table (schema v4): cut times by content fingerprint and detector settings."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from marlin_desk.store import sql
from marlin_desk.store.cache import AnalysisCache

SETTINGS = {"detector": "ffmpeg-scene", "version": 1, "threshold": 0.35, "width": 320}


def test_put_get_by_fingerprint_and_settings(tmp_path: Path) -> None:
    cache = AnalysisCache(tmp_path / "c.sqlite3")
    assert cache.get_shots("fp", SETTINGS) is None
    cache.put_shots("fp", SETTINGS, [0.8, 1.4])
    assert cache.get_shots("fp", dict(reversed(SETTINGS.items()))) == [0.8, 1.4]  # any order
    assert cache.get_shots("fp", {**SETTINGS, "threshold": 0.5}) is None
    assert cache.get_shots("other", SETTINGS) is None
    cache.put_shots("fp", SETTINGS, [])  # a video without cuts is an answer, not a miss
    assert cache.get_shots("fp", SETTINGS) == []
    cache.put_shots("other", SETTINGS, [2.0])
    cache.clear("fp")
    assert cache.get_shots("fp", SETTINGS) is None and cache.get_shots("other", SETTINGS) == [2.0]
    cache.close()


def test_a_v3_cache_gains_the_table_and_keeps_its_rows(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite3"
    AnalysisCache(path).close()
    raw = sqlite3.connect(path)
    for table in ("shots", "analysis_queue", "queue_state"):  # what v4 and later add
        raw.execute(f"DROP TABLE {table}")
    raw.execute("INSERT INTO library_roots (path, kind, added_at) VALUES ('/v', 'folder', 1)")
    raw.execute("PRAGMA user_version = 3")
    raw.commit()
    raw.close()
    cache = AnalysisCache(path)
    assert cache.recovered_from is None
    cache.put_shots("fp", SETTINGS, [1.0])
    assert cache.get_shots("fp", SETTINGS) == [1.0]
    assert cache.read(lambda c: c.execute("SELECT path FROM library_roots").fetchall()) == [
        ("/v",)]
    assert cache.read(lambda c: c.execute("PRAGMA user_version").fetchone()) == (sql.LATEST,)
    cache.close()
