"""Every SQL text of the analysis cache: the schema's migrations and the statements.

Why one module: the schema and the statements that depend on it change together; a reviewer sees
both at once, and cache.py stays about connections, transactions and recovery.

Schema (version LATEST, see MIGRATIONS):

    analyses  one row per CacheKey (key = CacheKey.digest())
              fingerprint, model_id, revision, precision, settings (canonical JSON): the key's
              parts, kept so that `cache list` can show them and `clear --video` can find them;
              video_name, video_path: where the file was last seen (names change, content doesn't);
              total_windows; analysis: the merged Analysis JSON once complete, else NULL;
              created_at, updated_at, completed_at: unix seconds.
    windows   (key, idx) -> result: WindowResult JSON (it holds the raw answer and the parsed
              events), finished_at. One row per finished window, committed as it finishes.
    finds     (key, query) -> spans: JSON list of Span JSON; extra: JSON object or NULL.

windows and finds rows go with their analysis (ON DELETE CASCADE; foreign_keys is on).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

# Marks the file as ours ("MRLD"): a database some other program wrote at our path is recognised
# as foreign and moved aside instead of being migrated.
APPLICATION_ID = 0x4D524C44


def _v1(conn: sqlite3.Connection) -> None:
    """First schema: analyses, their windows, and find results."""
    conn.execute("""
        CREATE TABLE analyses (
            key           TEXT PRIMARY KEY,
            fingerprint   TEXT NOT NULL,
            model_id      TEXT NOT NULL,
            revision      TEXT NOT NULL,
            precision     TEXT NOT NULL,
            settings      TEXT NOT NULL,
            video_name    TEXT NOT NULL,
            total_windows INTEGER NOT NULL,
            analysis      TEXT,
            created_at    REAL NOT NULL,
            updated_at    REAL NOT NULL
        )""")
    conn.execute("""
        CREATE TABLE windows (
            key         TEXT NOT NULL REFERENCES analyses(key) ON DELETE CASCADE,
            idx         INTEGER NOT NULL,
            result      TEXT NOT NULL,
            finished_at REAL NOT NULL,
            PRIMARY KEY (key, idx)
        ) WITHOUT ROWID""")
    conn.execute("""
        CREATE TABLE finds (
            key        TEXT NOT NULL REFERENCES analyses(key) ON DELETE CASCADE,
            query      TEXT NOT NULL,
            spans      TEXT NOT NULL,
            created_at REAL NOT NULL,
            PRIMARY KEY (key, query)
        )""")


def _v2(conn: sqlite3.Connection) -> None:
    """Open-by-content and richer finds: an index to look analyses up by fingerprint alone (the
    Open path has nothing else), the last-seen path beside the name, when an analysis completed,
    and per-find extra data (scores' settings, timings)."""
    conn.execute("ALTER TABLE analyses ADD COLUMN video_path TEXT NOT NULL DEFAULT ''")
    conn.execute("ALTER TABLE analyses ADD COLUMN completed_at REAL")
    conn.execute("UPDATE analyses SET completed_at = updated_at WHERE analysis IS NOT NULL")
    conn.execute("ALTER TABLE finds ADD COLUMN extra TEXT")
    conn.execute("CREATE INDEX analyses_by_fingerprint ON analyses(fingerprint)")


# MIGRATIONS[i] takes a database from user_version i to i + 1. Append only: never edit a released
# migration, since databases in the field have already run it.
MIGRATIONS: list[Callable[[sqlite3.Connection], None]] = [_v1, _v2]
LATEST = len(MIGRATIONS)

# What the code below needs; checked after migrating so that a database whose user_version lies
# (hand-edited, half-restored) is treated as unusable rather than failing on every query.
EXPECTED_COLUMNS: dict[str, set[str]] = {
    "analyses": {"key", "fingerprint", "model_id", "revision", "precision", "settings",
                 "video_name", "video_path", "total_windows", "analysis", "created_at",
                 "updated_at", "completed_at"},
    "windows": {"key", "idx", "result", "finished_at"},
    "finds": {"key", "query", "spans", "extra", "created_at"},
}

# ---- statements -------------------------------------------------------------------------------

TABLE_COLUMNS = "SELECT name FROM pragma_table_info(?)"
USER_TABLES = "SELECT count(*) FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'"

UPSERT_ANALYSIS = """
    INSERT INTO analyses (key, fingerprint, model_id, revision, precision, settings, video_name,
                          video_path, total_windows, created_at, updated_at)
    VALUES (:key, :fingerprint, :model_id, :revision, :precision, :settings, :video_name,
            :video_path, :total_windows, :now, :now)
    ON CONFLICT (key) DO UPDATE SET
        video_name = excluded.video_name, video_path = excluded.video_path,
        total_windows = excluded.total_windows, updated_at = excluded.updated_at"""

# For rows a find or a completion may create without a prior window: keep what is there.
ENSURE_ANALYSIS = """
    INSERT OR IGNORE INTO analyses (key, fingerprint, model_id, revision, precision, settings,
                                    video_name, video_path, total_windows, created_at,
                                    updated_at)
    VALUES (:key, :fingerprint, :model_id, :revision, :precision, :settings, :video_name,
            :video_path, :total_windows, :now, :now)"""

UPSERT_WINDOW = """
    INSERT INTO windows (key, idx, result, finished_at) VALUES (?, ?, ?, ?)
    ON CONFLICT (key, idx) DO UPDATE SET result = excluded.result,
                                         finished_at = excluded.finished_at"""

SELECT_WINDOWS = "SELECT idx, result FROM windows WHERE key = ? ORDER BY idx"

MARK_COMPLETE = """
    UPDATE analyses SET analysis = ?, completed_at = ?, updated_at = ?,
                        total_windows = max(total_windows, ?)
    WHERE key = ?"""

SELECT_ANALYSIS = "SELECT analysis FROM analyses WHERE key = ? AND analysis IS NOT NULL"

UPSERT_FIND = """
    INSERT INTO finds (key, query, spans, extra, created_at) VALUES (?, ?, ?, ?, ?)
    ON CONFLICT (key, query) DO UPDATE SET spans = excluded.spans, extra = excluded.extra,
                                           created_at = excluded.created_at"""

SELECT_FIND = "SELECT spans, extra, created_at FROM finds WHERE key = ? AND query = ?"

TOUCH_BY_FINGERPRINT = """
    UPDATE analyses SET video_name = ?, video_path = ? WHERE fingerprint = ? AND video_path != ?"""

# Size: the bytes of stored JSON text (what the entry costs, without SQLite's page overhead).
_ENTRIES = """
    SELECT a.key, a.fingerprint, a.model_id, a.revision, a.precision, a.settings,
           a.video_name, a.video_path, a.total_windows, a.analysis IS NOT NULL AS complete,
           a.created_at, a.updated_at,
           (SELECT count(*) FROM windows w WHERE w.key = a.key) AS windows_done,
           length(CAST(coalesce(a.analysis, '') AS BLOB))
           + (SELECT coalesce(sum(length(CAST(w.result AS BLOB))), 0)
              FROM windows w WHERE w.key = a.key)
           + (SELECT coalesce(sum(length(CAST(f.spans AS BLOB))
                                  + length(CAST(coalesce(f.extra, '') AS BLOB))), 0)
              FROM finds f WHERE f.key = a.key) AS size_bytes
    FROM analyses a"""
_ENTRIES_ORDER = " ORDER BY complete DESC, a.updated_at DESC, a.key"
SELECT_ENTRIES = _ENTRIES + _ENTRIES_ORDER
SELECT_ENTRIES_FOR = _ENTRIES + " WHERE a.fingerprint = ?" + _ENTRIES_ORDER

DELETE_ANALYSIS = "DELETE FROM analyses WHERE key = ?"
DELETE_ALL = "DELETE FROM analyses"
DELETE_FINGERPRINT = "DELETE FROM analyses WHERE fingerprint = ?"
