"""Checks on written files, independent of the code under test: ffprobe, PyAV and raw MP4 atoms."""

from __future__ import annotations

import hashlib
import json
import struct
import subprocess
from pathlib import Path
from typing import Any

import av
import numpy as np


def ffprobe_json(ffprobe: str, path: Path) -> dict[str, Any]:
    out = subprocess.run([ffprobe, "-v", "error", "-show_streams", "-show_format", "-of", "json",
                          str(path)], capture_output=True, text=True, check=True).stdout
    return json.loads(out)


def stream(doc: dict[str, Any], kind: str) -> dict[str, Any] | None:
    return next((s for s in doc["streams"] if s["codec_type"] == kind), None)


def top_level_atoms(path: Path) -> list[str]:
    """The MP4 box types at the top level, in file order."""
    names = []
    with open(path, "rb") as fh:
        while True:
            head = fh.read(8)
            if len(head) < 8:
                return names
            size, kind = struct.unpack(">I4s", head)
            header = 8
            if size == 1:
                size = struct.unpack(">Q", fh.read(8))[0]
                header = 16
            names.append(kind.decode("latin-1"))
            if size == 0:
                return names
            fh.seek(size - header, 1)


def frames(path: Path, limit: int | None = None) -> list[tuple[float, np.ndarray]]:
    """(time in s, grey pixels) of decoded frames, as a player shows them (rotation applied)."""
    out = []
    with av.open(str(path)) as c:
        s = c.streams.video[0]
        for f in c.decode(s):
            img = f.to_ndarray(format="gray").astype(np.float32)
            rot = getattr(f, "rotation", 0) or 0
            if rot:
                img = np.rot90(img, k=round(rot / 90))
            out.append((float(f.pts * s.time_base), img))
            if limit and len(out) >= limit:
                break
    return out


def frame_times(path: Path) -> list[float]:
    with av.open(str(path)) as c:
        s = c.streams.video[0]
        return sorted(float(p.pts * s.time_base) for p in c.demux(s) if p.pts is not None)


def keyframe_times(path: Path) -> list[float]:
    with av.open(str(path)) as c:
        s = c.streams.video[0]
        return sorted(float(p.pts * s.time_base) for p in c.demux(s)
                      if p.pts is not None and p.is_keyframe)


def diff(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.mean(np.abs(a - b)))


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def video_duration(path: Path) -> float:
    with av.open(str(path)) as c:
        s = c.streams.video[0]
        return float(s.duration * s.time_base)
