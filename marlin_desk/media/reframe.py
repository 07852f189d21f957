"""Reframing for one clip's export: which mode applies, and the crop path it renders.

The modes (core.reframe): `auto` follows the subject, `centre` is the fixed centre crop, `off`
leaves the preset's fill alone. A clip that names no mode gets `auto` when reframing can do
something for it (the preset crops to another aspect than the source's: 9:16 or 1:1 of
landscape footage, 16:9 of portrait footage with the crop fill) and `off` otherwise: that is
`default_mode`, the one place the CLI and the app take the default from.

The detections come from `detections` (workflows/reframe.py passes its cached look-up, so the
app's preview and the export share one analysis); without it they are computed here.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, Protocol

from marlin_desk.core.errors import BadInput
from marlin_desk.core.reframe import DEFAULT_REFRAME_MODE, REFRAME_MODES, Pin, ReframeSettings
from marlin_desk.media.export_run import CancelToken
from marlin_desk.media.presets import Fill, Preset
from marlin_desk.media.probe import VideoInfo
from marlin_desk.media.reframe_detect import SpanDetections, detect_span, frame_size
from marlin_desk.media.reframe_path import CropPath, compute_path, crop_size


class DetectionSource(Protocol):
    """What gives a span's detections (workflows.reframe.ReframeCache.detections)."""

    def __call__(self, video: str, info: VideoInfo, start: float, end: float,
                 settings: ReframeSettings, *, cancel: CancelToken | None,
                 on_progress: Callable[[float], None] | None) -> SpanDetections: ...


def can_reframe(preset: Preset, info: VideoInfo, fill: Fill) -> bool:
    """Whether a moving crop can change anything: the preset has another aspect than the
    source (with the blur or pad fill, `auto` crops the shots where a subject is found)."""
    if not (preset.width and preset.height):
        return False
    fw, fh = frame_size(info)
    cw, ch = crop_size(fw, fh, preset.width, preset.height)
    return cw < fw or ch < fh


def default_mode(preset: Preset, info: VideoInfo, fill: Fill) -> str:
    """The mode a clip gets when it names none."""
    return DEFAULT_REFRAME_MODE if fill == "crop" and can_reframe(preset, info, fill) else "off"


def check_mode(mode: str | None) -> None:
    if mode is not None and mode not in REFRAME_MODES:
        raise BadInput(f"unknown reframe mode {mode!r}; use {', '.join(REFRAME_MODES)}")


def clip_path(video: str, info: VideoInfo, start: float, end: float, preset: Preset,
              fill: Fill, mode: str | None, pins: tuple[Pin, ...] = (), *,
              settings: ReframeSettings | None = None,
              detections: DetectionSource | None = None, cancel: CancelToken | None = None,
              on_progress: Callable[[float], None] | None = None,
              ) -> tuple[CropPath | None, float | None, dict[str, Any] | None]:
    """(the moving crop's path or None for the preset's own fill, the video time of the
    clip's first frame, the report for the export's JSON or None when reframing is off)."""
    check_mode(mode)
    chosen = mode or default_mode(preset, info, fill)
    if chosen == "off":
        return None, None, None
    if not can_reframe(preset, info, fill) or (chosen == "centre" and fill != "crop"):
        why = (f"the {fill} fill keeps the whole picture" if fill != "crop" else
               "the crop has the source's aspect")
        return None, None, {"mode": chosen, "applied": False, "note": f"nothing to reframe: "
                                                                       f"{why}"}
    if chosen == "centre":
        return None, None, {"mode": "centre", "applied": True, "shots": 1,
                            "shots_with_subject": 0, "shots_following_motion": 0,
                            "pins": []}
    settings = settings or ReframeSettings()
    began = time.perf_counter()
    source = detections or _detect_here
    det = source(video, info, start, end, settings, cancel=cancel, on_progress=on_progress)
    assert preset.width and preset.height
    path = compute_path(det, preset.width, preset.height, settings, pins)
    first = det.first_frame if det.first_frame is not None else start
    report = {"mode": "auto", "applied": True, **path.summary(), "detector": det.detector,
              "speech_from_transcript": det.speech is not None,
              "without_subject": "centre" if fill == "crop" else fill,
              "seconds": round(time.perf_counter() - began, 3)}
    return path, first, report


def _detect_here(video: str, info: VideoInfo, start: float, end: float,
                 settings: ReframeSettings, *, cancel: CancelToken | None,
                 on_progress: Callable[[float], None] | None) -> SpanDetections:
    return detect_span(video, info, start, end, settings, cancel=cancel,
                       on_progress=on_progress)
