"""Which files are videos: the one list of video file extensions.

Every place that picks videos by name reads it from here: the library's folder scan, batch
analysis's folder scan and the app's Open dialog filter (`dialog_filter`). Containers that
PyAV/FFmpeg read and that cameras, phones, screen recorders and NLE exports write; a file with
another extension can still be opened by name, it is only not picked up from a folder.
"""

from __future__ import annotations

import os
from pathlib import Path

VIDEO_EXTENSIONS: frozenset[str] = frozenset({
    ".mp4", ".m4v", ".mov", ".qt", ".mkv", ".webm", ".avi", ".wmv", ".asf", ".flv", ".mpg",
    ".mpeg", ".m2v", ".mts", ".m2ts", ".ts", ".mxf", ".3gp", ".3g2", ".ogv", ".dv", ".vob",
    ".hevc", ".h264", ".264", ".y4m",
})


def is_video_name(path: str | os.PathLike[str]) -> bool:
    """True when the file's extension (any case) is a video container's."""
    return Path(path).suffix.lower() in VIDEO_EXTENSIONS


def is_hidden_name(name: str) -> bool:
    """Hidden files and folders (`.Trash`, `._clip.mp4` AppleDouble files on exFAT cards, our
    own `.partial` files) are never videos to pick up from a folder."""
    return name.startswith(".")


def dialog_filter() -> str:
    """A Qt file dialog filter naming every video extension, then all files."""
    patterns = " ".join(f"*{ext}" for ext in sorted(VIDEO_EXTENSIONS))
    return f"Videos ({patterns});;All files (*)"
