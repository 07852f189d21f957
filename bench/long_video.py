"""A 10-minute video with the tiny model: analysis per window, reopening from the cache, and
first vs later queries.

    .venv/bin/python bench/long_video.py [--minutes 10]

Prints: seconds per window of the first analysis; the time to reopen the analysed video from the
cache (no model load) and its ratio to the first analysis; a first query on a freshly opened
video (pays every window's prefill) vs the mean of later queries (question tokens only); peak
resident memory.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from marlin_desk.dev.tiny_model import build_tiny_model  # noqa: E402
from marlin_desk.dev.videos import make_video  # noqa: E402
from marlin_desk.workflows import JobSettings, analyze, find, open_video  # noqa: E402

QUERIES = ["the screen turns red", "a blue screen", "green", "the dog jumps into the pool"]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--minutes", type=float, default=10.0)
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="bench-long-"))
    os.environ["MARLIN_DESK_CACHE"] = str(tmp / "cache")
    seconds = args.minutes * 60
    colours = [(255, 0, 0), (0, 0, 255), (0, 255, 0), (255, 255, 0), (255, 255, 255)]
    segments = [(20.0, colours[i % len(colours)]) for i in range(int(seconds // 20))]
    t0 = time.perf_counter()
    video = make_video(tmp / "long.mp4", size=(160, 96), fps=10, segments=segments)
    print(f"made a {seconds:.0f} s video in {time.perf_counter() - t0:.1f} s")
    settings = JobSettings(model=str(build_tiny_model(tmp / "tiny")), device="cpu")

    started = time.perf_counter()
    bench = open_video(str(video), settings)
    per_window: list[float] = []
    analysis, cached = analyze(bench, on_window=lambda w: per_window.append(w.seconds))
    first = time.perf_counter() - started
    assert not cached
    print(f"first analysis: {first:.1f} s for {len(analysis.windows)} windows "
          f"({statistics.mean(per_window):.1f} s per window; "
          f"{analysis.windows[0].prompt_tokens} prompt tokens, "
          f"{analysis.windows[0].frames} frames each)")

    started = time.perf_counter()
    reopened = open_video(str(video), settings)
    again, cached = analyze(reopened)
    reopen = time.perf_counter() - started
    assert cached and reopened.engine is None and len(again.windows) == len(analysis.windows)
    print(f"reopen from the cache (no model load): {reopen:.3f} s; "
          f"first analysis / reopen: {first / reopen:.0f}x")

    fresh = open_video(str(video), settings, engine=bench.engine)
    times = []
    for q in QUERIES:
        started = time.perf_counter()
        find(fresh, [q])
        times.append(time.perf_counter() - started)
    later = statistics.mean(times[1:])
    print(f"first query on the reopened video (prefills recomputed): {times[0]:.1f} s")
    print(f"later queries (reused prefills), mean: {later:.2f} s; first / later: "
          f"{times[0] / later:.1f}x")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak resident memory: {peak:.0f} MB")


if __name__ == "__main__":
    main()
