"""Helpers shared by the command modules: JSON output, progress on stderr."""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")


def emit_json(doc: Any) -> None:
    """One JSON document on stdout (the scripting contract); nothing else goes to stdout."""
    json.dump(doc, sys.stdout, ensure_ascii=False, indent=2)
    sys.stdout.write("\n")
    sys.stdout.flush()


def progress(message: str) -> None:
    """Progress and chatter go to stderr so that stdout stays parseable."""
    print(message, file=sys.stderr, flush=True)


def run_in_worker(work: Callable[[], T], on_interrupt: Callable[[], None], name: str) -> T:
    """`work()` on a worker thread, so that Ctrl-C reaches this one: each Ctrl-C calls
    `on_interrupt` (which asks the work to stop, or raises to quit at once). The work's result
    or error comes back here.

    Waiting is on an Event, not `Thread.join`: a join interrupted by KeyboardInterrupt can leave
    the thread looking finished while it still runs.
    """
    box: dict[str, Any] = {}
    finished = threading.Event()

    def run() -> None:
        try:
            box["result"] = work()
        except BaseException as exc:  # noqa: BLE001 - handed back to the main thread
            box["error"] = exc
        finally:
            finished.set()

    threading.Thread(target=run, name=name, daemon=True).start()
    while True:
        try:
            while not finished.wait(0.2):
                pass
            break
        except KeyboardInterrupt:
            on_interrupt()
    if "error" in box:
        raise box["error"]
    return box["result"]
