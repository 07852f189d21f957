"""Run one FFmpeg command: progress from `-progress pipe:1`, cancel, and plain error messages.

We start FFmpeg ourselves (not through ffmpeg-python's `run`) so that we own the three things a
GUI needs: progress parsed line by line, cancellation by terminating the process from any thread,
and stderr kept aside to be turned into one sentence a user can act on. Callbacks run on the
calling thread (the reader threads only store the latest value), so a GUI worker can emit its
signals from where it called us.
"""

from __future__ import annotations

import collections
import re
import subprocess
import threading
from collections.abc import Callable, Sequence
from typing import IO, Protocol

from marlin_desk.core.errors import BadInput, Cancelled, MarlinError
from marlin_desk.media.ffmpeg_script import graphs_in_files

# Options every run gets, placed right after the executable: no stdin (FFmpeg would otherwise
# read keystrokes from the terminal), never overwrite (-n), errors only on stderr,
# machine-readable progress on stdout.
GLOBAL_ARGS = ["-hide_banner", "-nostdin", "-n", "-nostats", "-v", "error", "-progress", "pipe:1"]

_POLL_S = 0.1


class CancelToken(Protocol):
    """Anything with `is_set()`: a threading.Event, or a batch's combined token."""

    def is_set(self) -> bool: ...

# FFmpeg's wording -> what the user should know. First match wins.
_PLAIN: list[tuple[str, str, type[MarlinError]]] = [
    (r"No space left on device", "the disk is full", MarlinError),
    (r"Permission denied", "permission denied (cannot read the video or write the output)",
     MarlinError),
    (r"Invalid data found when processing input|moov atom not found",
     "the video file is damaged or in a format FFmpeg cannot read", BadInput),
    (r"No such file or directory", "a file could not be found", BadInput),
    (r"Unknown encoder '([^']+)'|Encoder (\S+) not found",
     "this FFmpeg has no {0} encoder: install a full FFmpeg build or set MARLIN_DESK_FFMPEG",
     MarlinError),
    (r"No such filter: '([^']+)'",
     "this FFmpeg has no '{0}' filter: install a full FFmpeg build or set MARLIN_DESK_FFMPEG",
     MarlinError),
]


def plain_error(stderr_lines: Sequence[str], returncode: int) -> MarlinError:
    """One plain sentence from FFmpeg's stderr (its last meaningful line when nothing matches)."""
    text = "\n".join(stderr_lines)
    for pattern, message, kind in _PLAIN:
        match = re.search(pattern, text)
        if match:
            groups = [g for g in match.groups() if g] or [""]
            return kind(message.format(groups[0]))
    for line in reversed(stderr_lines):
        line = re.sub(r"^\[[^\]]+ @ 0x[0-9a-f]+\]\s*", "", line.strip())
        if line and not line.startswith("Conversion failed"):
            return MarlinError(f"FFmpeg failed: {line}")
    return MarlinError(f"FFmpeg failed with exit code {returncode} and no message")


def parse_progress_line(line: str) -> float | None:
    """Seconds of output written, from one `-progress` line (`out_time_us=` or `out_time_ms=`,
    both in microseconds); None for other lines and for `N/A`."""
    key, _, value = line.strip().partition("=")
    if key in ("out_time_us", "out_time_ms"):
        try:
            return max(0.0, int(value) / 1e6)
        except ValueError:
            return None
    return None


def run_ffmpeg(args: Sequence[str], duration: float,
               on_progress: Callable[[float], None] | None = None,
               cancel: CancelToken | None = None,
               stderr_lines: list[str] | None = None) -> None:
    """Run FFmpeg (`args[0]` is the executable) until it ends.

    `stderr_lines`, when given, receives every stderr line (for filters that report through the
    log, such as showinfo; read it once this returns). The plain error still uses the tail.

    Reports fractions in [0, 1] of `duration`; raises Cancelled when `cancel` is set (the process
    is terminated at once) and MarlinError/BadInput with a plain message when FFmpeg fails.
    KeyboardInterrupt and any other exception also terminate the process before propagating.
    """
    with graphs_in_files([args[0], *GLOBAL_ARGS, *args[1:]]) as cmd:
        _run(cmd, duration, on_progress, cancel, stderr_lines)


def _run(cmd: list[str], duration: float, on_progress: Callable[[float], None] | None,
         cancel: CancelToken | None, stderr_lines: list[str] | None) -> None:
    creationflags = getattr(subprocess, "CREATE_NO_WINDOW", 0)  # no console window on Windows
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, creationflags=creationflags)
    latest: list[float] = [0.0]
    tail: collections.deque[str] = collections.deque(maxlen=40)
    readers = [
        threading.Thread(target=_read_progress, args=(proc.stdout, latest), daemon=True),
        threading.Thread(target=read_lines, args=(proc.stderr, tail, stderr_lines),
                         daemon=True),
    ]
    for t in readers:
        t.start()
    reported = -1.0
    try:
        while True:
            if cancel is not None and cancel.is_set():
                stop_process(proc)
                raise Cancelled("export cancelled")
            try:
                proc.wait(timeout=_POLL_S)
                done = True
            except subprocess.TimeoutExpired:
                done = False
            if on_progress is not None and duration > 0:
                fraction = min(1.0, latest[0] / duration)
                if fraction > reported:
                    reported = fraction
                    on_progress(fraction)
            if done:
                break
    except BaseException:
        stop_process(proc)
        raise
    finally:
        for t in readers:
            t.join(timeout=5)
    if proc.returncode != 0:
        if cancel is not None and cancel.is_set():
            raise Cancelled("export cancelled")
        # Killed by a signal, or stopped by one (FFmpeg exits 255 without a word on SIGINT or
        # SIGTERM: a Ctrl-C in the terminal reaches it too).
        if proc.returncode < 0 or (proc.returncode == 255 and not tail):
            raise Cancelled("FFmpeg was interrupted")
        raise plain_error(list(tail), proc.returncode)
    if on_progress is not None and reported < 1.0:
        on_progress(1.0)


def stop_process(proc: subprocess.Popen[bytes], *, unblock_stdout: bool = False) -> None:
    """Terminate, then kill if FFmpeg does not exit within 5 s. `unblock_stdout`: FFmpeg may be
    blocked writing frames nobody will read; closing the pipe ends that write, so it sees the
    terminate at once (else the kill after 5 s would be what stops it)."""
    if proc.poll() is not None:
        return
    if unblock_stdout and proc.stdout is not None:
        proc.stdout.close()
    proc.terminate()
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def _read_progress(stream: IO[bytes] | None, latest: list[float]) -> None:
    if stream is None:
        return
    for raw in stream:
        value = parse_progress_line(raw.decode("utf-8", errors="replace"))
        if value is not None:
            latest[0] = value


def read_lines(stream: IO[bytes] | None, tail: collections.deque[str],
               keep: list[str] | None = None, not_in_tail: str = "") -> None:
    """FFmpeg's stderr, line by line: every line into `keep`, the last ones into `tail` (for
    the error message), except lines holding `not_in_tail` (per-frame logs)."""
    if stream is None:
        return
    for raw in stream:
        line = raw.decode("utf-8", errors="replace").rstrip()
        if line:
            if not not_in_tail or not_in_tail not in line:
                tail.append(line)
            if keep is not None:
                keep.append(line)
