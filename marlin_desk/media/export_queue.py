"""A queue of clip exports: checked up front, run one at a time, cancellable one by one or all.

Clips run sequentially because each FFmpeg already uses every core. Everything that can be known
before writing is checked first (all clip ranges, the output folder, free space), so a batch
never stops half-way on a typing mistake. A clip that FFmpeg fails on is reported and the queue
goes on. Progress is `on_progress(clip_index, fraction, overall_fraction)` with clip indexes
from 0 and the overall fraction weighted by clip durations; callbacks run on the thread that
called `run()` (a GUI calls it from a worker thread and forwards them as signals).
"""

from __future__ import annotations

import os
import shutil
import threading
from collections.abc import Callable, Sequence
from pathlib import Path

from marlin_desk.core.errors import BadInput, Cancelled, MarlinError
from marlin_desk.core.timeline import Event
from marlin_desk.core.transcript import Transcript
from marlin_desk.media import probe as _probe
from marlin_desk.media.clip_export import (
    ClipSpec,
    ExportOptions,
    ExportResult,
    export_clip,
    validate_clip,
)
from marlin_desk.media.ffmpeg_bin import FFmpegBinary, find_ffmpeg
from marlin_desk.media.presets import estimated_kbps, get_preset
from marlin_desk.media.probe import VideoInfo
from marlin_desk.media.reframe import DetectionSource
from marlin_desk.media.subtitle_sources import check_inputs

ProgressFn = Callable[[int, float, float], None]
ResultFn = Callable[[ExportResult], None]

SPACE_MARGIN_BYTES = 32 * 1024 * 1024


def estimate_bytes(clips: Sequence[ClipSpec], info: VideoInfo, source_size: int) -> int:
    """A generous size estimate of all outputs (copies: the source's rate; encodes: the cap)."""
    source_kbps = source_size * 8 / 1000 / info.duration if info.duration > 0 else 20_000.0
    total = 0.0
    for clip in clips:
        rate = source_kbps if clip.mode == "fast" else estimated_kbps(
            get_preset(clip.preset), info, source_kbps)
        total += rate * 1000 / 8 * clip.duration
    return int(total * 1.2)


def check_free_space(out_dir: Path, needed: int) -> None:
    """MarlinError when the output disk has less than `needed` bytes plus a margin free."""
    free = shutil.disk_usage(out_dir).free
    if free < needed + SPACE_MARGIN_BYTES:
        raise MarlinError(f"not enough free space in {out_dir}: the clips need about "
                          f"{_mb(needed + SPACE_MARGIN_BYTES)} and {_mb(free)} is free")


def _mb(n: int) -> str:
    return f"{n / 1e6:,.0f} MB"


class ExportQueue:
    """Export `clips` of `video`; build it, then call `run()` (blocking) from a worker thread.

    `cancel(i)` and `cancel()` may be called from any thread while `run()` works.
    """

    def __init__(self, video: str | os.PathLike[str], clips: Sequence[ClipSpec],
                 options: ExportOptions, *, events: Sequence[Event] | None = None,
                 on_progress: ProgressFn | None = None, on_result: ResultFn | None = None,
                 binary: FFmpegBinary | None = None,
                 cancel: threading.Event | None = None,
                 transcript: Transcript | None = None,
                 detections: DetectionSource | None = None) -> None:
        self.video = os.path.abspath(os.fspath(video))
        self.clips = list(clips)
        self.options = options
        self.events = events
        self.transcript = transcript  # for subtitles from the speech and captions
        self.on_progress = on_progress
        self.on_result = on_result
        self.binary = binary
        self.detections = detections  # reframing detections (workflows.reframe's cache)
        self._all = cancel if cancel is not None else threading.Event()
        self._own = [threading.Event() for _ in self.clips]
        self._tokens = [_EitherSet(self._all, own) for own in self._own]

    def cancel(self, index: int | None = None) -> None:
        """Cancel clip `index` (0-based; running or waiting), or every clip when None."""
        if index is None:
            self._all.set()
        else:
            self._own[index].set()

    @property
    def cancelled(self) -> bool:
        return self._all.is_set()

    def prepare(self) -> tuple[VideoInfo, list[ClipSpec]]:
        """Probe, validate every clip, check the folder and free space; raises, writes nothing."""
        if not self.clips:
            raise BadInput("no clips to export")
        info = _probe.probe(self.video)
        specs = [validate_clip(c, info) for c in self.clips]
        for c in specs:
            check_inputs(c.subtitles, self.options.subtitle_source, c.captions,
                         has_events=self.events is not None,
                         has_transcript=self.transcript is not None)
        out_dir = Path(self.options.out_dir)
        if out_dir.exists() and not out_dir.is_dir():
            raise BadInput(f"{out_dir} is not a folder")
        try:
            out_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise BadInput(f"cannot create the output folder {out_dir}: "
                           f"{exc.strerror or exc}") from None
        if not os.access(out_dir, os.W_OK):
            raise BadInput(f"cannot write to {out_dir}")
        check_free_space(out_dir, estimate_bytes(specs, info, os.path.getsize(self.video)))
        return info, specs

    def run(self) -> list[ExportResult]:
        """Export every clip; returns one result per clip (done, cancelled or failed)."""
        info, specs = self.prepare()
        binary = self.binary or find_ffmpeg()
        weights = [max(c.duration, 1e-3) for c in specs]
        total = sum(weights)
        done_weight = 0.0
        results: list[ExportResult] = []
        for i, spec in enumerate(specs):
            result = ExportResult(i + 1, spec)
            if self._tokens[i].is_set():
                result.status = "cancelled"
            else:
                def report(fraction: float, i: int = i, base: float = done_weight) -> None:
                    if self.on_progress is not None:
                        self.on_progress(i, fraction, (base + fraction * weights[i]) / total)

                report(0.0)
                try:
                    result = export_clip(self.video, spec, self.options, index=i + 1,
                                         events=self.events, transcript=self.transcript,
                                         info=info, binary=binary,
                                         on_progress=report, cancel=self._tokens[i],
                                         detections=self.detections)
                except Cancelled:
                    result.status = "cancelled"
                except MarlinError as exc:
                    result.status, result.error = "failed", str(exc)
            done_weight += weights[i]
            if self.on_progress is not None:
                self.on_progress(i, 1.0 if result.status == "done" else 0.0, done_weight / total)
            results.append(result)
            if self.on_result is not None:
                self.on_result(result)
        return results


def export_clips(video: str | os.PathLike[str], clips: Sequence[ClipSpec],
                 options: ExportOptions, *, events: Sequence[Event] | None = None,
                 on_progress: ProgressFn | None = None,
                 cancel: threading.Event | None = None,
                 transcript: Transcript | None = None) -> list[ExportResult]:
    """One-call batch export; setting `cancel` (from any thread) cancels everything left."""
    return ExportQueue(video, clips, options, events=events, on_progress=on_progress,
                       cancel=cancel, transcript=transcript).run()


class _EitherSet:
    """A cancel token that is set when the clip's own event or the batch's event is."""

    def __init__(self, *events: threading.Event) -> None:
        self._events = events

    def is_set(self) -> bool:
        return any(e.is_set() for e in self._events)
