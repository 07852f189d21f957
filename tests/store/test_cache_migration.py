"""Schema versions: a v1 file from an older release is migrated in place, keeping its data."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from marlin_desk.core.timeline import Span
from marlin_desk.store import AnalysisCache, CacheKey
from marlin_desk.store import sql as schema

from .conftest import make_analysis, make_window

# The v1 schema exactly as release 1 wrote it. Frozen here on purpose: the test must keep
# describing old files even if someone edits sql._v1 by mistake.
V1_SCHEMA = """
CREATE TABLE analyses (
    key TEXT PRIMARY KEY, fingerprint TEXT NOT NULL, model_id TEXT NOT NULL,
    revision TEXT NOT NULL, precision TEXT NOT NULL, settings TEXT NOT NULL,
    video_name TEXT NOT NULL, total_windows INTEGER NOT NULL, analysis TEXT,
    created_at REAL NOT NULL, updated_at REAL NOT NULL);
CREATE TABLE windows (
    key TEXT NOT NULL REFERENCES analyses(key) ON DELETE CASCADE, idx INTEGER NOT NULL,
    result TEXT NOT NULL, finished_at REAL NOT NULL, PRIMARY KEY (key, idx)) WITHOUT ROWID;
CREATE TABLE finds (
    key TEXT NOT NULL REFERENCES analyses(key) ON DELETE CASCADE, query TEXT NOT NULL,
    spans TEXT NOT NULL, created_at REAL NOT NULL, PRIMARY KEY (key, query));
PRAGMA user_version = 1;
PRAGMA application_id = 1297239108;
"""

COMPLETE = CacheKey("a" * 64, "marlin/Marlin-2B", "r1", "bf16", {"window_s": 120})
PARTIAL = CacheKey("b" * 64, "marlin/Marlin-2B", "r1", "bf16", {"window_s": 120})


def _write_v1(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    raw = sqlite3.connect(path)
    raw.executescript(V1_SCHEMA)
    for key, analysis, total in ((COMPLETE, make_analysis(2, "old.mp4"), 2), (PARTIAL, None, 4)):
        raw.execute("INSERT INTO analyses VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                    (key.digest(), key.fingerprint, key.model_id, key.revision, key.precision,
                     key.settings_json(), "old.mp4", total,
                     None if analysis is None else json.dumps(analysis.to_json()), 100.0, 200.0))
        for i in range(2):
            raw.execute("INSERT INTO windows VALUES (?,?,?,?)",
                        (key.digest(), i, json.dumps(make_window(i).to_json()), 150.0))
    raw.execute("INSERT INTO finds VALUES (?,?,?,?)",
                (COMPLETE.digest(), "a dog", json.dumps([Span(1, 2, 0.5).to_json()]), 300.0))
    raw.commit()
    raw.close()


def test_v1_database_is_migrated_and_keeps_its_data(db_path: Path,
                                                    caplog: pytest.LogCaptureFixture) -> None:
    _write_v1(db_path)
    caplog.set_level("INFO", logger="marlin_desk.store")
    cache = AnalysisCache(db_path)
    assert cache.recovered_from is None
    assert "migrated from schema v1" in caplog.text
    conn = cache._conn()
    assert conn.execute("PRAGMA user_version").fetchone() == (schema.LATEST,)
    # Data from v1 reads back through today's API.
    analysis = cache.get_analysis(COMPLETE)
    assert analysis is not None and analysis.to_json() == make_analysis(2, "old.mp4").to_json()
    assert cache.get_analysis(PARTIAL) is None
    assert sorted(cache.windows_done(PARTIAL)) == [0, 1]
    found = cache.get_find(COMPLETE, "a dog")
    assert found is not None and found.extra is None and len(found.spans) == 1
    # What v2 added: completed_at backfilled, the fingerprint index, find extras, paths.
    assert conn.execute("SELECT completed_at FROM analyses WHERE key = ?",
                        (COMPLETE.digest(),)).fetchone() == (200.0,)
    plan = conn.execute("EXPLAIN QUERY PLAN SELECT key FROM analyses WHERE fingerprint = ?",
                        ("a" * 64,)).fetchall()
    assert "analyses_by_fingerprint" in str(plan)
    cache.put_find(COMPLETE, "a cat", [], {"top_k": 3})
    assert cache.get_find(COMPLETE, "a cat").extra == {"top_k": 3}  # type: ignore[union-attr]
    entries = {e.digest: e for e in cache.entries()}
    assert entries[PARTIAL.digest()].windows_done == 2
    assert entries[PARTIAL.digest()].video_path == ""
    cache.close()
    # Reopening does not migrate again.
    caplog.clear()
    AnalysisCache(db_path).close()
    assert "migrated" not in caplog.text


def test_fresh_database_is_at_the_latest_version(cache: AnalysisCache) -> None:
    conn = cache._conn()
    assert conn.execute("PRAGMA user_version").fetchone() == (schema.LATEST,)
    assert conn.execute("PRAGMA application_id").fetchone() == (schema.APPLICATION_ID,)
    assert schema.LATEST == len(schema.MIGRATIONS) >= 2


def test_frozen_v1_matches_the_first_migration(tmp_path: Path) -> None:
    """The frozen copy above and sql._v1 describe the same tables (guards both)."""
    frozen, ours = sqlite3.connect(tmp_path / "frozen.db"), sqlite3.connect(tmp_path / "ours.db")
    frozen.executescript(V1_SCHEMA)
    schema.MIGRATIONS[0](ours)

    def shape(conn: sqlite3.Connection) -> dict[str, list[tuple[object, ...]]]:
        return {t: conn.execute(f"PRAGMA table_info({t})").fetchall()
                for t in ("analyses", "windows", "finds")}

    assert shape(frozen) == shape(ours)
    frozen.close()
    ours.close()


def test_failing_migration_moves_the_file_aside(db_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    _write_v1(db_path)

    v1, v2, *later = schema.MIGRATIONS

    def broken(conn: sqlite3.Connection) -> None:  # fine on an empty file, fails on old data
        v2(conn)
        conn.execute("CREATE UNIQUE INDEX one_per_model ON analyses(model_id)")

    monkeypatch.setattr(schema, "MIGRATIONS", [v1, broken, *later])
    cache = AnalysisCache(db_path)
    assert cache.recovered_from is not None
    assert "could not be migrated from schema v1" in (cache.recovery_reason or "")
    with sqlite3.connect(cache.recovered_from) as old:  # left as it was: the step rolled back
        assert old.execute("PRAGMA user_version").fetchone() == (1,)
        assert old.execute("SELECT count(*) FROM analyses").fetchone() == (2,)
    old.close()
    assert cache.entries() == []
    cache.close()
