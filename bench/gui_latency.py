"""GUI latency benchmark: start-up to window shown, timeline paint time with 5,000 events, the
longest stall of the GUI thread while the tiny model analyses a video on the worker, and the
Library panel with 1,000 videos (scan, list, queue all, reorder, search: how long each takes and
the longest stall of the GUI thread meanwhile).

    .venv/bin/python bench/gui_latency.py [--video FILE] [--window 10] [--tokens 48]
    .venv/bin/python bench/gui_latency.py --library-only [--library 1000]

Targets: start-up < 2 s, paint < 16 ms, stall < 50 ms. A stall is a 5 ms timer's lateness.
The idle baseline is the same timer before the analysis starts: on a loaded machine it shows how
much of a stall is the operating system's scheduling rather than the app (compare with the load
average printed at the end).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


def startup_child() -> None:
    """Run in a fresh process: import, build and show the window, paint it once."""
    from marlin_desk.gui.app import make_app
    from marlin_desk.gui.main_window import MainWindow
    from marlin_desk.gui.settings import Settings
    from marlin_desk.gui.theme import apply_theme

    app = make_app()  # as the app starts (GIL switch interval included)
    apply_theme(app, "dark")
    window = MainWindow(Settings(Path(tempfile.mkdtemp()) / "s.ini"), cache=None,
                        autoload_model=True, model="/nonexistent")  # load runs after show
    window.show()
    torch_before = "torch" in sys.modules  # the model load is queued for after this
    window.repaint()
    shown = time.time()
    print("SHOWN", shown, torch_before, flush=True)
    window.shutdown()


def measure_startup(runs: int = 3) -> list[float]:
    times = []
    for _ in range(runs):
        start = time.time()
        out = subprocess.run([sys.executable, __file__, "--startup-child"], capture_output=True,
                             text=True, timeout=120)
        line = next(ln for ln in out.stdout.splitlines() if ln.startswith("SHOWN"))
        times.append(float(line.split()[1]) - start)
        assert line.split()[2] == "False", "torch was imported before the window was shown"
    return times


def measure_paint(repeats: int = 40) -> dict[str, float]:
    from PySide6.QtGui import QImage
    from PySide6.QtWidgets import QApplication

    from marlin_desk.core.timeline import Event
    from marlin_desk.gui.timeline import TimelineWidget

    QApplication.instance() or QApplication([])
    tl = TimelineWidget()
    tl.resize(1600, 300)
    tl.set_duration(3600.0)
    tl.data.set_events([Event(i * 0.72, i * 0.72 + 1.5 + (i % 7), f"event number {i}")
                        for i in range(5000)])
    tl.relayout()
    tl.show()
    out = {}
    for label, zoom in (("fit", 1.0), ("zoom_x30", 30.0)):
        tl.fit()
        tl.zoom(zoom, 0)
        image = QImage(tl.size(), QImage.Format.Format_ARGB32_Premultiplied)
        for kind in ("new_view", "same_view"):  # a zoom/scroll vs. a playhead move
            samples = []
            for _ in range(repeats):
                if kind == "new_view":
                    tl._lane_cache.clear()
                t = time.perf_counter()
                tl.render(image)  # runs paintEvent synchronously (offscreen repaint() may not)
                samples.append((time.perf_counter() - t) * 1000)
            out[f"{label}_{kind}_median_ms"] = round(statistics.median(samples), 2)
            out[f"{label}_{kind}_max_ms"] = round(max(samples), 2)
    return out


def measure_stall(video: str | None, window_s: float, tokens: int) -> dict[str, float]:
    from PySide6.QtCore import QElapsedTimer, QEventLoop, QObject, QTimer, Slot

    from marlin_desk.dev.tiny_model import build_tiny_model
    from marlin_desk.gui.app import make_app
    from marlin_desk.gui.main_window import MainWindow
    from marlin_desk.gui.settings import Settings

    _app = make_app()  # as the app runs it (GIL switch interval included); kept alive
    tmp = Path(tempfile.mkdtemp(prefix="gui-bench-"))
    model = build_tiny_model(tmp / "tiny")
    if video is None:
        from marlin_desk.dev.videos import make_video

        video = str(make_video(tmp / "bench.mp4", duration=30.0, size=(640, 360), fps=25,
                               texture=True, audio=True))
    settings = Settings(tmp / "s.ini")
    settings.set("caption_tokens", tokens)
    settings.set("window_seconds", window_s)
    settings.set("auto_analyse", False)
    w = MainWindow(settings, cache=None, autoload_model=False, model=str(model),
                   confirm=lambda _q: False, autosave_dir=tmp / "autosave")
    w.show()

    def wait(pred, timeout: float) -> None:  # noqa: ANN001
        deadline = time.monotonic() + timeout
        while not pred() and time.monotonic() < deadline:
            loop = QEventLoop()
            QTimer.singleShot(5, loop.quit)
            loop.exec()

    class Probe(QObject):
        """A 5 ms timer; its lateness is how long the GUI thread could not react."""

        def __init__(self) -> None:
            super().__init__()
            self.clock = QElapsedTimer()
            self.lates: list[float] = []
            self.timer = QTimer(self)
            self.timer.setInterval(5)
            self.timer.timeout.connect(self.tick)

        def start(self) -> None:
            self.clock.start()
            self.timer.start()

        @Slot()
        def tick(self) -> None:
            elapsed = self.clock.nsecsElapsed() / 1e6
            self.lates.append(max(0.0, elapsed - 5.0))
            self.clock.restart()

    w.load_model()
    wait(lambda: w.engine.model_info is not None or bool(w.errors), 300)
    w.open_video(video)
    wait(lambda: w.doc.info is not None, 60)
    wait(lambda: w.timeline.data.wave is not None, 60)  # media workers done: a quiet baseline
    idle = Probe()
    idle.start()
    wait(lambda: False, 3.0)
    idle.timer.stop()
    probe = Probe()
    probe.start()
    started = time.perf_counter()
    w.analyse()
    wait(lambda: w.analysis_job is None, 1800)
    seconds = time.perf_counter() - started
    probe.timer.stop()
    w.close()
    lates = sorted(probe.lates)
    idle_lates = sorted(idle.lates)
    return {"analysis_s": round(seconds, 1), "windows": w.windows_done,
            "ticks": len(lates), "stall_max_ms": round(lates[-1], 1),
            "stall_p99_ms": round(lates[int(len(lates) * 0.99)], 1),
            "stall_median_ms": round(statistics.median(lates), 2),
            "ticks_over_50ms": sum(1 for x in lates if x > 50.0),
            "errors": len(w.errors),
            "idle_baseline_max_ms": round(idle_lates[-1], 1),
            "idle_baseline_p99_ms": round(idle_lates[int(len(idle_lates) * 0.99)], 1),
            "switch_interval_s": sys.getswitchinterval()}


def _library_footage(folder: Path, n: int, cache: Any) -> None:
    """`n` different small video files, each with a stored analysis (the real store API)."""
    from marlin_desk.core.timeline import Analysis, Event, WindowResult
    from marlin_desk.dev.videos import make_video
    from marlin_desk.store.fingerprint import CacheKey

    base = make_video(folder / "base.mp4", duration=2.0, size=(64, 48), fps=5, audio=False)
    data = base.read_bytes()
    base.unlink()
    subjects = ["a dog jumps into the pool", "a man opens a red door", "a car drives past",
                "two people talk at a table", "a child rides a bike", "rain on a window"]
    for i in range(n):
        video = folder / f"day {i // 100:02d}" / f"take {i:04d}.mp4"
        video.parent.mkdir(exist_ok=True)
        with open(video, "wb") as fh:  # 3 MiB as fingerprinted (sparse: little disk)
            fh.write(data)
            fh.seek(3 * 1024 * 1024)
            fh.write(f"{i}".encode())  # other content, the same pictures
        events = [Event(0.0, 1.0, subjects[i % 6]), Event(1.0, 2.0, subjects[(i + 1) % 6])]
        window = WindowResult(0, 0.0, 2.0, "raw", True, "A scene.", events)
        key = CacheKey.for_file(video, "bench/model", "r1", "fp32", {"window": 2})
        cache.complete(key, Analysis(2.0, "bench/model", "A scene.", events, [window],
                                     str(video)))


def measure_library(n: int) -> dict[str, Any]:
    """The Library panel with `n` videos; every step is driven through the panel's own signals
    and timed to the moment its result is on screen, with a 5 ms probe timer running."""
    from PySide6.QtCore import QElapsedTimer, QEventLoop, QTimer

    from marlin_desk.gui.app import make_app
    from marlin_desk.gui.main_window import MainWindow
    from marlin_desk.gui.settings import Settings
    from marlin_desk.store import AnalysisCache

    _app = make_app()
    tmp = Path(tempfile.mkdtemp(prefix="gui-library-"))
    folder = tmp / "footage"
    folder.mkdir()
    cache = AnalysisCache(tmp / "cache.sqlite")
    t = time.perf_counter()
    _library_footage(folder, n, cache)
    build_s = time.perf_counter() - t
    settings = Settings(tmp / "s.ini")
    settings.set("auto_analyse", False)
    w = MainWindow(settings, cache=cache, autoload_model=False, model="/nonexistent",
                   confirm=lambda _q: False, autosave_dir=tmp / "autosave")
    w.resize(1400, 900)
    w.show()
    w.library_dock.raise_()
    lates: list[float] = []
    clock = QElapsedTimer()
    probe = QTimer()
    probe.setInterval(5)

    def tick() -> None:
        lates.append(max(0.0, clock.nsecsElapsed() / 1e6 - 5.0))
        clock.restart()

    probe.timeout.connect(tick)

    def wait(pred: Any, timeout: float) -> float:
        start = time.perf_counter()
        deadline = time.monotonic() + timeout
        while not pred() and time.monotonic() < deadline:
            loop = QEventLoop()
            QTimer.singleShot(5, loop.quit)
            loop.exec()
        return round((time.perf_counter() - start) * 1000, 1)

    def step(do: Any, done: Any) -> dict[str, float]:
        lates.clear()
        clock.start()
        probe.start()
        do()
        ms = wait(done, 300)
        probe.stop()
        return {"ms": ms, "stall_max_ms": round(max(lates, default=0.0), 1)}

    view = w.library_panel.video_list
    tree = w.library_panel.videos
    out: dict[str, Any] = {"videos": n, "build_library_s": round(build_s, 1)}
    wait(lambda: False, 1.0)
    out["idle"] = step(lambda: None, lambda: len(lates) >= 200)
    out["add_folder_scan"] = step(lambda: w.library.add_folder(str(folder)),
                                  lambda: tree.topLevelItemCount() == n)
    out["rescan_unchanged"] = step(w.library.rescan,
                                   lambda: w.library_panel.status.text().startswith(f"{n} "))
    started = time.perf_counter()
    w.library_panel.show_videos(list(view.videos.values()))
    out["rebuild_rows_ms"] = round((time.perf_counter() - started) * 1000, 1)
    out["pause"] = step(lambda: view.pauseRequested.emit(True), lambda: w.queue.paused)
    out["queue_all_selected"] = step(lambda: (view.tree.selectAll(), view.queue_button.click()),
                                     lambda: len(w.queue.queue) == n)
    last = w.queue.queue[-1].fingerprint
    out["move_last_to_front"] = step(lambda: view.moveRequested.emit(last, -n),
                                     lambda: w.queue.queue[0].fingerprint == last)
    out["search_index"] = step(lambda: w.library.search("dog jumping into a pool"),
                               lambda: w.library.result is not None)
    out["search_index"]["hits"] = len(w.library.result.hits)
    out["search_index"]["index_ms"] = round(w.library.result.index_ms, 1)
    started = time.perf_counter()
    w.library_panel.query.setText("red door")
    w.library_panel.query.returnPressed.emit()
    out["second_search"] = {"ms": wait(lambda: w.library.result.query == "red door", 60)}
    w.shutdown()
    w.close()
    cache.close()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--startup-child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--video")
    parser.add_argument("--window", type=float, default=10.0)
    parser.add_argument("--tokens", type=int, default=48)
    parser.add_argument("--paint-only", action="store_true", help="skip the model stall part")
    parser.add_argument("--library", type=int, default=1000, help="videos in the library part")
    parser.add_argument("--library-only", action="store_true")
    args = parser.parse_args()
    if args.startup_child:
        startup_child()
        return
    if args.library_only:
        print(json.dumps({"library": measure_library(args.library), "cpus": os.cpu_count(),
                          "load_average": [round(x, 2) for x in os.getloadavg()],
                          "targets": {"stall_ms": 50.0}}, indent=2))
        return
    load_before = os.getloadavg()
    startup = measure_startup()
    paint = measure_paint()
    if args.paint_only:
        print(json.dumps(paint, indent=2))
        return
    stall = measure_stall(args.video, args.window, args.tokens)
    library = measure_library(args.library)
    result = {"startup_s": [round(t, 2) for t in startup], "paint_5000_events": paint,
              "analysis_stall": stall, "library": library, "cpus": os.cpu_count(),
              "load_average": {"before": [round(x, 2) for x in load_before],
                               "after": [round(x, 2) for x in os.getloadavg()]},
              "targets": {"startup_s": 2.0, "paint_ms": 16.0, "stall_ms": 50.0}}
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
