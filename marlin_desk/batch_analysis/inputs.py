"""Finding the videos: folders searched recursively, text lists of videos, lists of queries.

Folders are searched recursively (footage lives in `Day 1/Cam A/...`), for files with a video
extension; hidden files and folders are skipped (`._clip.mp4` AppleDouble files on exFAT cards,
our own `.partial` files). A text list takes every path it names, whatever its extension: the
user chose them. Order: natural (C2 before C10), the list's own order for lists.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from marlin_desk.core.errors import BadInput
from marlin_desk.core.media_types import VIDEO_EXTENSIONS, is_hidden_name, is_video_name

log = logging.getLogger(__name__)


def _natural_key(text: str) -> tuple[list[Any], str]:
    """C2 before C10, `Day 1` before `Day2`; case and spaces only break ties."""
    parts = [int(part) if part.isdigit() else part.casefold().replace(" ", "")
             for part in re.split(r"(\d+)", text)]
    return parts, text


def scan_folder(folder: str | os.PathLike[str], recursive: bool = True) -> list[str]:
    """Video files under `folder` (by extension), hidden names skipped, in natural order."""
    found: list[str] = []
    for root, dirs, files in os.walk(folder, onerror=lambda exc: log.warning("%s", exc)):
        dirs[:] = sorted((d for d in dirs if not d.startswith(".")), key=_natural_key) \
            if recursive else []
        for name in sorted(files, key=_natural_key):
            if not is_hidden_name(name) and is_video_name(name):
                found.append(os.path.join(root, name))
    return found


def read_list(path: str | os.PathLike[str]) -> list[str]:
    """Paths named in a text list: one a line, `#` comment lines and blank lines skipped,
    surrounding quotes removed, relative paths taken from the list's folder. A folder in the
    list stands for the videos under it."""
    if Path(path).suffix:
        what = f"a text list of videos (and {Path(path).suffix!r} is no video extension we know)"
    else:
        what = "a text list of videos"
    text = _read_text(path, what)
    base = Path(path).resolve().parent
    videos: list[str] = []
    for line in text.splitlines():
        entry = _unquote(line.strip())
        if not entry or entry.startswith("#"):
            continue
        full = base / Path(entry).expanduser()
        videos.extend(scan_folder(full) if full.is_dir() else [str(full)])
    return videos


def read_queries(path: str | os.PathLike[str]) -> list[str]:
    """Queries, one a line; blank lines and `#` comment lines skipped, repeats dropped."""
    text = _read_text(path, "a list of queries")
    queries = [" ".join(line.split()) for line in text.splitlines()]
    kept = list(dict.fromkeys(q for q in queries if q and not q.startswith("#")))
    if not kept:
        raise BadInput(f"{path} holds no queries (one a line; # starts a comment)")
    return kept


def discover(inputs: Sequence[str]) -> list[str]:
    """The videos that FOLDER, LIST and VIDEO arguments stand for: absolute paths, each file
    once (the first mention wins). BadInput when an argument is missing or nothing is found."""
    videos: list[str] = []
    for arg in inputs:
        path = Path(arg).expanduser()
        if path.is_dir():
            found = scan_folder(path)
            if not found:
                log.info("no video files in %s", arg)
            videos.extend(found)
        elif path.is_file():
            videos.extend([str(path)] if is_video_name(path) else read_list(path))
        else:
            raise BadInput(f"{arg} does not exist (give a folder, a video or a text list of "
                           "videos)")
    seen: set[str] = set()
    unique: list[str] = []
    for video in videos:
        real = os.path.realpath(video)
        if real not in seen:
            seen.add(real)
            unique.append(os.path.abspath(video))
    if not unique:
        raise BadInput(f"no video files in {', '.join(inputs)} (looked for "
                       f"{', '.join(sorted(VIDEO_EXTENSIONS)[:6])}... files)")
    return unique


def _read_text(path: str | os.PathLike[str], what: str) -> str:
    try:
        raw = Path(path).read_bytes()
    except OSError as exc:
        raise BadInput(f"cannot read {path}: {exc.strerror or exc}") from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        text = "\0"
    if "\0" in text:
        raise BadInput(f"{path} is not {what} (a UTF-8 text file, one entry a line)")
    return text


def _unquote(entry: str) -> str:
    if len(entry) >= 2 and entry[0] == entry[-1] and entry[0] in "\"'":
        return entry[1:-1]
    return entry
