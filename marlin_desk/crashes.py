"""App sessions that did not end cleanly: found at the next start and offered for a report.

Each running app leaves a marker (`sessions/<pid>.json` in the log folder) and a "session
started" line in the log; a clean exit removes the marker. At the next start a marker whose
process is gone means that session died: its part of the log (the fault handler's "Fatal Python
error" and every thread's stack, see `logs`) becomes a report file, and the marker is removed so
each crash is offered once. No Qt here: the window only shows what this finds.
"""

from __future__ import annotations

import json
import logging
import os
import sys
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

from marlin_desk.logs import log_path
from marlin_desk.paths import log_dir

log = logging.getLogger(__name__)

FATAL = "Fatal Python error"
_STARTED = "app session started"
_NO_DETAILS = ("It ended without closing and left no error in the log (it was killed, or the "
               "computer stopped).")


@dataclass(frozen=True)
class CrashReport:
    started: str  # when the session began, local time
    reason: str  # "Segmentation fault", or a sentence when the log has no fatal error
    details: str  # that session's log from its first fatal line on (or its last lines)
    path: Path  # the report file with the details, to attach to a message


def _sessions() -> Path:
    folder = log_dir() / "sessions"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def begin_session() -> Path:
    """Mark this process as a running app session; returns the marker to pass to end_session."""
    token = uuid.uuid4().hex[:12]
    marker = _sessions() / f"{os.getpid()}.json"
    marker.write_text(json.dumps({"pid": os.getpid(), "token": token,
                                  "started": time.strftime("%Y-%m-%d %H:%M:%S")}),
                      encoding="utf-8")
    log.info("%s (pid %d, token %s)", _STARTED, os.getpid(), token)
    return marker


def end_session(marker: Path) -> None:
    marker.unlink(missing_ok=True)


def unfinished_sessions() -> list[CrashReport]:
    """Sessions whose process is gone without a clean exit, each turned into a report once."""
    reports = []
    for marker in sorted(_sessions().glob("*.json")):
        try:
            info = json.loads(marker.read_text(encoding="utf-8"))
            pid, token, started = int(info["pid"]), str(info["token"]), str(info["started"])
        except (OSError, ValueError, KeyError, TypeError):
            marker.unlink(missing_ok=True)  # unreadable: nothing to report from it
            continue
        if pid != os.getpid() and _alive(pid):
            continue  # another app window is running
        reports.append(_report(token, started))
        marker.unlink(missing_ok=True)
    return reports


def _report(token: str, started: str) -> CrashReport:
    text = _session_log(token)
    at = text.find(FATAL)
    if at >= 0:
        details = text[at:].strip()
        reason = details.splitlines()[0].removeprefix(FATAL).strip(" :") or "a fatal error"
    else:
        details = "\n".join(text.strip().splitlines()[-40:])
        reason = _NO_DETAILS
    path = log_dir() / f"crash-{started.replace(':', '').replace(' ', '-')}.txt"
    try:
        path.write_text(f"Marlin Desk session started {started}\n{reason}\n\n{details}\n",
                        encoding="utf-8")
    except OSError as exc:
        log.warning("could not write the crash report %s: %s", path, exc)
    log.warning("the app session started %s did not end cleanly: %s (report: %s)",
                started, reason, path)
    return CrashReport(started, reason, details, path)


def _session_log(token: str) -> str:
    """That session's lines: from its start line on, across one rotation of the log."""
    current = log_path()
    parts = []
    for path in (current.with_name(current.name + ".1"), current):
        try:
            parts.append(path.read_text(encoding="utf-8", errors="replace"))
        except OSError:
            continue
    text = "".join(parts)
    at = text.find(token)
    if at < 0:
        return ""
    text = text[text.rfind("\n", 0, at) + 1:]
    nxt = text.find(_STARTED, text.find(token) + len(token))  # the next session's start ends it
    return text[:nxt] if nxt > 0 else text


def _alive(pid: int) -> bool:
    if sys.platform == "win32":  # os.kill(pid, 0) would terminate the process there
        import ctypes

        handle = ctypes.windll.kernel32.OpenProcess(0x1000, False, pid)  # type: ignore[attr-defined]
        if not handle:
            return False
        code = ctypes.c_ulong()
        ctypes.windll.kernel32.GetExitCodeProcess(handle, ctypes.byref(code))  # type: ignore[attr-defined]
        ctypes.windll.kernel32.CloseHandle(handle)  # type: ignore[attr-defined]
        return code.value == 259  # STILL_ACTIVE
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
