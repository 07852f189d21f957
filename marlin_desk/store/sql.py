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
    library_roots   the folders and files the user added to the library (kind 'folder' or
              'file'), and single videos taken out of a folder root (kind 'exclude').
    library_videos  one row per video in the library, by content fingerprint (a moved or
              renamed file keeps its row and so its analyses): where it was last seen, its
              size and mtime there (a rescan re-hashes only files that changed), whether it
              was found by the last scan (online).
    search_state  the index's own flags ('stale': a window write could not update it).
    search_rows, search_fts  the full-text index (store/search_index.py): one row per
              analysed window's scene and per event, derived from `windows`, rebuildable.
    shots     (fingerprint, settings) -> times: JSON list of cut times (video seconds) found
              by the shot detector (media/shots.py) with those settings (canonical JSON);
              no model in the key: cuts depend on the picture alone.
    analysis_queue  the app's queue of library videos to analyse, by fingerprint (a moved file
              stays queued), in `position` order; `failed` holds the reason a video failed
              (kept in the queue, skipped, until retried or removed).
    queue_state  the queue's own flags ('paused').

windows, finds and search_rows rows go with their analysis (ON DELETE CASCADE; foreign_keys is
on); library rows never delete analyses, nor analyses library rows; shots rows stand alone (by
content), and `clear` removes them with the file's analyses.
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


# The full-text index: derived data, so it is created (and dropped, and re-filled) by these
# statements both in the v3 migration and whenever it is rebuilt (search_index.rebuild); a
# later schema change to it is a migration that calls search_index.rebuild again.
# Porter stemming over unicode61 (`jumps` finds `jumping`, accents folded); prefix indexes of 2
# and 3 characters keep the last word's prefix query fast.
CREATE_SEARCH_ROWS = """
    CREATE TABLE IF NOT EXISTS search_rows (
        id          INTEGER PRIMARY KEY,
        key         TEXT NOT NULL REFERENCES analyses(key) ON DELETE CASCADE,
        fingerprint TEXT NOT NULL,
        idx         INTEGER NOT NULL,
        kind        TEXT NOT NULL,
        start       REAL NOT NULL,
        end         REAL NOT NULL
    )"""
CREATE_SEARCH_ROWS_INDEX = ("CREATE INDEX IF NOT EXISTS search_rows_by_window "
                            "ON search_rows(key, idx)")
CREATE_SEARCH_FTS = """
    CREATE VIRTUAL TABLE IF NOT EXISTS search_fts USING fts5(
        text, tokenize = 'porter unicode61 remove_diacritics 2', prefix = '2 3')"""
# The FTS table first (it takes its shadow tables with it); then shadow tables left without it.
DROP_SEARCH = ("DROP TABLE IF EXISTS search_fts", "DROP TABLE IF EXISTS search_rows",
               *(f"DROP TABLE IF EXISTS search_fts_{part}"
                 for part in ("data", "idx", "content", "docsize", "config")))

INSERT_SEARCH_ROW = """
    INSERT INTO search_rows (key, fingerprint, idx, kind, start, end) VALUES (?, ?, ?, ?, ?, ?)"""
INSERT_SEARCH_TEXT = "INSERT INTO search_fts (rowid, text) VALUES (?, ?)"
UNINDEX_WINDOW_TEXT = """
    DELETE FROM search_fts
    WHERE rowid IN (SELECT id FROM search_rows WHERE key = ? AND idx = ?)"""
UNINDEX_WINDOW_ROWS = "DELETE FROM search_rows WHERE key = ? AND idx = ?"
# Rows whose analysis is gone (deleted: the cascade took search_rows, not the FTS rows).
PRUNE_SEARCH_TEXT = "DELETE FROM search_fts WHERE rowid NOT IN (SELECT id FROM search_rows)"
SELECT_ALL_WINDOWS = """
    SELECT w.key, a.fingerprint, w.idx, w.result FROM windows w JOIN analyses a ON a.key = w.key
    ORDER BY w.key, w.idx"""
SEARCH_STATE_GET = "SELECT value FROM search_state WHERE name = ?"
SEARCH_STATE_SET = "INSERT OR REPLACE INTO search_state (name, value) VALUES (?, ?)"
CREATE_SEARCH_STATE = """
    CREATE TABLE IF NOT EXISTS search_state (name TEXT PRIMARY KEY, value TEXT NOT NULL)"""


def _v3(conn: sqlite3.Connection) -> None:
    """The library (its folders and its videos, by content) and the full-text index of every
    window's scene and events, filled for what is already cached."""
    conn.execute("""
        CREATE TABLE library_roots (
            path     TEXT PRIMARY KEY,
            kind     TEXT NOT NULL,
            added_at REAL NOT NULL
        )""")
    conn.execute("""
        CREATE TABLE library_videos (
            fingerprint TEXT PRIMARY KEY,
            path        TEXT NOT NULL,
            size        INTEGER NOT NULL,
            mtime_ns    INTEGER NOT NULL,
            online      INTEGER NOT NULL,
            added_at    REAL NOT NULL,
            seen_at     REAL NOT NULL
        )""")
    conn.execute("CREATE INDEX library_videos_by_path ON library_videos(path)")
    conn.execute(CREATE_SEARCH_STATE)
    from marlin_desk.store import search_index  # it builds on the statements here

    search_index.create_and_fill(conn)


def _v4(conn: sqlite3.Connection) -> None:
    """Shot boundaries, by content fingerprint and detector settings (no model)."""
    conn.execute("""
        CREATE TABLE shots (
            fingerprint TEXT NOT NULL,
            settings    TEXT NOT NULL,
            times       TEXT NOT NULL,
            created_at  REAL NOT NULL,
            PRIMARY KEY (fingerprint, settings)
        ) WITHOUT ROWID""")


# MIGRATIONS[i] takes a database from user_version i to i + 1. Append only: never edit a released
# migration, since databases in the field have already run it.
def _v5(conn: sqlite3.Connection) -> None:
    """The app's analysis queue (library videos by fingerprint, in order) and its state."""
    conn.execute("""
        CREATE TABLE analysis_queue (
            fingerprint TEXT PRIMARY KEY,
            position    INTEGER NOT NULL,
            failed      TEXT,
            added_at    REAL NOT NULL
        )""")
    conn.execute("""
        CREATE TABLE queue_state (name TEXT PRIMARY KEY, value TEXT NOT NULL)""")


MIGRATIONS: list[Callable[[sqlite3.Connection], None]] = [_v1, _v2, _v3, _v4, _v5]
LATEST = len(MIGRATIONS)

# What the code below needs; checked after migrating so that a database whose user_version lies
# (hand-edited, half-restored) is treated as unusable rather than failing on every query.
EXPECTED_COLUMNS: dict[str, set[str]] = {
    "analyses": {"key", "fingerprint", "model_id", "revision", "precision", "settings",
                 "video_name", "video_path", "total_windows", "analysis", "created_at",
                 "updated_at", "completed_at"},
    "windows": {"key", "idx", "result", "finished_at"},
    "finds": {"key", "query", "spans", "extra", "created_at"},
    "library_roots": {"path", "kind", "added_at"},
    "library_videos": {"fingerprint", "path", "size", "mtime_ns", "online", "added_at",
                       "seen_at"},
    "shots": {"fingerprint", "settings", "times", "created_at"},
    "analysis_queue": {"fingerprint", "position", "failed", "added_at"},
    "queue_state": {"name", "value"},
}
# search_rows and search_fts are not checked here: they are derived, and a missing or damaged
# index is rebuilt (search_index.ensure), never a reason to set the whole cache aside.

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

# ---- shot boundaries --------------------------------------------------------------------------

UPSERT_SHOTS = """
    INSERT INTO shots (fingerprint, settings, times, created_at) VALUES (?, ?, ?, ?)
    ON CONFLICT (fingerprint, settings) DO UPDATE SET times = excluded.times,
                                                      created_at = excluded.created_at"""
SELECT_SHOTS = "SELECT times FROM shots WHERE fingerprint = ? AND settings = ?"
DELETE_ALL_SHOTS = "DELETE FROM shots"
DELETE_SHOTS_FOR = "DELETE FROM shots WHERE fingerprint = ?"

# ---- the library and its search ---------------------------------------------------------------

ADD_ROOT = """
    INSERT INTO library_roots (path, kind, added_at) VALUES (?, ?, ?)
    ON CONFLICT (path) DO UPDATE SET kind = excluded.kind"""
SELECT_ROOTS = "SELECT path, kind, added_at FROM library_roots ORDER BY path"
DELETE_ROOT = "DELETE FROM library_roots WHERE path = ?"

SELECT_LIBRARY_FILES = "SELECT path, fingerprint, size, mtime_ns FROM library_videos"
UPSERT_LIBRARY_VIDEO = """
    INSERT INTO library_videos (fingerprint, path, size, mtime_ns, online, added_at, seen_at)
    VALUES (:fingerprint, :path, :size, :mtime_ns, 1, :now, :now)
    ON CONFLICT (fingerprint) DO UPDATE SET path = excluded.path, size = excluded.size,
        mtime_ns = excluded.mtime_ns, online = 1, seen_at = excluded.seen_at"""
SET_OFFLINE = "UPDATE library_videos SET online = 0 WHERE fingerprint = ?"
DELETE_LIBRARY_VIDEO = "DELETE FROM library_videos WHERE fingerprint = ?"
SELECT_LIBRARY_VIDEOS = """
    SELECT fingerprint, path, size, online, added_at, seen_at FROM library_videos ORDER BY path"""
# Each library video's analyses, for its state: complete or not, windows planned and stored.
SELECT_LIBRARY_ANALYSES = """
    SELECT a.fingerprint, a.analysis IS NOT NULL, a.total_windows,
           (SELECT count(*) FROM windows w WHERE w.key = a.key)
    FROM analyses a WHERE a.fingerprint IN (SELECT fingerprint FROM library_videos)"""

# Stage one of the library search. bm25() is negative, lower is better; a scene row (the whole
# window's description) counts half an event row, so a matching event ranks above its window.
SEARCH = """
    SELECT r.id, r.fingerprint, r.key, r.idx, r.kind, r.start, r.end, f.text,
           bm25(search_fts) * (CASE r.kind WHEN 'scene' THEN 0.5 ELSE 1.0 END) AS score,
           v.path, v.online
    FROM search_fts f
    JOIN search_rows r ON r.id = f.rowid
    JOIN library_videos v ON v.fingerprint = r.fingerprint
    WHERE search_fts MATCH ?
    ORDER BY score, r.fingerprint, r.start
    LIMIT ?"""
# Which of these rows hold one word (a quoted FTS string): how much of a query a row covers.
ROWS_WITH_WORD = "SELECT rowid FROM search_fts WHERE search_fts MATCH ? AND rowid IN ({ids})"

# ---- the app's analysis queue -----------------------------------------------------------------

QUEUE_ROWS = """
    SELECT q.fingerprint, q.position, q.failed, v.path, v.online FROM analysis_queue q
    LEFT JOIN library_videos v ON v.fingerprint = q.fingerprint ORDER BY q.position"""
QUEUE_ADD = """
    INSERT INTO analysis_queue (fingerprint, position, failed, added_at) VALUES (?, ?, NULL, ?)
    ON CONFLICT (fingerprint) DO UPDATE SET failed = NULL"""
QUEUE_MAX_POSITION = "SELECT coalesce(max(position), 0) FROM analysis_queue"
QUEUE_MIN_POSITION = "SELECT coalesce(min(position), 0) FROM analysis_queue"
QUEUE_SET_POSITION = "UPDATE analysis_queue SET position = ? WHERE fingerprint = ?"
QUEUE_SET_FAILED = "UPDATE analysis_queue SET failed = ? WHERE fingerprint = ?"
QUEUE_REMOVE = "DELETE FROM analysis_queue WHERE fingerprint = ?"
QUEUE_STATE_GET = "SELECT value FROM queue_state WHERE name = ?"
QUEUE_STATE_SET = "INSERT OR REPLACE INTO queue_state (name, value) VALUES (?, ?)"
