"""Content fingerprint of a video file, and the cache key built on it.

Why a partial hash: hashing a whole 4 GB recording takes tens of seconds, and the cache exists so
that reopening a video shows its timeline at once. We hash the file size plus the first and the
last MiB instead (about 15 ms whatever the file size). Container metadata sits at one end or the
other (MP4 `moov` at the start after faststart, at the end otherwise; MKV/WebM segment info at the
start, cues near the end), and the size changes with almost any re-encode, trim or append.
What this misses: an edit in the middle of the file that keeps its exact size (a byte-patched
frame, a tool that rewrites samples in place). Editors' tools do not make such files in practice:
a re-encode, cut or append changes the size or the ends, and in-place metadata edits touch the
header, which is hashed. The cost of that rare false hit is a stale timeline, which the user
fixes by re-analysing; the speed is worth it.

Why not the path: a renamed or moved file must still hit the cache, and two different files can
live at the same path one after the other.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from marlin_desk.core.errors import BadInput

CHUNK = 1024 * 1024  # one MiB from each end
# Changing how the fingerprint is computed must change every fingerprint, never collide with an
# old one: the tag is hashed first.
_TAG = b"marlin-desk-fingerprint-v1\0"


def fingerprint(path: str | os.PathLike[str]) -> str:
    """Hex SHA-256 of (tag, size, first MiB, last MiB) of the file's content.

    Files of two MiB or less are hashed whole (the two ends overlap or touch).
    Raises BadInput when the file cannot be read: the caller can tell the user which file.
    """
    try:
        with open(path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            h = hashlib.sha256(_TAG)
            h.update(str(size).encode("ascii") + b"\0")
            h.update(f.read(CHUNK))
            if size > CHUNK:
                # Never re-read bytes already hashed: the tail starts after the head at worst.
                f.seek(max(size - CHUNK, CHUNK))
                h.update(f.read(CHUNK))
    except OSError as exc:
        raise BadInput(f"cannot read {path}: {exc.strerror or exc}") from exc
    return h.hexdigest()


def canonical_json(value: Any) -> str:
    """One text for one meaning: sorted keys, no spaces, integral floats written as ints.

    Why normalise floats: `{"window_s": 120}` from the command line and `{"window_s": 120.0}` from
    a settings file mean the same preprocessing and must give the same key.
    """
    return json.dumps(_normalise(value), sort_keys=True, separators=(",", ":"),
                      ensure_ascii=False, allow_nan=False)


def _normalise(value: Any) -> Any:
    if isinstance(value, bool) or value is None or isinstance(value, (int, str)):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"cache key settings cannot hold {value!r}")
        return int(value) if value.is_integer() else value
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for k, v in value.items():
            if not isinstance(k, str):
                raise TypeError(f"cache key settings need string keys, got {k!r}")
            out[k] = _normalise(v)
        return out
    if isinstance(value, (list, tuple)):
        return [_normalise(v) for v in value]
    raise TypeError(f"cache key settings must be JSON data, got {type(value).__name__}")


@dataclass(frozen=True)
class CacheKey:
    """Everything that changes what the model would answer for a file.

    settings holds the preprocessing: window length, overlap, the video budget dict, prompt
    version, and anything else that changes the frames or the prompt. It is normalised and copied
    on construction, so the key fails early on non-JSON values and later changes to the caller's
    dict cannot change the key.
    """

    fingerprint: str
    model_id: str
    revision: str
    precision: str  # the backend's numeric precision: "bf16", "fp16", "fp32", "gptq-int4"...
    settings: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "settings", json.loads(canonical_json(self.settings)))

    def digest(self) -> str:
        """Stable hex SHA-256 of the key's canonical JSON: the same on every run and machine."""
        doc = {"fingerprint": self.fingerprint, "model_id": self.model_id,
               "revision": self.revision, "precision": self.precision,
               "settings": self.settings}
        return hashlib.sha256(canonical_json(doc).encode("utf-8")).hexdigest()

    def settings_json(self) -> str:
        return canonical_json(self.settings)

    def __hash__(self) -> int:  # settings is a dict: hash by the digest instead
        return hash(self.digest())

    @classmethod
    def for_file(cls, path: str | Path, model_id: str, revision: str, precision: str,
                 settings: dict[str, Any] | None = None) -> CacheKey:
        """The key for a file on disk (fingerprints it: about 15 ms)."""
        return cls(fingerprint(path), model_id, revision, precision, dict(settings or {}))
