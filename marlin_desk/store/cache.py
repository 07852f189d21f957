"""The persistent analysis cache: one SQLite file, so that a video is never analysed twice.

Why one module of over 400 lines: one class owns the connection rules (per thread, busy timeout,
IMMEDIATE writes, recovery of a damaged file); its SQL lives in sql.py, the index in
search_index.py.

Decisions, and why:
- Keyed by CacheKey.digest() (content fingerprint + model id + revision + precision + settings):
  a renamed or moved file hits; any change that alters the model's answers misses.
- Windows are committed one by one as they finish (WAL, synchronous=NORMAL): a crash or a kill
  loses at most the window being written, and `windows_done` lets the analysis resume there.
  NORMAL in WAL mode survives an application crash; only a power cut can lose the last commits,
  which for a cache costs a re-run of those windows.
- One connection per thread (threading.local), a busy timeout, and BEGIN IMMEDIATE for writes:
  the GUI's model worker, the export worker and a `marlin-desk` process in a terminal can all
  write at once without "database is locked" (IMMEDIATE takes the write lock up front, so a
  reader never has to upgrade and fail).
- A damaged database (not a database, truncated, failing its integrity check, foreign or newer
  schema, a migration that fails) is renamed aside with a timestamp and rebuilt empty. It is a
  cache: losing it costs time, never work, and the app must start. The rename keeps the evidence;
  `recovered_from` and `recovery_reason` tell the caller so it can say so.
- Stored JSON that no longer decodes (an older WindowResult form after an upgrade) is a miss,
  logged, never an exception.
"""

from __future__ import annotations

import json
import logging
import os
import sqlite3
import threading
import time
import weakref
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

from marlin_desk.core.errors import MarlinError
from marlin_desk.core.timeline import Analysis, Span, WindowResult
from marlin_desk.paths import cache_dir
from marlin_desk.store import search_index, sql
from marlin_desk.store.fingerprint import CacheKey, fingerprint

log = logging.getLogger(__name__)

DB_NAME = "analyses.sqlite3"
# Long enough to outlast another process's longest write (a migration, a clear + VACUUM).
BUSY_TIMEOUT_S = 15.0

_SQLITE_BUSY, _SQLITE_LOCKED, _SQLITE_CORRUPT, _SQLITE_NOTADB = 5, 6, 11, 26

T = TypeVar("T")


class CacheUnavailable(MarlinError):
    """The cache file cannot be opened or created at all (permissions, disk full...)."""


class _Unusable(Exception):
    """The file opens but is not a usable cache of ours; the message says why."""


def default_path() -> Path:
    """Where the cache lives unless told otherwise (MARLIN_DESK_CACHE moves it)."""
    return cache_dir() / DB_NAME


def _is_corruption(exc: sqlite3.Error) -> bool:
    """Only damage justifies moving the file aside; busy, locked, read-only or full do not."""
    code = getattr(exc, "sqlite_errorcode", None)
    return code is not None and code & 0xFF in (_SQLITE_CORRUPT, _SQLITE_NOTADB)


def _is_busy(exc: sqlite3.Error) -> bool:
    code = getattr(exc, "sqlite_errorcode", None)
    return code is not None and code & 0xFF in (_SQLITE_BUSY, _SQLITE_LOCKED)


def _iso(t: float | None) -> str | None:
    return None if t is None else datetime.fromtimestamp(t, UTC).isoformat(timespec="seconds")


@dataclass(frozen=True)
class CacheEntry:
    """One cached analysis as `cache list` and the Open path see it."""

    key: CacheKey
    digest: str  # as stored; equals key.digest()
    video_name: str  # where the file was last seen
    video_path: str
    windows_done: int
    total_windows: int
    complete: bool
    size_bytes: int  # stored JSON text, without SQLite's own overhead
    created_at: float
    updated_at: float

    def to_json(self) -> dict[str, Any]:
        return {
            "video": self.video_name, "video_path": self.video_path,
            "fingerprint": self.key.fingerprint, "key": self.digest,
            "model_id": self.key.model_id, "revision": self.key.revision,
            "precision": self.key.precision, "settings": self.key.settings,
            "windows_done": self.windows_done, "windows_total": self.total_windows,
            "complete": self.complete, "size_bytes": self.size_bytes,
            "created_at": _iso(self.created_at), "updated_at": _iso(self.updated_at),
        }


@dataclass(frozen=True)
class CachedFind:
    """A stored find answer: the ranked spans and whatever the finder kept beside them."""

    query: str
    spans: list[Span]
    extra: dict[str, Any] | None
    created_at: float


def normalise_query(query: str) -> str:
    """Spacing is not meaning: `dog  running ` and `dog running` share one cached answer. Case
    is kept, since the model sees it."""
    return " ".join(query.split())


@contextmanager
def _write(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """One committed transaction; the write lock is taken at BEGIN (see module docstring)."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            with suppress(sqlite3.Error):  # never hide the error that got us here
                conn.execute("ROLLBACK")
        raise


class AnalysisCache:
    """Persistent cache of analyses, windows and find results. Safe to share between threads.

    Opening checks the file and migrates it; a damaged file is moved aside and rebuilt, and
    `recovered_from` then holds where it went (None otherwise). Raises CacheUnavailable only
    when no database can be created at `path` at all.
    """

    def __init__(self, path: str | os.PathLike[str] | None = None) -> None:
        self.path = Path(path) if path is not None else default_path()
        self.recovered_from: Path | None = None
        self.recovery_reason: str | None = None
        self._lock = threading.RLock()
        self._local = threading.local()
        self._generation = 0  # bumped by close() and recovery: threads then reconnect
        # Every thread's connection, so close() can close them all; the entry goes with its
        # thread (sqlite3 connections cannot be weakly referenced, threads can).
        self._conns: weakref.WeakKeyDictionary[threading.Thread, sqlite3.Connection] = (
            weakref.WeakKeyDictionary())
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise CacheUnavailable(f"cannot create the cache folder {self.path.parent}: "
                                   f"{exc.strerror or exc}") from exc
        self._adopt(self._open_checked())

    # ---- public API ---------------------------------------------------------------------------

    def put_window(self, key: CacheKey, total_windows: int, video_path: str | os.PathLike[str],
                   window: WindowResult) -> None:
        """Store one finished window and commit at once, so that a crash loses nothing done."""
        if not 0 <= window.index < total_windows:
            raise ValueError(f"window {window.index} outside 0..{total_windows - 1}")
        params = self._analysis_params(key, total_windows, video_path)
        result = _dumps(window.to_json())

        def op(conn: sqlite3.Connection, index: bool) -> None:
            with _write(conn):
                conn.execute(sql.UPSERT_ANALYSIS, params)
                conn.execute(sql.UPSERT_WINDOW, (params["key"], window.index, result, time.time()))
                _index(conn, index, params["key"], key.fingerprint, [window])

        self._run_indexed(op)

    def windows_done(self, key: CacheKey) -> dict[int, WindowResult]:
        """The windows already stored, by index: what a resumed analysis can skip."""
        rows = self._run(lambda c: c.execute(sql.SELECT_WINDOWS, (key.digest(),)).fetchall())
        done: dict[int, WindowResult] = {}
        for idx, text in rows:
            window = _decode(WindowResult.from_json, text, f"window {idx}")
            if window is not None:
                done[int(idx)] = window
        return done

    def complete(self, key: CacheKey, analysis: Analysis) -> None:
        """Mark the analysis complete with its merged form; its windows are stored too (in the
        same transaction), so windows_done and `cache list` agree with it."""
        # Only a new row takes its place from here; Analysis.video may be a bare name.
        video = analysis.video or ""
        params = self._analysis_params(key, len(analysis.windows),
                                       video if os.path.isabs(video) else "")
        params["video_name"] = params["video_name"] or Path(video).name
        doc = _dumps(analysis.to_json())
        windows = [(params["key"], w.index, _dumps(w.to_json()), params["now"])
                   for w in analysis.windows]

        def op(conn: sqlite3.Connection, index: bool) -> None:
            with _write(conn):
                conn.execute(sql.ENSURE_ANALYSIS, params)
                conn.executemany(sql.UPSERT_WINDOW, windows)
                _index(conn, index, params["key"], key.fingerprint, analysis.windows)
                conn.execute(sql.MARK_COMPLETE, (doc, params["now"], params["now"],
                                                 len(analysis.windows), params["key"]))

        self._run_indexed(op)

    def get_analysis(self, key: CacheKey) -> Analysis | None:
        """The merged analysis if it is complete; None for a partial or absent one."""
        row = self._run(lambda c: c.execute(sql.SELECT_ANALYSIS, (key.digest(),)).fetchone())
        return None if row is None else _decode(Analysis.from_json, row[0], "analysis")

    def put_find(self, key: CacheKey, query: str, spans: Sequence[Span],
                 extra: dict[str, Any] | None = None) -> None:
        """Store a find answer for one query (replacing an older one for the same query)."""
        params = self._analysis_params(key, 0, "")
        doc = _dumps([s.to_json() for s in spans])
        extra_doc = None if extra is None else _dumps(extra)

        def op(conn: sqlite3.Connection) -> None:
            with _write(conn):
                conn.execute(sql.ENSURE_ANALYSIS, params)
                conn.execute(sql.UPSERT_FIND, (params["key"], normalise_query(query), doc,
                                               extra_doc, params["now"]))

        self._run(op)

    def get_find(self, key: CacheKey, query: str) -> CachedFind | None:
        """The stored answer for this query, or None."""
        q = normalise_query(query)
        row = self._run(lambda c: c.execute(sql.SELECT_FIND, (key.digest(), q)).fetchone())
        if row is None:
            return None
        spans = _decode(lambda d: [Span.from_json(s) for s in d], row[0], f"find {q!r}")
        extra = _decode(dict, row[1], f"find {q!r} extra") if row[1] is not None else None
        return None if spans is None else CachedFind(q, spans, extra, float(row[2]))

    def put_shots(self, fingerprint: str, settings: dict[str, Any],
                  times: Sequence[float]) -> None:
        """Store a video's shot boundaries (cut times, video seconds) for these detector
        settings, replacing older ones for the same settings."""
        doc = _dumps([float(t) for t in times])
        key = (fingerprint, _settings_json(settings))

        def op(conn: sqlite3.Connection) -> None:
            with _write(conn):
                conn.execute(sql.UPSERT_SHOTS, (*key, doc, time.time()))

        self._run(op)

    def get_shots(self, fingerprint: str, settings: dict[str, Any]) -> list[float] | None:
        """The stored cut times for this content and these settings, or None (a miss)."""
        key = (fingerprint, _settings_json(settings))
        row = self._run(lambda c: c.execute(sql.SELECT_SHOTS, key).fetchone())
        if row is None:
            return None
        return _decode(lambda d: [float(t) for t in d], row[0], "shots")

    def entries(self, fingerprint: str | None = None) -> list[CacheEntry]:
        """Every cached analysis (or one file's), complete ones first, most recent first."""
        if fingerprint is None:
            rows = self._run(lambda c: c.execute(sql.SELECT_ENTRIES).fetchall())
        else:
            rows = self._run(lambda c: c.execute(sql.SELECT_ENTRIES_FOR,
                                                 (fingerprint,)).fetchall())
        return [_entry(row) for row in rows]

    def lookup(self, video_path: str | os.PathLike[str]) -> list[CacheEntry]:
        """What the cache holds for this file, found by content alone (no model, no settings):
        the Open path calls this, then get_analysis(entry.key). Records where the file is now."""
        fp = fingerprint(video_path)
        where = os.path.abspath(video_path)

        def op(conn: sqlite3.Connection) -> None:
            with _write(conn):
                conn.execute(sql.TOUCH_BY_FINGERPRINT, (Path(where).name, where, fp, where))

        try:
            self._run(op)
        except sqlite3.OperationalError as exc:  # a name not recorded must not block Open
            log.info("analysis cache: last-seen path not recorded: %s", exc)
        return self.entries(fp)

    def discard(self, key: CacheKey) -> bool:
        """Forget one analysis (to redo it from scratch); True if there was one."""
        return self._run_indexed(lambda c, index: _delete(c, sql.DELETE_ANALYSIS,
                                                          (key.digest(),), index)) > 0

    def clear(self, fingerprint: str | None = None) -> int:
        """Remove every analysis, or those of one file; returns how many. Frees the disk space."""
        if fingerprint is None:
            removed = self._run_indexed(lambda c, index: _delete(c, sql.DELETE_ALL, (), index))
        else:
            removed = self._run_indexed(lambda c, index: _delete(c, sql.DELETE_FINGERPRINT,
                                                                 (fingerprint,), index))
        self._run(lambda c: _delete_shots(c, fingerprint))
        if removed:
            self._compact()
        return removed

    def read(self, op: Callable[[sqlite3.Connection], T]) -> T:
        """Run `op` on this thread's connection (for the library's own queries)."""
        return self._run(op)

    def write(self, op: Callable[[sqlite3.Connection], T]) -> T:
        """Run `op` in one committed write transaction (for the library's own writes)."""

        def in_transaction(conn: sqlite3.Connection) -> T:
            with _write(conn):
                return op(conn)

        return self._run(in_transaction)

    def close(self) -> None:
        """Close every thread's connection. Call when no other thread is using the cache; a
        later call on this object reconnects."""
        with self._lock:
            self._generation += 1
            for conn in list(self._conns.values()):
                _close_quietly(conn)
            self._conns.clear()
            self._local = threading.local()

    def __enter__(self) -> AnalysisCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ---- connections ----------------------------------------------------------------------

    def _connect(self) -> sqlite3.Connection:
        """A bare connection with our per-connection settings (journal_mode is per file)."""
        conn = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_S, isolation_level=None,
                               check_same_thread=False)
        try:
            conn.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
            conn.execute("PRAGMA foreign_keys = ON")
            conn.execute("PRAGMA synchronous = NORMAL")
        except BaseException:
            conn.close()
            raise
        return conn

    def _conn(self) -> sqlite3.Connection:
        """This thread's connection, made on first use (and again after close or recovery)."""
        local = self._local
        conn: sqlite3.Connection | None = getattr(local, "conn", None)
        if conn is not None and local.generation == self._generation:
            return conn
        if conn is not None:
            _close_quietly(conn)
        with self._lock:
            try:
                conn = self._connect()
            except sqlite3.Error as exc:
                if isinstance(exc, sqlite3.DatabaseError) and _is_corruption(exc):
                    raise  # damage reached at reconnect (the schema's pages): _run recovers
                raise CacheUnavailable(f"cannot open the analysis cache {self.path}: {exc}") \
                    from exc
            self._adopt(conn)
        return conn

    def _adopt(self, conn: sqlite3.Connection) -> None:
        with self._lock:
            self._local.conn = conn
            self._local.generation = self._generation
            self._conns[threading.current_thread()] = conn

    def _run(self, op: Callable[[sqlite3.Connection], T]) -> T:
        """Run one operation; if the file turns out damaged mid-session, rebuild it and retry
        once on the fresh database (a write lands there, a read becomes a miss)."""
        generation = self._generation
        try:
            return op(self._conn())
        except sqlite3.DatabaseError as exc:
            if not _is_corruption(exc):
                raise
            self._recover_running(generation, f"became unreadable ({exc})")
        return op(self._conn())

    def _run_indexed(self, op: Callable[[sqlite3.Connection, bool], T]) -> T:
        """A write that also updates the search index: `op(conn, True)`. If that fails, the
        index may be what is damaged (or missing), so the write is done again without it,
        `op(conn, False)`, which marks the index stale; only a failure then is the cache's."""

        def attempt(conn: sqlite3.Connection) -> T:
            try:
                return op(conn, True)
            except sqlite3.DatabaseError as exc:
                if _is_busy(exc):
                    raise
                log.warning("search index not updated (it will be rebuilt): %s", exc)
            return op(conn, False)

        return self._run(attempt)

    # ---- opening, checking, migrating, recovering ---------------------------------------------

    def _open_checked(self) -> sqlite3.Connection:
        """Open, check and migrate; on damage move the file aside and start anew (once)."""
        try:
            return self._try_open()
        except _Unusable as exc:
            reason = str(exc)
        except sqlite3.DatabaseError as exc:
            if not _is_corruption(exc):
                raise CacheUnavailable(f"cannot open the analysis cache {self.path}: {exc}") \
                    from exc
            reason = f"is unreadable ({exc})"
        self._move_aside(reason)
        try:
            return self._try_open()
        except (_Unusable, sqlite3.Error) as exc:
            raise CacheUnavailable(f"cannot create the analysis cache {self.path}: {exc}") \
                from exc

    def _try_open(self) -> sqlite3.Connection:
        conn = self._connect()
        try:
            _check(conn)
            conn.execute("PRAGMA journal_mode = WAL")
            _migrate(conn)
            _check_columns(conn)
            _ensure_search_index(conn)
        except BaseException:
            _close_quietly(conn)
            raise
        return conn

    def _recover_running(self, generation: int, reason: str) -> None:
        """Damage found mid-session. Only the first thread to see it moves the file; the others
        find the generation changed and simply reconnect to the rebuilt one."""
        with self._lock:
            if generation != self._generation:
                return
            self._generation += 1
            _close_quietly(getattr(self._local, "conn", None))
            self._local.conn = None
            self._move_aside(reason)
            self._adopt(self._open_checked())

    def _move_aside(self, reason: str) -> None:
        """Rename the damaged file (and its WAL) to `<name>.corrupt-<timestamp>`.

        The WAL must go with it: a stale WAL beside a new database would be replayed into it.
        """
        stamp = time.strftime("%Y%m%d-%H%M%S")
        target = self.path.with_name(f"{self.path.name}.corrupt-{stamp}")
        n = 1
        while target.exists():
            target = self.path.with_name(f"{self.path.name}.corrupt-{stamp}-{n}")
            n += 1
        try:
            if self.path.exists():
                os.replace(self.path, target)
            for suffix in ("-wal", "-journal"):
                side = Path(f"{self.path}{suffix}")
                if side.exists():
                    os.replace(side, Path(f"{target}{suffix}"))
            Path(f"{self.path}-shm").unlink(missing_ok=True)  # index of the WAL: rebuilt anyway
        except OSError as exc:
            raise CacheUnavailable(f"the analysis cache {self.path} {reason} and cannot be moved "
                                   f"aside: {exc.strerror or exc}") from exc
        log.warning("analysis cache %s %s; moved it to %s and started a new one",
                    self.path, reason, target)
        self.recovered_from = target
        self.recovery_reason = reason

    def _compact(self) -> None:
        """Give freed pages back to the disk. Best effort: another process reading the cache at
        this moment only delays it to the next clear."""
        try:
            conn = self._conn()
            conn.execute("VACUUM")
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        except sqlite3.OperationalError as exc:
            log.info("analysis cache not compacted: %s", exc)

    def _analysis_params(self, key: CacheKey, total_windows: int,
                         video_path: str | os.PathLike[str]) -> dict[str, Any]:
        where = os.path.abspath(video_path) if str(video_path) else ""
        return {"key": key.digest(), "fingerprint": key.fingerprint, "model_id": key.model_id,
                "revision": key.revision, "precision": key.precision,
                "settings": key.settings_json(), "video_name": Path(where).name if where else "",
                "video_path": where, "total_windows": total_windows, "now": time.time()}


# ---- helpers without state --------------------------------------------------------------------

def _check(conn: sqlite3.Connection) -> None:
    """Is this our cache, readable and whole? Raises _Unusable, or sqlite3 errors for damage."""
    app_id = conn.execute("PRAGMA application_id").fetchone()[0]  # garbage fails here
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    if app_id not in (0, sql.APPLICATION_ID):
        raise _Unusable(f"belongs to another program (application_id {app_id:#x})")
    if version > sql.LATEST:
        raise _Unusable(f"has schema v{version}, newer than this version knows (v{sql.LATEST})")
    if version == 0 and conn.execute(sql.USER_TABLES).fetchone()[0]:
        raise _Unusable("holds tables that are not an analysis cache")
    report = [row[0] for row in conn.execute("PRAGMA quick_check").fetchall()]
    if report != ["ok"]:
        problems = [line for text in report for line in str(text).splitlines()
                    if line and not line.startswith("***")] or ["no detail"]
        more = f" and {len(problems) - 1} more problems" if len(problems) > 1 else ""
        raise _Unusable(f"failed its integrity check ({problems[0]}{more})")


def _migrate(conn: sqlite3.Connection) -> None:
    """Bring the schema to sql.LATEST in one transaction: all steps or none. The version is read
    under the write lock, so two processes opening an old file at once migrate it once."""
    with _write(conn):
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        if version >= sql.LATEST:
            return
        try:
            for migration in sql.MIGRATIONS[version:]:
                migration(conn)
        except sqlite3.Error as exc:
            if _is_busy(exc):
                raise
            raise _Unusable(f"could not be migrated from schema v{version} ({exc})") from exc
        conn.execute(f"PRAGMA user_version = {sql.LATEST}")
        conn.execute(f"PRAGMA application_id = {sql.APPLICATION_ID}")
    if version:
        log.info("analysis cache migrated from schema v%d to v%d", version, sql.LATEST)


def _check_columns(conn: sqlite3.Connection) -> None:
    for table, expected in sql.EXPECTED_COLUMNS.items():
        have = {row[0] for row in conn.execute(sql.TABLE_COLUMNS, (table,))}
        if not expected <= have:
            raise _Unusable(f"lacks {table} columns {sorted(expected - have)}")


def _ensure_search_index(conn: sqlite3.Connection) -> None:
    """A missing or stale search index is rebuilt at open; failing that, the cache still opens
    (searching retries the rebuild), since the index is derived and the analyses are not."""
    try:
        search_index.ensure(conn)
    except sqlite3.Error as exc:
        if _is_busy(exc):
            raise
        log.warning("search index could not be rebuilt at open: %s", exc)


def _index(conn: sqlite3.Connection, index: bool, key: str, fp: str,
           windows: Sequence[WindowResult]) -> None:
    if index:
        search_index.index_windows(conn, key, fp, windows)
    else:
        search_index.mark_stale(conn)


def _delete(conn: sqlite3.Connection, statement: str, params: tuple[Any, ...],
            index: bool) -> int:
    with _write(conn):
        removed = conn.execute(statement, params).rowcount
        if removed:
            (search_index.prune if index else search_index.mark_stale)(conn)
        return removed


def _delete_shots(conn: sqlite3.Connection, fingerprint: str | None) -> None:
    with _write(conn):
        if fingerprint is None:
            conn.execute(sql.DELETE_ALL_SHOTS)
        else:
            conn.execute(sql.DELETE_SHOTS_FOR, (fingerprint,))


def _settings_json(settings: dict[str, Any]) -> str:
    """Canonical JSON of detector settings: the same settings in any order are one key."""
    return json.dumps(settings, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _entry(row: Sequence[Any]) -> CacheEntry:
    (digest, fp, model_id, revision, precision, settings, video_name, video_path, total,
     complete, created_at, updated_at, done, size) = row
    key = CacheKey(fp, model_id, revision, precision, json.loads(settings))
    return CacheEntry(key, digest, video_name, video_path, int(done), int(total), bool(complete),
                      int(size), float(created_at), float(updated_at))


def _dumps(doc: Any) -> str:
    return json.dumps(doc, ensure_ascii=False, separators=(",", ":"))


def _decode(build: Callable[[Any], T], text: str, what: str) -> T | None:
    """Stored JSON that no longer fits today's classes is a cache miss, not an error."""
    try:
        return build(json.loads(text))
    except (ValueError, KeyError, TypeError) as exc:
        log.warning("analysis cache: ignoring stored %s that no longer decodes: %s", what, exc)
        return None


def _close_quietly(conn: sqlite3.Connection | None) -> None:
    if conn is None:
        return
    try:
        conn.close()
    except sqlite3.Error as exc:  # closing must never be the thing that fails
        log.debug("closing a cache connection: %s", exc)
