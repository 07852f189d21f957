"""The full-text index of every analysed window (its scene text and each of its events) and of
every transcribed chunk (each segment of speech: what was said).

Decisions, and why:
- Derived data, in the cache's own file: `search_rows` (one row per scene, event or speech
  segment: which analysis and window, or which transcript and chunk, its span in video time)
  and `search_fts`, an FTS5 table (porter stemming over unicode61, BM25 ranking) holding the
  text under the same rowid. Everything here can be thrown away and rebuilt from `windows` and
  `transcript_chunks`; nothing else is ever lost with it.
- A speech hit's span is narrowed at search time from its segment to the words that match the
  query (the chunk's stored word times), so "when does she say launch date" lands on those two
  words, not on the sentence around them.
- Updated in the transaction that stores the window (AnalysisCache.put_window and complete call
  `index_windows`), so the index never lags the cache. If the index is missing or damaged,
  the cache redoes the write without it and marks the index stale; the next open or search
  rebuilds it. The cache's own recovery (moving the whole file aside) must never be triggered
  by the index: SQLite reports a damaged FTS5 table as SQLITE_CORRUPT, the very code that
  means "the file is damaged" to the cache, and it may abort the whole transaction (so a
  savepoint cannot contain it): only a write that fails again without the index is damage.
- `ensure` (run at every open) checks cheaply: the tables exist, the stale flag is not set, the
  row counts of the two tables agree. A damaged index that passes those checks is found by the
  first query that reads it (`search` rebuilds and retries once) or by `library reindex`.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import re
import sqlite3
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from marlin_desk.core.timeline import WindowResult
from marlin_desk.store import sql
from marlin_desk.store.fts_query import match_expression, quoted, words

log = logging.getLogger(__name__)

STALE = "stale"
SCENE, EVENT, SPEECH = "scene", "event", "speech"


class IndexBroken(Exception):
    """The index could not be read or written; the message says why. Rebuild it."""


@dataclass(frozen=True)
class Candidate:
    """A stage-one hit: one event (or one window's scene) of one library video."""

    row: int  # search_rows.id
    fingerprint: str
    key: str  # the analysis (CacheKey digest) whose window said it, or the transcript's
    window: int  # that analysis's window index (a transcript's chunk index for SPEECH)
    kind: str  # EVENT, SCENE (the span is the whole window) or SPEECH (what was said)
    start: float  # video time
    end: float
    text: str
    score: float  # BM25, higher is better (SQLite's bm25() negated)
    path: str  # where the video was last seen
    online: bool


def window_rows(doc: dict[str, Any]) -> list[tuple[str, float, float, str]]:
    """(kind, start, end, text) for one window's JSON: its scene over the whole window, then
    each event over its own span (video time). Empty texts are not indexed."""
    rows: list[tuple[str, float, float, str]] = []
    scene = str(doc.get("scene") or "").strip()
    if scene:
        rows.append((SCENE, float(doc["start"]), float(doc["end"]), scene))
    for event in doc.get("events") or []:
        text = str(event.get("description") or "").strip()
        if text:
            rows.append((EVENT, float(event["start"]), float(event["end"]), text))
    return rows


def speech_rows(doc: dict[str, Any]) -> list[tuple[str, float, float, str]]:
    """(SPEECH, start, end, text) for one transcript chunk's JSON: each segment over its span
    (video time). Empty texts are not indexed."""
    rows: list[tuple[str, float, float, str]] = []
    for seg in doc.get("segments") or []:
        text = str(seg.get("text") or "").strip()
        if text:
            rows.append((SPEECH, float(seg["start"]), float(seg["end"]), text))
    return rows


def _insert(conn: sqlite3.Connection, key: str, fingerprint: str, idx: int,
            doc: dict[str, Any]) -> None:
    for kind, start, end, text in window_rows(doc):
        cur = conn.execute(sql.INSERT_SEARCH_ROW, (key, fingerprint, idx, kind, start, end))
        conn.execute(sql.INSERT_SEARCH_TEXT, (cur.lastrowid, text))


def _insert_speech(conn: sqlite3.Connection, key: str, fingerprint: str, idx: int,
                   doc: dict[str, Any]) -> None:
    for kind, start, end, text in speech_rows(doc):
        cur = conn.execute(sql.INSERT_SPEECH_ROW, (key, fingerprint, idx, kind, start, end))
        conn.execute(sql.INSERT_SEARCH_TEXT, (cur.lastrowid, text))


def index_chunk(conn: sqlite3.Connection, key: str, fingerprint: str, idx: int,
                doc: dict[str, Any]) -> None:
    """(Re)index one transcript chunk, inside the caller's write transaction (errors propagate
    as index_windows' do)."""
    conn.execute(sql.UNINDEX_CHUNK_TEXT, (key, idx))
    conn.execute(sql.UNINDEX_CHUNK_ROWS, (key, idx))
    _insert_speech(conn, key, fingerprint, idx, doc)


def index_windows(conn: sqlite3.Connection, key: str, fingerprint: str,
                  windows: Iterable[WindowResult]) -> None:
    """(Re)index these windows of one analysis, inside the caller's write transaction. SQLite
    errors propagate: the caller (AnalysisCache) then redoes its write without the index and
    calls mark_stale, since a damaged FTS5 table can abort the whole transaction."""
    for window in windows:
        conn.execute(sql.UNINDEX_WINDOW_TEXT, (key, window.index))
        conn.execute(sql.UNINDEX_WINDOW_ROWS, (key, window.index))
        _insert(conn, key, fingerprint, window.index, window.to_json())


def prune(conn: sqlite3.Connection) -> None:
    """Drop the text of rows whose analysis was deleted (inside the caller's transaction)."""
    conn.execute(sql.PRUNE_SEARCH_TEXT)


def mark_stale(conn: sqlite3.Connection) -> None:
    """The index missed a write: the next open or search rebuilds it."""
    conn.execute(sql.CREATE_SEARCH_STATE)
    conn.execute(sql.SEARCH_STATE_SET, (STALE, "1"))


def create_and_fill(conn: sqlite3.Connection) -> int:
    """Create the index tables and index every stored window and transcript chunk; the number
    of windows indexed. A window or chunk whose stored JSON no longer decodes is skipped (it is
    a cache miss anyway).

    In the middle of migrating an older file (before v6 made the transcripts table that the
    rows refer to) the tables are only created: v6 fills them."""
    conn.execute(sql.CREATE_SEARCH_STATE)
    conn.execute(sql.CREATE_SEARCH_ROWS)
    conn.execute(sql.CREATE_SEARCH_ROWS_INDEX)
    conn.execute(sql.CREATE_SEARCH_ROWS_SPEECH_INDEX)
    conn.execute(sql.CREATE_SEARCH_FTS)
    if not conn.execute(sql.HAS_TRANSCRIPTS).fetchone()[0]:
        return 0
    done = _index_stored(conn, sql.SELECT_ALL_WINDOWS, "window", window_rows, _insert)
    chunks = _index_stored(conn, sql.SELECT_ALL_CHUNKS, "chunk", speech_rows, _insert_speech)
    if chunks:
        log.info("search index: %d transcript chunks indexed", chunks)
    conn.execute(sql.SEARCH_STATE_SET, (STALE, "0"))
    return done


def _index_stored(conn: sqlite3.Connection, select: str, what: str,
                  rows_of: Callable[[Any], Any], insert: Callable[..., None]) -> int:
    """Index each stored (key, fingerprint, index, JSON) row `select` gives; how many were."""
    done = 0
    for key, fp, idx, text in conn.execute(select).fetchall():
        try:
            doc = json.loads(text)
            rows_of(doc)  # what would be indexed: a stored document that no longer fits fails
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            log.info("search index: %s %d of %s not indexed: %s", what, idx, key[:12], exc)
            continue
        insert(conn, key, fp, idx, doc)
        done += 1
    return done


def rebuild(conn: sqlite3.Connection) -> int:
    """Drop the index (whatever state it is in) and make it again from the stored windows, in
    one transaction of the caller's. Returns the windows indexed."""
    for statement in sql.DROP_SEARCH:
        conn.execute(statement)
    return create_and_fill(conn)


def health(conn: sqlite3.Connection) -> str | None:
    """Why the index needs a rebuild, or None when the cheap checks pass."""
    names = {row[0] for row in conn.execute(
        "SELECT name FROM sqlite_master WHERE name IN ('search_rows', 'search_fts', "
        "'search_state')")}
    missing = {"search_rows", "search_fts", "search_state"} - names
    if missing:
        return f"missing {', '.join(sorted(missing))}"
    try:
        row = conn.execute(sql.SEARCH_STATE_GET, (STALE,)).fetchone()
        if row is not None and row[0] == "1":
            return "marked stale by a failed update"
        rows = conn.execute("SELECT count(*) FROM search_rows").fetchone()[0]
        texts = conn.execute("SELECT count(*) FROM search_fts_docsize").fetchone()[0]
    except sqlite3.DatabaseError as exc:
        return f"unreadable ({exc})"
    if rows != texts:
        return f"out of step ({rows} rows, {texts} texts)"
    return None


def integrity(conn: sqlite3.Connection) -> str | None:
    """FTS5's own full check of the index against its text (slower: reads all of it)."""
    try:
        conn.execute("INSERT INTO search_fts (search_fts) VALUES ('integrity-check')")
    except sqlite3.DatabaseError as exc:
        return f"failed its integrity check ({exc})"
    return health(conn)


def ensure(conn: sqlite3.Connection) -> str | None:
    """Rebuild the index if the cheap checks fail (in its own write transaction); returns the
    reason it was rebuilt, or None."""
    reason = health(conn)
    if reason is None:
        return None
    conn.execute("BEGIN IMMEDIATE")
    try:
        reason = health(conn)  # another process may have rebuilt it meanwhile
        if reason is not None:
            windows = rebuild(conn)
            log.warning("search index %s: rebuilt from %d windows", reason, windows)
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    return reason


def search(conn: sqlite3.Connection, text: str, limit: int) -> list[Candidate]:
    """Stage one: the best `limit` rows for `text` among library videos, best first. Raises
    IndexBroken when the index cannot be read (the caller rebuilds it and asks again)."""
    expression = match_expression(text)
    if expression is None or limit <= 0:
        return []
    try:
        if not _state_ok(conn):
            raise IndexBroken("marked stale by a failed update")
        rows = conn.execute(sql.SEARCH, (expression, limit)).fetchall()
    except sqlite3.DatabaseError as exc:
        raise IndexBroken(str(exc)) from exc
    found = [Candidate(int(row), str(fp), str(key), int(idx), str(kind), float(start),
                       float(end), str(body), -float(score), str(path), bool(online))
             for row, fp, key, idx, kind, start, end, body, score, path, online in rows]
    return [_narrowed(conn, c, text) if c.kind == SPEECH else c for c in found]


def _narrowed(conn: sqlite3.Connection, c: Candidate, text: str) -> Candidate:
    """A speech hit's span brought from its segment down to the words that match the query
    (their stored word times); the segment's span when none can be matched."""
    row = conn.execute(sql.SELECT_CHUNK, (c.key, c.window)).fetchone()
    if row is None:
        return c
    try:
        doc = json.loads(row[0])
        spoken = [(float(w["start"]), float(w["end"]), str(w["text"]))
                  for seg in doc.get("segments") or [] for w in seg.get("words") or []
                  if float(w["start"]) < c.end and float(w["end"]) > c.start]
    except (ValueError, KeyError, TypeError, AttributeError):
        return c
    span = matching_span(spoken, words(text))
    if span is None:
        return c
    return dataclasses.replace(c, start=span[0], end=span[1])


def _stem(word: str) -> str:
    """A rough stem for matching a query word to a spoken word (the index's porter stemmer
    does the real matching; this only has to find which words of a hit it matched)."""
    for suffix in ("ing", "ed", "es", "s"):
        if len(word) > len(suffix) + 2 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def matching_span(spoken: list[tuple[float, float, str]], query: list[str]
                  ) -> tuple[float, float] | None:
    """(start, end) of the run of spoken words holding the most query words in the fewest
    words (the first such run; the last query word also matches as a prefix, as the index
    matches it), or None when none match."""
    if not spoken or not query:
        return None
    stems = [_stem(q) for q in query]

    def hit(word: str) -> int | None:
        w = _stem(re.sub(r"[^\w]+", "", word.casefold()))
        for i, q in enumerate(stems):
            if w == q or (i == len(stems) - 1 and w.startswith(query[-1])):
                return i
        return None

    marks = [(i, hit(w)) for i, (_s, _e, w) in enumerate(spoken)]
    marks = [(i, q) for i, q in marks if q is not None]
    if not marks:
        return None
    best: tuple[int, int, int, int] | None = None  # (-covered, words in the run, first, last)
    for a in range(len(marks)):
        covered: set[int] = set()
        for b in range(a, len(marks)):
            covered.add(marks[b][1])  # type: ignore[arg-type]
            first, last = marks[a][0], marks[b][0]
            candidate = (-len(covered), last - first + 1, first, last)
            if best is None or candidate < best:
                best = candidate
    assert best is not None
    return spoken[best[2]][0], spoken[best[3]][1]


def coverage(conn: sqlite3.Connection, text: str, rows: Iterable[int]) -> dict[int, int]:
    """How many of the query's words each of these rows holds (stemmed, as the index matches;
    the last word also as a prefix). Raises IndexBroken as search does."""
    ids = sorted({int(r) for r in rows})
    counts = dict.fromkeys(ids, 0)
    if not ids:
        return counts
    statement = sql.ROWS_WITH_WORD.format(ids=",".join("?" * len(ids)))
    found = words(text)
    try:
        for i, word in enumerate(found):
            expression = quoted(word) + (f" OR {quoted(word)}*" if i == len(found) - 1 else "")
            for (row,) in conn.execute(statement, (expression, *ids)):
                counts[int(row)] += 1
    except sqlite3.DatabaseError as exc:
        raise IndexBroken(str(exc)) from exc
    return counts


def _state_ok(conn: sqlite3.Connection) -> bool:
    row = conn.execute(sql.SEARCH_STATE_GET, (STALE,)).fetchone()
    return row is None or row[0] != "1"
