"""What one clip export is: the spec (a span and how to render it), the batch-wide options,
the result as written, and the checks a spec must pass before anything runs."""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from marlin_desk.core.errors import BadInput
from marlin_desk.core.reframe import REFRAME_MODES, Pin
from marlin_desk.media.caption_styles import get_caption_style
from marlin_desk.media.encoders import DEFAULT_ENCODER
from marlin_desk.media.naming import DEFAULT_TEMPLATE
from marlin_desk.media.presets import (
    DEFAULT_MODE,
    DEFAULT_SPEED,
    FILLS,
    MODES,
    SUBTITLE_MODES,
    Fill,
    Mode,
    SubtitleMode,
    get_preset,
)
from marlin_desk.media.probe import VideoInfo
from marlin_desk.media.subtitle_sources import SubtitleSource
from marlin_desk.media.subtitles import BurnStyle, SubtitleStyle


@dataclass(frozen=True)
class ClipSpec:
    """One clip to export: a span of the video in seconds (video time) and how to render it."""

    start: float
    end: float
    description: str = ""
    preset: str = "original"
    mode: Mode = DEFAULT_MODE
    fill: Fill | None = None  # None: the preset's default (crop for 9:16 and 1:1)
    subtitles: SubtitleMode = "none"
    captions: str | None = None  # a caption_styles name: karaoke captions burned in
    # Reframing (media.reframe): None takes media.reframe.default_mode (auto where the preset
    # crops to another aspect); pins are the editor's keyframes of the crop (video times).
    reframe: str | None = None
    pins: tuple[Pin, ...] = ()

    @property
    def duration(self) -> float:
        return self.end - self.start


@dataclass(frozen=True)
class ExportOptions:
    """Settings shared by every clip of a batch."""

    out_dir: Path
    name_template: str = DEFAULT_TEMPLATE
    speed: str = DEFAULT_SPEED  # x264 preset
    subtitle_style: SubtitleStyle = field(default_factory=SubtitleStyle)
    burn_style: BurnStyle = field(default_factory=BurnStyle)
    subtitle_language: str = "eng"
    # What the subtitles show (media.subtitle_sources; default_subtitle_source picks it).
    subtitle_source: SubtitleSource = "events"
    encoder: str = DEFAULT_ENCODER  # for re-encodes: auto, x264 or a hardware family
    # Audio (media.audio has the choices): a loudness target in LUFS (None keeps the level),
    # the output channels (None keeps the layout, 1 mono, 2 stereo), the AAC bit rate of a
    # re-encode in kbps (None: the preset's).
    loudness: float | None = None
    audio_channels: int | None = None
    audio_kbps: int | None = None


@dataclass
class ExportResult:
    """What happened to one clip. `real_start`/`real_duration` describe the file as written."""

    index: int
    spec: ClipSpec
    status: Literal["done", "cancelled", "failed", "pending"] = "pending"
    path: Path | None = None
    real_start: float = 0.0
    real_duration: float = 0.0
    subtitle_path: Path | None = None  # the first sidecar (the speech one with two)
    subtitle_paths: list[Path] = field(default_factory=list)  # every sidecar written
    subtitle_note: str = ""  # why no subtitle file was written, when it was asked for
    error: str | None = None
    seconds: float = 0.0
    mode_used: str = ""  # the mode that wrote the file: smart, exact or fast
    fallback: str | None = None  # why smart mode re-encoded the whole clip instead
    smart: dict[str, Any] | None = None  # what a smart cut re-encoded and copied
    encoder: dict[str, Any] | None = None  # the video encoder that ran and why (None: a copy)
    audio: dict[str, Any] | None = None  # channels, codec, loudness measured in and out, note
    reframe: dict[str, Any] | None = None  # mode, shots, shots with a subject, pins (reframe)

    def to_json(self) -> dict[str, Any]:
        return {
            "index": self.index, "status": self.status,
            "path": None if self.path is None else str(self.path),
            "start": round(self.spec.start, 3), "end": round(self.spec.end, 3),
            "real_start": round(self.real_start, 3),
            "real_duration": round(self.real_duration, 3),
            "description": self.spec.description, "preset": self.spec.preset,
            "mode": self.spec.mode, "subtitles": self.spec.subtitles,
            "subtitle_path": None if self.subtitle_path is None else str(self.subtitle_path),
            "subtitle_paths": [str(p) for p in self.subtitle_paths],
            "subtitle_note": self.subtitle_note, "captions": self.spec.captions,
            "error": self.error, "seconds": round(self.seconds, 3),
            "mode_used": self.mode_used or None, "fallback_reason": self.fallback,
            "smart": self.smart, "encoder": self.encoder, "audio": self.audio,
            "reframe": self.reframe,
        }


def validate_clip(spec: ClipSpec, info: VideoInfo) -> ClipSpec:
    """The spec with its end clipped to the video, or BadInput saying what is wrong."""
    label = f"clip {spec.start:g}-{spec.end:g}"
    if not (math.isfinite(spec.start) and math.isfinite(spec.end)):
        raise BadInput(f"{label}: times must be numbers")
    if spec.start < 0 or spec.end <= spec.start:
        raise BadInput(f"{label}: needs 0 <= start < end")
    if spec.start >= info.duration:
        raise BadInput(f"{label}: starts after the end of the video ({info.duration:.2f} s)")
    preset = get_preset(spec.preset)
    if spec.mode not in MODES:
        raise BadInput(f"unknown mode {spec.mode!r}; use {', '.join(MODES)}")
    if spec.subtitles not in SUBTITLE_MODES:
        raise BadInput(f"unknown subtitles choice {spec.subtitles!r}; "
                       f"use {', '.join(SUBTITLE_MODES)}")
    if spec.fill is not None and spec.fill not in FILLS:
        raise BadInput(f"unknown fill {spec.fill!r}; use {', '.join(FILLS)}")
    if spec.reframe is not None and spec.reframe not in REFRAME_MODES:
        raise BadInput(f"unknown reframe mode {spec.reframe!r}; use {', '.join(REFRAME_MODES)}")
    if spec.mode == "fast" and preset.name != "original":
        raise BadInput(f"{label}: fast mode copies the streams and cannot resize for the "
                       f"{preset.name} preset; use exact mode")
    if spec.mode == "fast" and spec.subtitles == "burn":
        raise BadInput(f"{label}: burned subtitles need exact mode (fast mode copies frames)")
    if spec.captions is not None:
        get_caption_style(spec.captions)
        if spec.mode == "fast":
            raise BadInput(f"{label}: burned captions need exact mode (fast mode copies frames)")
    end = min(spec.end, info.duration)
    frame = 1.0 / info.fps if info.fps > 0 else 0.04
    if end - spec.start < frame / 2:
        raise BadInput(f"{label}: shorter than one frame")
    return replace(spec, end=end)
