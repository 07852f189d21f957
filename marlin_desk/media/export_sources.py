"""Exporting clips cut from several videos in one go (a clip bin that holds library results).

One ExportQueue per source video, run one after another in the order given; every queue is
checked before the first clip is written (ranges, folder, free space for all of them), so a bad
clip of the third video never leaves the first two half done. Clip indexes and progress are the
batch's: clip i of the whole list, and the overall fraction weighted by every clip's duration.
A source's events and transcript (for subtitles and captions) may be functions, called on the
export thread: reading another video's cached analysis never runs on the caller's (GUI) thread.
A source's reframing detections (workflows.reframe's cache) let the export reuse what the app's
preview detected.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from marlin_desk.core.errors import BadInput
from marlin_desk.core.timeline import Event
from marlin_desk.media.clip_export import ClipSpec, ExportOptions, ExportResult
from marlin_desk.media.export_queue import ExportQueue, ProgressFn, ResultFn
from marlin_desk.media.reframe import DetectionSource

EventsSource = Sequence[Event] | Callable[[], Sequence[Event] | None] | None


@dataclass
class SourceClips:
    """The clips cut from one video, and that video's events for their subtitles."""

    video: str
    clips: list[ClipSpec]
    events: EventsSource = None
    transcript: Any = None  # core.transcript.Transcript, or a function giving it (or None)
    detections: DetectionSource | None = None  # None: reframed clips detect on their own
    _queue: ExportQueue | None = field(default=None, repr=False)


class SourcesExport:
    """Export every source's clips; build it, then call `run()` from a worker thread."""

    def __init__(self, sources: Sequence[SourceClips], options: ExportOptions, *,
                 on_progress: ProgressFn | None = None, on_result: ResultFn | None = None,
                 cancel: threading.Event | None = None) -> None:
        self.sources = [s for s in sources if s.clips]
        self.options, self.on_progress, self.on_result = options, on_progress, on_result
        self._all = cancel if cancel is not None else threading.Event()
        self._offsets: list[int] = []
        n = 0
        for s in self.sources:
            self._offsets.append(n)
            n += len(s.clips)
        self.count = n
        self._weights = [sum(max(c.duration, 1e-3) for c in s.clips) for s in self.sources]
        for i, s in enumerate(self.sources):
            s._queue = ExportQueue(s.video, s.clips, options, events=None,
                                   detections=s.detections,
                                   on_progress=self._progress_of(i),
                                   on_result=self._result_of(i), cancel=self._all)

    def _progress_of(self, source: int) -> ProgressFn:
        before = sum(self._weights[:source])
        total = sum(self._weights) or 1.0

        def report(index: int, fraction: float, overall: float) -> None:
            if self.on_progress is not None:
                self.on_progress(self._offsets[source] + index, fraction,
                                 (before + overall * self._weights[source]) / total)

        return report

    def _result_of(self, source: int) -> ResultFn:
        def report(result: ExportResult) -> None:
            result.index += self._offsets[source]
            if self.on_result is not None:
                self.on_result(result)

        return report

    def cancel(self, index: int | None = None) -> None:
        """Cancel clip `index` of the whole batch (0-based), or everything when None."""
        if index is None:
            self._all.set()
            return
        for s, offset in zip(self.sources, self._offsets, strict=True):
            if offset <= index < offset + len(s.clips) and s._queue is not None:
                s._queue.cancel(index - offset)

    def prepare(self) -> None:
        """Every source checked (and its events read) before anything is written."""
        if not self.sources:
            raise BadInput("no clips to export")
        for s in self.sources:
            events = s.events() if callable(s.events) else s.events
            assert s._queue is not None
            s._queue.events = None if events is None else list(events)
            s._queue.transcript = s.transcript() if callable(s.transcript) else s.transcript
            try:
                s._queue.prepare()
            except BadInput as exc:
                if len(self.sources) == 1:
                    raise
                raise BadInput(f"{os.path.basename(s.video)}: {exc}") from exc

    def run(self) -> list[ExportResult]:
        self.prepare()
        results: list[ExportResult] = []
        for s in self.sources:
            assert s._queue is not None
            results.extend(s._queue.run())
        return results
