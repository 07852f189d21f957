"""Transcripts in the analysis cache's database: chunk by chunk while Whisper works, the merged
Transcript once complete, and every chunk's speech in the library's full-text index.

Keyed like analyses by a CacheKey (content fingerprint, Whisper model id and revision, compute
type as the precision, and the settings that change the words), so a renamed or moved file
finds its transcript and any change that alters the words misses. Each finished chunk is
committed (with its index rows) at once: a killed run loses at most the chunk in progress, and
`chunks_done` lets the next run skip the rest. Writes go through the cache's own rules (one
connection per thread, IMMEDIATE transactions, recovery of a damaged file, and the index's
"redo the write without it and mark it stale" when the index is what fails).

The chunk JSON is the speech layer's (a span and Transcript segments); this module only needs
its `segments` (for the index) and hands it back as stored.
"""

from __future__ import annotations

import json
import logging
import os
import sqlite3
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from marlin_desk.core.transcript import Transcript
from marlin_desk.store import search_index, sql
from marlin_desk.store.cache import AnalysisCache, _decode, _dumps, _write
from marlin_desk.store.fingerprint import CacheKey

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class TranscriptEntry:
    """One stored transcript (complete or not), as a listing shows it."""

    key: CacheKey
    digest: str
    video_name: str
    video_path: str
    chunks_done: int
    total_chunks: int
    complete: bool
    created_at: float
    updated_at: float

    def to_json(self) -> dict[str, Any]:
        return {"video": self.video_name, "video_path": self.video_path,
                "fingerprint": self.key.fingerprint, "key": self.digest,
                "model_id": self.key.model_id, "revision": self.key.revision,
                "precision": self.key.precision, "settings": self.key.settings,
                "chunks_done": self.chunks_done, "chunks_total": self.total_chunks,
                "complete": self.complete}


class TranscriptStore:
    """The transcripts of one AnalysisCache (its file, connections and recovery)."""

    def __init__(self, cache: AnalysisCache) -> None:
        self.cache = cache

    def put_chunk(self, key: CacheKey, total_chunks: int, video_path: str | os.PathLike[str],
                  index: int, chunk: dict[str, Any]) -> None:
        """Store one finished chunk and index its speech, committed at once."""
        if not 0 <= index < max(1, total_chunks):
            raise ValueError(f"chunk {index} outside 0..{total_chunks - 1}")
        params = _params(key, total_chunks, video_path)
        doc = _dumps(chunk)

        def op(conn: sqlite3.Connection, index_it: bool) -> None:
            with _write(conn):
                conn.execute(sql.UPSERT_TRANSCRIPT, params)
                conn.execute(sql.UPSERT_CHUNK, (params["key"], index, doc, params["now"]))
                if index_it:
                    search_index.index_chunk(conn, params["key"], key.fingerprint, index, chunk)
                else:
                    search_index.mark_stale(conn)

        self.cache._run_indexed(op)

    def chunks_done(self, key: CacheKey) -> dict[int, dict[str, Any]]:
        """The chunks already stored, by index (their JSON): what a resumed run skips."""
        rows = self.cache.read(lambda c: c.execute(sql.SELECT_CHUNKS, (key.digest(),)).fetchall())
        done: dict[int, dict[str, Any]] = {}
        for idx, text in rows:
            doc = _decode(dict, text, f"transcript chunk {idx}")
            if doc is not None:
                done[int(idx)] = doc
        return done

    def complete(self, key: CacheKey, transcript: Transcript, total_chunks: int,
                 video_path: str | os.PathLike[str] = "") -> None:
        """Mark the transcript complete with its merged form (its chunks are stored already;
        a transcript of no chunks, such as a video without sound, is stored too)."""
        params = _params(key, total_chunks, video_path)
        doc = _dumps(transcript.to_json())

        def op(conn: sqlite3.Connection) -> None:
            conn.execute(sql.UPSERT_TRANSCRIPT, params)
            conn.execute(sql.COMPLETE_TRANSCRIPT, (doc, params["now"], params["now"],
                                                   params["key"]))

        self.cache.write(op)

    def get(self, key: CacheKey) -> Transcript | None:
        """The complete transcript for this key, or None (partial or absent)."""
        row = self.cache.read(lambda c: c.execute(sql.SELECT_TRANSCRIPT,
                                                  (key.digest(),)).fetchone())
        return None if row is None else _decode(Transcript.from_json, row[0], "transcript")

    def entries(self, fingerprint: str | None = None) -> list[TranscriptEntry]:
        """Every stored transcript (or one file's), complete ones first, most recent first."""
        statement = sql.SELECT_TRANSCRIPT_ENTRIES
        args: tuple[Any, ...] = ()
        if fingerprint is not None:
            statement += " WHERE t.fingerprint = ?"
            args = (fingerprint,)
        rows = self.cache.read(lambda c: c.execute(
            statement + sql.TRANSCRIPT_ENTRIES_ORDER, args).fetchall())
        return [_entry(row) for row in rows]

    def latest(self, fingerprint: str) -> tuple[CacheKey, Transcript] | None:
        """The most recent complete transcript of this content, whatever its model."""
        for entry in self.entries(fingerprint):
            if entry.complete:
                found = self.get(entry.key)
                if found is not None:
                    return entry.key, found
        return None

    def discard(self, key: CacheKey) -> bool:
        """Forget one transcript and its chunks (to redo it from scratch)."""
        return self._delete(sql.DELETE_TRANSCRIPT, (key.digest(),)) > 0

    def clear(self, fingerprint: str | None = None) -> int:
        """Remove every transcript, or one file's; how many."""
        if fingerprint is None:
            return self._delete(sql.DELETE_ALL_TRANSCRIPTS, ())
        return self._delete(sql.DELETE_TRANSCRIPTS_FOR, (fingerprint,))

    def _delete(self, statement: str, params: tuple[Any, ...]) -> int:
        def op(conn: sqlite3.Connection, index_it: bool) -> int:
            with _write(conn):
                removed = conn.execute(statement, params).rowcount
                if removed:
                    (search_index.prune if index_it else search_index.mark_stale)(conn)
                return int(removed)

        return self.cache._run_indexed(op)


def _params(key: CacheKey, total_chunks: int, video_path: str | os.PathLike[str]
            ) -> dict[str, Any]:
    where = os.path.abspath(video_path) if str(video_path) else ""
    return {"key": key.digest(), "fingerprint": key.fingerprint, "model_id": key.model_id,
            "revision": key.revision, "precision": key.precision,
            "settings": key.settings_json(), "video_name": Path(where).name if where else "",
            "video_path": where, "total_chunks": int(total_chunks), "now": time.time()}


def _entry(row: Sequence[Any]) -> TranscriptEntry:
    (digest, fp, model_id, revision, precision, settings, video_name, video_path, total,
     complete, created_at, updated_at, done) = row
    key = CacheKey(fp, model_id, revision, precision, json.loads(settings))
    return TranscriptEntry(key, digest, video_name, video_path, int(done), int(total),
                           bool(complete), float(created_at), float(updated_at))
