"""Progress of a pull, copy or verify: throttled reports with speed and ETA, and cancel."""

from __future__ import annotations

import os
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, BinaryIO, Literal

from marlin_desk.core.errors import Cancelled

Phase = Literal["download", "copy", "verify", "done"]


@dataclass(frozen=True)
class Progress:
    """One progress report. bytes_done never decreases; the last report has phase "done"."""

    model_id: str
    phase: Phase
    file: str
    files_done: int
    files_total: int
    bytes_done: int
    bytes_total: int
    speed_bps: float | None = None
    eta_s: float | None = None

    @property
    def fraction(self) -> float:
        return 1.0 if self.bytes_total <= 0 else min(1.0, self.bytes_done / self.bytes_total)


ProgressCallback = Callable[[Progress], None]



class _Meter:
    """Turns byte counts into throttled Progress reports with speed and ETA; honours cancel."""

    def __init__(self, model_id: str, phase: Phase, files_total: int, bytes_total: int,
                 callback: ProgressCallback | None, cancel: threading.Event | None,
                 interval: float = 0.1) -> None:
        self.model_id, self.phase = model_id, phase
        self.files_total, self.bytes_total = files_total, bytes_total
        self.callback, self.cancel, self.interval = callback, cancel, interval
        self.file, self.files_done = "", 0
        self._done = 0
        self._shown = 0  # the largest bytes_done reported: reports never go backwards
        self._last = 0.0
        self._samples: deque[tuple[float, int]] = deque()  # (time, fetched bytes so far)
        self._fetched = 0

    def check_cancel(self) -> None:
        if self.cancel is not None and self.cancel.is_set():
            raise Cancelled(f"pull of {self.model_id} cancelled; run it again to resume")

    def start_file(self, name: str, phase: Phase) -> None:
        self.file, self.phase = name, phase
        self.check_cancel()
        self._emit(force=True)

    def end_file(self) -> None:
        self.files_done += 1

    def add(self, n: int, fetched: bool = True) -> None:
        """n new bytes (negative when a server made us start a file over)."""
        self._done += n
        if fetched and n > 0:
            self._fetched += n
        self._emit()
        self.check_cancel()

    def finish(self) -> None:
        self.phase, self.file, self.files_done = "done", "", self.files_total
        self._done = max(self._done, self.bytes_total)
        self._emit(force=True)

    def _speed(self, now: float) -> float | None:
        self._samples.append((now, self._fetched))
        while len(self._samples) > 2 and now - self._samples[0][0] > 5.0:
            self._samples.popleft()
        t0, b0 = self._samples[0]
        if now - t0 < 0.2:
            return None
        return (self._fetched - b0) / (now - t0)

    def _emit(self, force: bool = False) -> None:
        if self.callback is None:
            return
        now = time.monotonic()
        speed = self._speed(now)
        if not force and now - self._last < self.interval:
            return
        self._last = now
        self._shown = max(self._shown, min(self._done, self.bytes_total))
        eta = None
        if speed and self.phase in ("download", "copy"):
            eta = max(0.0, (self.bytes_total - self._shown) / speed)
        self.callback(Progress(self.model_id, self.phase, self.file, self.files_done,
                               self.files_total, self._shown, self.bytes_total,
                               speed_bps=speed, eta_s=0.0 if self.phase == "done" else eta))


class _PartWriter:
    """The file object handed to http_get: appends, hashes and counts every byte, and stops
    between chunks when the user cancels (the bytes written so far stay for a resume)."""

    def __init__(self, fh: BinaryIO, meter: _Meter, hasher: Any) -> None:
        self.fh, self.meter, self.hasher = fh, meter, hasher
        self.hash_valid = True

    def write(self, data: bytes) -> int:
        self.meter.check_cancel()
        n = self.fh.write(data)
        self.hasher.update(data)
        self.meter.add(len(data))
        return n

    def tell(self) -> int:
        return self.fh.tell()

    def seek(self, offset: int, whence: int = 0) -> int:
        return self.fh.seek(offset, whence)

    def truncate(self, size: int | None = None) -> int:
        # The server ignored our Range header and sends the whole file again.
        pos = self.fh.tell() if size is None else size
        before = self.fh.seek(0, os.SEEK_END)
        self.fh.seek(pos)
        after = self.fh.truncate(pos)
        self.hash_valid = False
        self.meter.add(after - before, fetched=False)
        return after

    def flush(self) -> None:
        self.fh.flush()


def _silent_bar() -> type:
    """A tqdm class that never draws: our own Progress replaces huggingface_hub's bars."""
    from tqdm import tqdm

    class _NoBar(tqdm):  # type: ignore[misc]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            kwargs.pop("name", None)
            kwargs["disable"] = True
            super().__init__(*args, **kwargs)

    return _NoBar


