"""Workers for the media side, each on its own thread so the model queue never delays them:
opening (probe, fingerprint, cache look-up), thumbnails, the audio waveform, clip export and
the reframing analysis of a clip.

They are QThread subclasses whose `run` does the work and reports by signals; the GUI connects
those to QObject slots (queued onto the GUI thread). Images are made as QImage here; QPixmap is
made only on the GUI thread.
"""

from __future__ import annotations

import logging
import threading
import time
import traceback
from typing import Any

import numpy as np
from PySide6.QtCore import QThread, Signal
from PySide6.QtGui import QImage

from marlin_desk.core.errors import Cancelled, MarlinError

log = logging.getLogger(__name__)


class _Worker(QThread):
    """Shared plumbing: a cancel flag and a plain-words failure signal."""

    failed = Signal(str)

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self._stop = threading.Event()

    def cancel(self) -> None:
        self._stop.set()

    @property
    def cancelled(self) -> bool:
        return self._stop.is_set()

    def run(self) -> None:
        from marlin_desk.gui.worker import lower_this_thread_priority

        lower_this_thread_priority()  # FFmpeg and decoder threads started here inherit it
        try:
            self.work()
        except Cancelled:
            pass
        except MarlinError as exc:
            self.failed.emit(str(exc))
        except Exception as exc:  # noqa: BLE001 - a worker must never take the app down
            log.error("%s crashed\n%s", type(self).__name__, traceback.format_exc())
            self.failed.emit(f"unexpected error: {exc}")

    def work(self) -> None:
        raise NotImplementedError


class OpenWorker(_Worker):
    """Probe the file, fingerprint it and look its analysis up in the cache (workflows, as
    the commands do)."""

    opened = Signal(object)  # workflows.OpenedVideo

    def __init__(self, path: str, cache: Any = None, parent: Any = None) -> None:
        super().__init__(parent)
        self.path, self.cache = path, cache

    def work(self) -> None:
        from marlin_desk.workflows import open_cached

        self.opened.emit(open_cached(self.path, self.cache))


class ShotsWorker(_Worker):
    """The video's shot changes (workflows.shot_boundaries: from the cache, else detected once
    and stored), for the timeline's ticks and the snap toggle."""

    shots = Signal(object)  # list[float], video time

    def __init__(self, path: str, cache: Any = None, info: Any = None, parent: Any = None
                 ) -> None:
        super().__init__(parent)
        self.path, self.cache, self.info = path, cache, info

    def work(self) -> None:
        from marlin_desk.workflows import shot_boundaries

        self.shots.emit(shot_boundaries(self.path, self.cache, should_stop=self._stop,
                                        info=self.info))


def frame_to_qimage(frame: Any, height: int, rotation: int = 0) -> QImage:
    """A decoded frame turned upright (`rotation`: degrees clockwise, VideoInfo.rotation) and
    scaled to `height` as displayed (aspect kept), as a QImage that owns its pixels."""
    from marlin_desk.media.geometry import rotate_upright

    rotation = int(rotation) % 360
    sideways = rotation in (90, 270)
    coded_w, coded_h = max(1, frame.width), max(1, frame.height)
    if sideways:  # the displayed height is the coded width
        out_w, out_h = height, max(2, int(round(coded_h * height / coded_w)) // 2 * 2)
    else:
        out_w, out_h = max(2, int(round(coded_w * height / coded_h)) // 2 * 2), height
    arr = frame.to_ndarray(format="rgb24", width=out_w, height=out_h)
    arr = np.ascontiguousarray(rotate_upright(arr, rotation) if rotation else arr)
    h, w = arr.shape[:2]
    image = QImage(arr.data, w, h, arr.strides[0], QImage.Format.Format_RGB888)
    return image.copy()


class ThumbnailWorker(_Worker):
    """Keyframes first (fast: the decoder skips everything else), then evenly spaced frames."""

    thumbnail = Signal(float, QImage)
    passDone = Signal(int)  # 1: keyframes, 2: refined

    def __init__(self, path: str, duration: float, start_time: float = 0.0, height: int = 54,
                 refine: int = 120, rotation: int = 0, parent: Any = None) -> None:
        super().__init__(parent)
        self.path, self.duration, self.start_time = path, duration, start_time
        self.height, self.refine, self.rotation = height, refine, int(rotation or 0)

    def work(self) -> None:
        import av

        have: list[float] = []
        min_gap = self.duration / 400 if self.duration > 0 else 0.0
        with av.open(self.path) as container:
            stream = container.streams.video[0]
            stream.codec_context.skip_frame = "NONKEY"
            stream.thread_type = "AUTO"
            for frame in container.decode(stream):
                if self.cancelled:
                    return
                if frame.time is None:
                    continue
                t = float(frame.time) - self.start_time
                if have and t - have[-1] < min_gap:
                    continue
                have.append(t)
                self.thumbnail.emit(t, frame_to_qimage(frame, self.height, self.rotation))
        self.passDone.emit(1)
        if self.refine <= 0 or self.duration <= 0:
            return
        step = self.duration / self.refine
        targets = [(i + 0.5) * step for i in range(self.refine)]
        targets = [t for t in targets if not any(abs(t - h) < step / 2 for h in have)]
        with av.open(self.path) as container:
            stream = container.streams.video[0]
            stream.thread_type = "AUTO"
            tb = float(stream.time_base or 0) or 1 / 90000
            for target in targets:
                if self.cancelled:
                    return
                container.seek(int((target + self.start_time) / tb), stream=stream,
                               backward=True)
                for frame in container.decode(stream):
                    t = None if frame.time is None else float(frame.time) - self.start_time
                    if t is not None and t >= target:  # at its own time, not the target's
                        self.thumbnail.emit(t, frame_to_qimage(frame, self.height,
                                                               self.rotation))
                        break
                    if self.cancelled:
                        return
        self.passDone.emit(2)


class WaveformWorker(_Worker):
    """Audio peaks: mono, 8 kHz, the largest magnitude per bucket (0..1)."""

    waveform = Signal(object, float)  # numpy float32 peaks, seconds per bucket

    def __init__(self, path: str, start_time: float = 0.0, buckets_per_second: int = 50,
                 parent: Any = None) -> None:
        super().__init__(parent)
        self.path, self.start_time, self.rate = path, start_time, buckets_per_second

    def work(self) -> None:
        import av

        sample_rate = 8000
        per_bucket = sample_rate // self.rate
        peaks: list[np.ndarray] = []
        carry = np.zeros(0, dtype=np.float32)
        with av.open(self.path) as container:
            if not container.streams.audio:
                return
            stream = container.streams.audio[0]
            resampler = av.AudioResampler(format="flt", layout="mono", rate=sample_rate)
            for frame in container.decode(stream):
                if self.cancelled:
                    return
                for out in resampler.resample(frame):
                    samples = np.abs(out.to_ndarray().reshape(-1).astype(np.float32))
                    carry = np.concatenate([carry, samples])
                    whole = len(carry) // per_bucket * per_bucket
                    if whole:
                        peaks.append(carry[:whole].reshape(-1, per_bucket).max(axis=1))
                        carry = carry[whole:]
        if len(carry):
            peaks.append(np.array([carry.max()], dtype=np.float32))
        data = np.concatenate(peaks) if peaks else np.zeros(0, dtype=np.float32)
        top = float(data.max()) if len(data) else 0.0
        if top > 0:
            data = data / top
        self.waveform.emit(data.astype(np.float32), 1.0 / self.rate)


class ExportWorker(_Worker):
    """Runs the media layer's export of clips from one or more videos (export_sources); per-clip
    and overall progress, cancel any time.

    Progress is coalesced to at most about 10 signals a second (plus every clip's start and
    end), so FFmpeg's progress lines never flood the GUI thread.
    """

    progress = Signal(int, float, float)  # clip index, clip fraction, overall fraction
    clipDone = Signal(object)  # ExportResult
    done = Signal(object)  # list[ExportResult]

    PROGRESS_INTERVAL = 0.1  # seconds between progress signals for the same clip

    def __init__(self, sources: list[Any], out_dir: str, parent: Any = None,
                 options: Any = None) -> None:
        super().__init__(parent)
        from pathlib import Path

        from marlin_desk.media.export import ExportOptions
        from marlin_desk.media.export_sources import SourcesExport

        self.sources, self.out_dir = sources, out_dir
        self.options = options or ExportOptions(Path(out_dir))
        self._last: tuple[int, float] = (-1, 0.0)
        self._queue = SourcesExport(sources, self.options, on_progress=self._report,
                                    on_result=self.clipDone.emit, cancel=self._stop)

    def cancel(self) -> None:
        super().cancel()
        self._queue.cancel()

    def cancel_clip(self, index: int) -> None:
        """Cancel one clip (0-based), running or waiting; the others go on."""
        if 0 <= index < self._queue.count:
            self._queue.cancel(index)

    def _report(self, index: int, fraction: float, overall: float) -> None:
        now = time.monotonic()
        last_index, last_time = self._last
        edge = fraction <= 0.0 or fraction >= 1.0 or index != last_index
        if edge or now - last_time >= self.PROGRESS_INTERVAL:
            self._last = (index, now)
            self.progress.emit(index, float(fraction), float(overall))

    def work(self) -> None:
        results = self._queue.run()
        self.done.emit(results)


class ReframeWorker(_Worker):
    """One clip's reframing analysis (workflows.reframe.analyse_clip: the detections from the
    file cache, else one FFmpeg pass with the face detector), for the preview's crop."""

    progress = Signal(float)  # 0..1
    analysed = Signal(object)  # workflows.reframe.ClipReframing

    def __init__(self, video: str, start: float, end: float, preset: str, info: Any,
                 cache: Any, parent: Any = None) -> None:
        super().__init__(parent)
        self.video, self.start_t, self.end_t, self.preset = video, start, end, preset
        self.info, self.cache = info, cache

    def work(self) -> None:
        from marlin_desk.workflows.reframe import analyse_clip

        result = analyse_clip(self.video, self.start_t, self.end_t, self.preset,
                              info=self.info, cache=self.cache, should_stop=self._stop,
                              on_progress=self.progress.emit)
        if not self.cancelled:
            self.analysed.emit(result)
