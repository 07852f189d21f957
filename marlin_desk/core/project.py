"""The project file an editor saves and reopens (`.marlin`, JSON): pure Python, no Qt.

A project records which video it is about (path and content fingerprint, so a moved file can be
recognised), where its analysis lives (a reference into the analysis cache, not a copy), the
editor's own version of the events (what subtitles are made from) and the clips with their in/out
points, names and export presets. Saving is atomic: a temporary file in the same folder is
written, flushed and renamed over the old one, so a crash never leaves half a project.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
import uuid
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from marlin_desk.core.errors import BadInput
from marlin_desk.core.reframe import Pin, check_mode, sorted_pins
from marlin_desk.core.timeline import Event, round_time

FORMAT = "marlin-desk-project"
SCHEMA_VERSION = 1
SUFFIX = ".marlin"
CLIP_SOURCES = ("event", "find", "marks", "manual")


def new_clip_id() -> str:
    return uuid.uuid4().hex[:12]


@dataclass(frozen=True)
class Clip:
    """One clip in the bin: a span of the source video and how to export it.

    `reframe` is the clip's own reframing mode (core.reframe: auto, centre, off; None: the
    preset's default) and `pins` the editor's keyframes of the crop (video times). Both are
    written to the project only when set, so older projects read unchanged and older apps
    ignore them."""

    start: float
    end: float
    name: str = ""
    preset: str = "original"
    source: str = "manual"  # where it came from: event, find, marks, library, manual
    id: str = field(default_factory=new_clip_id)
    video: str = ""  # another video's absolute path (a library result); "": the project's
    reframe: str | None = None
    pins: tuple[Pin, ...] = ()

    @property
    def duration(self) -> float:
        return self.end - self.start

    def with_times(self, start: float, end: float) -> Clip:
        return replace(self, start=start, end=end)

    def renamed(self, name: str) -> Clip:
        return replace(self, name=name)

    def with_preset(self, preset: str) -> Clip:
        return replace(self, preset=preset)

    def with_reframe(self, mode: str | None) -> Clip:
        return replace(self, reframe=None if mode is None else check_mode(mode))

    def with_pins(self, pins: tuple[Pin, ...] | list[Pin]) -> Clip:
        """The clip with these pins (sorted, one per time)."""
        return replace(self, pins=sorted_pins(pins))

    def video_of(self, project_video: str) -> str:
        """The file this clip is cut from."""
        return self.video or project_video

    def to_json(self, base: Path | None = None) -> dict[str, Any]:
        d: dict[str, Any] = {"id": self.id, "name": self.name,
                             "start": round_time(self.start), "end": round_time(self.end),
                             "preset": self.preset, "source": self.source}
        if self.video:
            d["video"] = _relative(self.video, base)
        if self.reframe is not None:
            d["reframe"] = self.reframe
        if self.pins:
            d["pins"] = [p.to_json() for p in self.pins]
        return d

    @classmethod
    def from_json(cls, d: dict[str, Any], base: Path | None = None) -> Clip:
        start, end = float(d["start"]), float(d["end"])
        if not end > start >= 0:
            raise ValueError(f"clip times {start}..{end} are not a forward range")
        video = str(d.get("video") or "")
        if video and base is not None and not os.path.isabs(video):
            video = str((base / video).resolve())
        reframe = d.get("reframe")
        return cls(start, end, str(d.get("name", "")), str(d.get("preset", "original")),
                   str(d.get("source", "manual")), str(d.get("id") or new_clip_id()), video,
                   None if reframe is None else check_mode(str(reframe)),
                   sorted_pins([Pin.from_json(p) for p in d.get("pins") or []]))


@dataclass
class Project:
    """Everything an editor's session needs to come back exactly as it was left."""

    video: str  # absolute path (stored relative to the project file when beside it)
    fingerprint: str = ""
    analysis: dict[str, Any] | None = None  # cache reference: key fields, model, complete flag
    events: list[Event] | None = None  # the edited events; None: the analysis' own, unedited
    clips: list[Clip] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)  # view state: playhead, zoom, query

    def to_json(self, base: Path | None = None) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "schema": SCHEMA_VERSION,
            "video": {"path": _relative(self.video, base), "fingerprint": self.fingerprint},
            "analysis": self.analysis,
            "events": None if self.events is None else [e.to_json() for e in self.events],
            "clips": [c.to_json(base) for c in self.clips],
            "extra": self.extra,
        }

    @classmethod
    def from_json(cls, d: dict[str, Any], base: Path | None = None) -> Project:
        if not isinstance(d, dict) or d.get("format") != FORMAT:
            raise BadInput("not a Marlin Desk project file")
        schema = d.get("schema")
        if not isinstance(schema, int) or schema > SCHEMA_VERSION:
            raise BadInput(f"project schema {schema!r} is newer than this app understands "
                           f"({SCHEMA_VERSION}): update Marlin Desk")
        try:
            video = d["video"]
            path = str(video["path"])
            if base is not None and not os.path.isabs(path):
                path = str((base / path).resolve())
            events = d.get("events")
            return cls(
                video=path,
                fingerprint=str(video.get("fingerprint", "")),
                analysis=d.get("analysis"),
                events=None if events is None else [Event.from_json(e) for e in events],
                clips=[Clip.from_json(c, base) for c in d.get("clips", [])],
                extra=dict(d.get("extra") or {}),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise BadInput(f"the project file is damaged: {exc}") from exc


def _relative(video: str, base: Path | None) -> str:
    """Stored relative when the video sits under the project's folder (the pair can move)."""
    if base is None or not video:
        return video
    try:
        return str(Path(video).resolve().relative_to(base.resolve()))
    except ValueError:
        return video


def save(project: Project, path: str | os.PathLike[str]) -> Path:
    """Write atomically: temp file in the same folder, fsync, os.replace."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(project.to_json(target.parent), indent=2, ensure_ascii=False)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return target


def load(path: str | os.PathLike[str]) -> Project:
    """Read a project; BadInput (one plain line) when it is missing, not JSON or damaged."""
    source = Path(path)
    try:
        text = source.read_text(encoding="utf-8")
    except OSError as exc:
        raise BadInput(f"cannot read the project {source}: {exc.strerror or exc}") from exc
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise BadInput(f"{source.name} is not a project file (bad JSON at line {exc.lineno})") \
            from exc
    return Project.from_json(doc, source.parent)
