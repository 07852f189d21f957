"""Headless self-test: the real main window, a video, the analysis and one query with the given
model, a screenshot of the whole window, and a JSON summary. The packaged app's smoke test."""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

STEP_TIMEOUT = 900.0


def synthetic_video(path: Path, seconds: float = 6.0) -> Path:
    """A small colour-bar video with a tone, for when the bundled demo video is missing."""
    import av
    import numpy as np

    colours = [(200, 40, 40), (40, 160, 60), (40, 80, 200)]
    with av.open(str(path), "w") as out:
        stream = out.add_stream("libx264", rate=25)
        stream.width, stream.height, stream.pix_fmt = 320, 180, "yuv420p"
        frames = int(seconds * 25)
        for i in range(frames):
            img = np.zeros((180, 320, 3), dtype=np.uint8)
            img[:] = colours[i * len(colours) // frames]
            x = (i * 4) % 300
            img[70:110, x:x + 20] = 255
            for packet in stream.encode(av.VideoFrame.from_ndarray(img, format="rgb24")):
                out.mux(packet)
        for packet in stream.encode():
            out.mux(packet)
    return path


def _wait(app: Any, done: Callable[[], bool], timeout: float) -> bool:
    from PySide6.QtCore import QEventLoop, QTimer

    deadline = time.monotonic() + timeout
    while not done():
        if time.monotonic() > deadline:
            return False
        loop = QEventLoop()
        QTimer.singleShot(20, loop.quit)
        loop.exec()
    return True


def run_selftest(video: str | None = None, model: str | None = None,
                 screenshot: str | None = None, as_json: bool = False,
                 query: str | None = None, max_tokens: int = 48) -> int:
    t_start = time.perf_counter()
    from marlin_desk.gui.app import make_app, needs_offscreen

    app = make_app(offscreen=needs_offscreen())
    from marlin_desk.gui.main_window import MainWindow
    from marlin_desk.gui.settings import Settings
    from marlin_desk.gui.theme import apply_theme
    from marlin_desk.resources import DEMO_QUERY, demo_video
    from marlin_desk.store import AnalysisCache

    summary: dict[str, Any] = {"ok": False, "reason": "", "timings": {}}
    timings = summary["timings"]
    tmp = tempfile.TemporaryDirectory(prefix="marlin-selftest-")
    window = None
    try:
        settings = Settings(Path(tmp.name) / "settings.ini")
        settings.set("caption_tokens", max_tokens)
        settings.set("auto_analyse", False)
        apply_theme(app, "dark")
        if video is None:
            demo = demo_video()
            video = str(demo) if demo.is_file() else str(
                synthetic_video(Path(tmp.name) / "synthetic.mp4"))
            summary["video_source"] = "demo" if demo.is_file() else "synthetic (no demo video)"
        query = query or (DEMO_QUERY if summary.get("video_source") == "demo"
                          else "a person walking")
        window = MainWindow(settings, cache=AnalysisCache(Path(tmp.name) / "cache.sqlite"),
                            autoload_model=False, model=model, confirm=lambda _q: False,
                            ask_save=lambda _q: "discard",
                            autosave_dir=Path(tmp.name) / "autosave")
        window.resize(1440, 900)
        window.show()
        _wait(app, window.isVisible, 10)
        timings["window_shown"] = round(time.perf_counter() - t_start, 3)

        def failed() -> bool:
            return bool(window.errors)

        t = time.perf_counter()
        window.model_jobs.load_model()
        if not _wait(app, lambda: window.engine.model_info is not None or failed(), STEP_TIMEOUT) \
                or failed():
            raise RuntimeError(window.last_error or "the model did not load in time")
        timings["model_load"] = round(time.perf_counter() - t, 3)
        summary["model"] = window.engine.model_info

        t = time.perf_counter()
        window.open_video(video)
        if not _wait(app, lambda: window.doc.info is not None or failed(), 60) or failed():
            raise RuntimeError(window.last_error or "the video did not open in time")
        timings["open"] = round(time.perf_counter() - t, 3)
        summary["video"] = window.doc.video
        summary["duration"] = round(window.doc.duration, 3)

        t = time.perf_counter()
        window.model_jobs.analyse()
        jobs = window.model_jobs
        if not _wait(app, lambda: jobs.analysis_job is None or failed(), STEP_TIMEOUT) \
                or failed() or window.doc.analysis is None:
            raise RuntimeError(window.last_error or "the analysis did not finish")
        timings["analyse"] = round(time.perf_counter() - t, 3)
        summary["windows"] = len(window.doc.analysis.windows)
        summary["events"] = len(window.doc.events)

        t = time.perf_counter()
        window.model_jobs.run_query(query)
        if not _wait(app, lambda: window.model_jobs.find_job is None or failed(), STEP_TIMEOUT) \
                or failed():
            raise RuntimeError(window.last_error or "the search did not finish")
        timings["find"] = round(time.perf_counter() - t, 3)
        summary["query"] = query
        summary["results"] = [s.to_json() for s in window.doc.results[:5]]
        # what the timeline draws (its Events and Find lanes), so a check sees what a user sees
        summary["timeline"] = {name: [{"start": round(i.start, 2), "end": round(i.end, 2),
                                       "label": i.label} for i in lane.items]
                               for name, lane in (("events", window.timeline.data.events),
                                                  ("results", window.timeline.data.results))}
        _wait(app, lambda: bool(window.timeline.data.thumbs), 10)
        _wait(app, lambda: False, 0.5)  # let the last frame and repaint land
        if screenshot:
            Path(screenshot).parent.mkdir(parents=True, exist_ok=True)
            if not window.grab().save(screenshot):
                raise RuntimeError(f"cannot write the screenshot {screenshot}")
            summary["screenshot"] = os.path.abspath(screenshot)
        summary["ok"] = True
    except Exception as exc:  # noqa: BLE001 - the reason is the product of a self-test
        summary["reason"] = str(exc) or type(exc).__name__
        if window is not None and screenshot:
            window.grab().save(screenshot)
            summary["screenshot"] = os.path.abspath(screenshot)
    finally:
        if window is not None:
            summary["errors"] = list(window.errors)
            window.close()
        timings["total"] = round(time.perf_counter() - t_start, 3)
        tmp.cleanup()
    if as_json:
        print(json.dumps(summary, indent=2, default=str))
    else:
        print("self-test " + ("passed" if summary["ok"] else f"FAILED: {summary['reason']}"))
        for key in ("model", "video", "windows", "events", "results", "timings", "screenshot"):
            if key in summary:
                print(f"  {key}: {summary[key]}")
    sys.stdout.flush()
    return 0 if summary["ok"] else 1
