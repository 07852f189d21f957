"""Locate the FFmpeg binary used for export, and say which one it is.

Order: the MARLIN_DESK_FFMPEG environment variable (an explicit choice always wins), then `ffmpeg`
on PATH (the user's own build, usually the newest and with the most encoders), then the static
build bundled by imageio-ffmpeg (works offline on a bare machine). Probing never needs the binary:
it is done with PyAV, because imageio-ffmpeg ships no ffprobe.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from typing import Any, Literal

from marlin_desk.core.errors import MarlinError

ENV_VAR = "MARLIN_DESK_FFMPEG"

Source = Literal["env", "system", "bundled"]


@dataclass(frozen=True)
class FFmpegBinary:
    """One FFmpeg executable: where it is, where it came from and its version string."""

    path: str
    source: Source
    version: str

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "source": self.source, "version": self.version}

    def has_encoder(self, name: str) -> bool:
        return name in _listing(self.path, "-encoders")

    def has_filter(self, name: str) -> bool:
        return name in _listing(self.path, "-filters")


def find_ffmpeg() -> FFmpegBinary:
    """The FFmpeg to use now; raises MarlinError with a plain sentence when there is none."""
    return _find(os.environ.get(ENV_VAR) or "", os.environ.get("PATH", ""))


@functools.lru_cache(maxsize=8)
def _find(override: str, _path_env: str) -> FFmpegBinary:
    # Cached per (override, PATH) so that a changed environment is seen, but each binary is
    # started only once for its version.
    if override:
        path = shutil.which(override) or override
        if not (os.path.isfile(path) and os.access(path, os.X_OK)):
            raise MarlinError(f"{ENV_VAR} is set to {override!r}, which is not an executable file")
        return FFmpegBinary(path, "env", _version(path))
    system = shutil.which("ffmpeg")
    if system:
        return FFmpegBinary(system, "system", _version(system))
    try:
        import imageio_ffmpeg

        bundled = imageio_ffmpeg.get_ffmpeg_exe()
    except Exception as exc:  # noqa: BLE001 - any failure here means "no bundled binary"
        raise MarlinError(
            "FFmpeg not found: install ffmpeg, or the imageio-ffmpeg package, "
            f"or set {ENV_VAR} to an ffmpeg executable"
        ) from exc
    return FFmpegBinary(bundled, "bundled", _version(bundled))


def _version(path: str) -> str:
    """The version word of `ffmpeg -version` ("5.1.9-0+deb12u1", "n9.0.2-17-g...")."""
    try:
        out = subprocess.run([path, "-hide_banner", "-version"], capture_output=True, text=True,
                             timeout=30, check=False).stdout
    except (OSError, subprocess.SubprocessError) as exc:
        raise MarlinError(f"cannot run FFmpeg at {path}: {exc}") from exc
    match = re.match(r"ffmpeg version (\S+)", out)
    if not match:
        raise MarlinError(f"{path} does not look like FFmpeg (no version line)")
    return match.group(1)


@functools.lru_cache(maxsize=16)
def _listing(path: str, flag: str) -> frozenset[str]:
    """Names from `ffmpeg -encoders` / `-filters`: the second word of each table row."""
    out = subprocess.run([path, "-hide_banner", flag], capture_output=True, text=True,
                         timeout=30, check=False).stdout
    names = set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) >= 2 and not line.startswith(" =") and parts[0] != "------":
            names.add(parts[1])
    return frozenset(names)


@functools.lru_cache(maxsize=8)
def reads_option_files(path: str) -> bool:
    """Whether this FFmpeg takes an option's value from a file as `-/option FILE` (7.0 and
    later, and git builds); older ones have `-filter_complex_script FILE` instead."""
    match = re.match(r"n?(\d+)\.", _version(path))
    return match is None or int(match.group(1)) >= 7
