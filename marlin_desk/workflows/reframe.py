"""A clip's reframing as the app and the commands get it: detections cached, the path from them.

What is cached, and where: the DETECTIONS of a span (faces per sample and cuts, the expensive
part: one decode), not the path. The key is the video's content fingerprint, the span, the
detection settings and the detector's version; the path (preset, dead zone, speed, pins) is
recomputed from them in about a millisecond, so every pin the editor drags re-smooths the path
at once with no cache round trip, and changing the preset costs nothing. The cache is a folder of
small JSON files under the app's cache folder (`reframe/`), written atomically: they are
per-clip, rebuilt in seconds when lost, and need no schema change in the SQLite store that
other features share. A file's name is the key of everything but the span, then the span: a
clip trimmed inside a span already analysed takes its part of those detections at once. Shot
cuts already in the store (`marlin-desk shots`, snapping) are used when there; else the
detection pass finds them itself with the same detector.

The API for the app (a worker thread computes, the GUI thread draws):

    reframing = analyse_clip(video, clip.start, clip.end, clip.preset, should_stop=..., ...)
    path = reframing.path_for(clip.reframe, clip.pins)  # CropPath or None (no crop shown);
                                              # instant: call it on every pin change
    rect = path.crop_at(t)                    # CropRect in frame pixels (frame_w x frame_h)
    pin = path.pin_at(t, rect.x, rect.y)      # a dragged rectangle becomes a Pin
    clip = clip.with_pins([*clip.pins, pin])  # core.project.Clip keeps them (undo: the app's)
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import cast

from marlin_desk.core.errors import BadInput
from marlin_desk.core.reframe import Pin, ReframeSettings
from marlin_desk.core.transcript import Transcript, speech_spans
from marlin_desk.media.export_run import CancelToken
from marlin_desk.media.presets import Fill, get_preset
from marlin_desk.media.probe import VideoInfo, probe
from marlin_desk.media.reframe import can_reframe, check_mode, default_mode
from marlin_desk.media.reframe_detect import (
    SpanDetections,
    detect_span,
    detector_name,
    first_frame,
    frame_size,
)
from marlin_desk.media.reframe_path import CropPath, centre_path, compute_path
from marlin_desk.media.shots import ShotSettings
from marlin_desk.paths import cache_dir
from marlin_desk.store.cache import AnalysisCache
from marlin_desk.store.fingerprint import canonical_json, fingerprint
from marlin_desk.store.transcripts import TranscriptStore

log = logging.getLogger(__name__)

CACHE_FOLDER = "reframe"
_FORMAT = 2  # bump when the cached JSON or its file names change shape


@dataclass(frozen=True)
class ClipReframing:
    """One clip's detections for a preset: call `path(pins)` for the crop path."""

    detections: SpanDetections
    preset: str
    info: VideoInfo
    settings: ReframeSettings
    cached: bool
    seconds: float

    def hearing(self, transcript: Transcript | None) -> ClipReframing:
        """This analysis with the stretches of speech of `transcript` (None: not known)."""
        return replace(self, detections=hearing(self.detections, transcript))

    def path(self, pins: Sequence[Pin] = ()) -> CropPath:
        """The automatic path with these pins (what `--reframe auto` renders)."""
        p = get_preset(self.preset)
        assert p.width and p.height  # analyse_clip refuses presets without a size
        return compute_path(self.detections, p.width, p.height, self.settings, pins)

    def path_for(self, mode: str | None, pins: Sequence[Pin] = (),
                 fill: str | None = None) -> CropPath | None:
        """The crop the export renders for a clip's mode (None: its default) and fill (None:
        the preset's), or None when the export shows the picture without a crop window."""
        p = get_preset(self.preset)
        chosen_fill = cast(Fill, fill or p.fill)
        check_mode(mode)
        chosen = mode or default_mode(p, self.info, chosen_fill)
        if chosen == "off" or not can_reframe(p, self.info, chosen_fill):
            return None
        if chosen == "centre":
            if chosen_fill != "crop":
                return None
            return centre_only(self.info, self.detections.start, self.detections.end,
                               self.preset)
        return self.path(pins)


class _StopToken:
    def __init__(self, should_stop: Callable[[], bool]) -> None:
        self._should_stop = should_stop

    def is_set(self) -> bool:
        return bool(self._should_stop())


class ReframeCache:
    """The file cache of span detections; `detections` is what media.reframe calls."""

    def __init__(self, root: Path | None = None, shots: AnalysisCache | None = None) -> None:
        self.root = root if root is not None else cache_dir() / CACHE_FOLDER
        self.shots = shots
        self._fingerprints: dict[str, str] = {}
        self._lock = threading.Lock()

    def key(self, fp: str, start: float, end: float, settings: ReframeSettings) -> str:
        """`<video, detector and settings>-<start µs>-<end µs>`: a file name."""
        return f"{self._group(fp, settings)}-{_micros(start)}-{_micros(end)}"

    def _group(self, fp: str, settings: ReframeSettings) -> str:
        doc = {"format": _FORMAT, "video": fp, "detector": detector_name(),
               **settings.detection_key()}
        return hashlib.sha256(canonical_json(doc).encode("utf-8")).hexdigest()[:24]

    def _containing(self, fp: str, start: float, end: float,
                    settings: ReframeSettings) -> SpanDetections | None:
        """The shortest cached span of the same video and settings around [start, end]."""
        group = self._group(fp, settings)
        around: list[tuple[int, Path]] = []
        for file in self.root.glob(f"{group}-*-*.json") if self.root.is_dir() else []:
            try:
                a, b = (int(v) for v in file.stem.rsplit("-", 2)[1:])
            except ValueError:
                continue
            if a <= _micros(start) and _micros(end) <= b:
                around.append((b - a, file))
        for _, file in sorted(around):
            det = _read(file)
            if det is not None and det.start <= start and end <= det.end:
                return det
        return None

    def _fingerprint(self, video: str) -> str:
        with self._lock:
            if video not in self._fingerprints:
                self._fingerprints[video] = fingerprint(video)
            return self._fingerprints[video]

    def detections(self, video: str, info: VideoInfo, start: float, end: float,
                   settings: ReframeSettings, *, cancel: CancelToken | None = None,
                   on_progress: Callable[[float], None] | None = None) -> SpanDetections:
        """The span's detections from the cache, else detected and stored. A cache problem
        never stops the export: the detections are then made and not kept."""
        return self.lookup(video, info, start, end, settings, cancel=cancel,
                           on_progress=on_progress)[0]

    def lookup(self, video: str, info: VideoInfo, start: float, end: float,
               settings: ReframeSettings, *, cancel: CancelToken | None = None,
               on_progress: Callable[[float], None] | None = None,
               ) -> tuple[SpanDetections, bool]:
        """(detections, True when they came from the cache)."""
        try:
            fp = self._fingerprint(video)
        except BadInput as exc:
            log.info("reframe cache skipped: %s", exc)
            fp = ""
        file = self.root / f"{self.key(fp, start, end, settings)}.json" if fp else None
        if file is not None:
            hit = _read(file)
            around = self._containing(fp, start, end, settings) if hit is None else None
            if around is not None:  # a trimmed clip: its part of the longer span
                hit = around.within(start, end, first_frame(video, info, start))
            if hit is not None:
                if on_progress is not None:
                    on_progress(1.0)
                return self._with_speech(hit, fp), True
        det = detect_span(video, info, start, end, settings, cuts=self._cached_cuts(fp),
                          cancel=cancel, on_progress=on_progress)
        if file is not None:  # the key names the detectors: a new one looks again
            _write(file, det)
        return self._with_speech(det, fp), False

    def _with_speech(self, det: SpanDetections, fp: str) -> SpanDetections:
        """The detections with the stretches of speech of the video's latest stored
        transcript, when it has one (the speaker is then looked for only while someone is
        heard)."""
        if self.shots is None or not fp:
            return det
        try:
            found = TranscriptStore(self.shots).latest(fp)
        except Exception as exc:  # noqa: BLE001 - the store is an optimisation here
            log.info("transcript look-up for reframing failed: %s", exc)
            return det
        return det if found is None else hearing(det, found[1])

    def clear(self) -> int:
        """Remove every cached span; returns how many files went."""
        removed = 0
        for file in self.root.glob("*.json") if self.root.is_dir() else []:
            with contextlib.suppress(OSError):
                file.unlink()
                removed += 1
        return removed

    def _cached_cuts(self, fp: str) -> list[float] | None:
        if self.shots is None or not fp:
            return None
        try:
            return self.shots.get_shots(fp, ShotSettings().to_json())
        except Exception as exc:  # noqa: BLE001 - the store is an optimisation here
            log.info("shots cache look-up failed: %s", exc)
            return None


def hearing(det: SpanDetections, transcript: Transcript | None) -> SpanDetections:
    """The detections with the stretches of speech of `transcript` in their span (None: not
    known, the speaker judged by mouths alone)."""
    speech = None if transcript is None else speech_spans(transcript.words, det.start, det.end)
    return replace(det, speech=speech)


def _micros(t: float) -> int:
    return int(round(t * 1_000_000))


def _read(file: Path) -> SpanDetections | None:
    try:
        return SpanDetections.from_json(json.loads(file.read_text(encoding="utf-8")))
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError) as exc:
        log.info("unreadable reframe cache entry %s: %s", file.name, exc)
        return None


def _write(file: Path, det: SpanDetections) -> None:
    """Atomically: a temporary file in the same folder, then renamed over."""
    try:
        file.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".reframe-", suffix=".tmp", dir=file.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump(det.to_json(), f, separators=(",", ":"))
            os.replace(tmp, file)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
    except OSError as exc:
        log.warning("reframe detections not cached: %s", exc)


def analyse_clip(video: str, start: float, end: float, preset: str, *,
                 settings: ReframeSettings | None = None, info: VideoInfo | None = None,
                 cache: ReframeCache | None = None,
                 should_stop: Callable[[], bool] | threading.Event | None = None,
                 on_progress: Callable[[float], None] | None = None) -> ClipReframing:
    """The clip's detections for `preset` (cached; progress in [0, 1]; core.errors.Cancelled
    when `should_stop()` turns true). Presets that keep the source picture have nothing to
    reframe: BadInput says so."""
    p = get_preset(preset)
    if not (p.width and p.height):
        raise BadInput(f"the {preset} preset keeps the source picture: nothing to reframe")
    settings = settings or ReframeSettings()
    info = info or probe(video)
    cache = cache or ReframeCache()
    token: CancelToken | None = None
    if isinstance(should_stop, threading.Event):
        token = should_stop
    elif should_stop is not None:
        token = _StopToken(should_stop)
    began = time.perf_counter()
    end = min(end, info.duration)
    det, hit = cache.lookup(os.path.abspath(video), info, start, end, settings, cancel=token,
                            on_progress=on_progress)
    return ClipReframing(det, preset, info, settings, hit, time.perf_counter() - began)


def centre_only(info: VideoInfo, start: float, end: float, preset: str) -> CropPath:
    """The centre crop as a path, for a preview before (or without) the analysis."""
    p = get_preset(preset)
    fw, fh = frame_size(info)
    return centre_path(fw, fh, p.width or fw, p.height or fh, start, end)
