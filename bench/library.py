"""Library search speed: stage one (the text index) over a synthetic 100-hour library, stage one
plus the model's refine in K windows, and what a plain find over every window would cost.

    .venv/bin/python bench/library.py [--videos 200] [--minutes 30] [--json]

What it does, in one run, in a temporary folder:
1. Writes a synthetic library through the real store API (AnalysisCache.complete, which
   indexes every window as the app does): `--videos` files (random bytes: the store and the
   scan only read bytes) of `--minutes` each, analysed in 120 s windows (Marlin-2B's), each
   window with a scene sentence and `--events` events made from a vocabulary of everyday
   footage ("a man in a red jacket opens the car door"...). No colour screens and no "screen"
   in it, so the real videos below are the only blue screens.
2. Adds four real small videos (64 x 64 colour screens on black, 10-11 s) analysed by the
   trained tiny model (resources/models/marlin-tiny-trained), then `library add`s everything.
3. Stage one: each query of QUERIES `--repeat` times (median and worst, milliseconds).
4. Stage one + refine of K windows for "the blue screen" with the tiny model: cold (the model
   loaded by the call) and warm (the model already loaded, as the app keeps it).
5. Plain find cost: the tiny model's find over every window of a 100 s real file in a fresh
   session (sampling + prefill + question per window), divided per window and extrapolated
   to every window of the library, at the tiny model's 20 s windows and, for scale, the count
   of 120 s windows Marlin-2B would have. An extrapolation, not a measurement.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from marlin_desk.core.timeline import Analysis, Event, WindowResult  # noqa: E402
from marlin_desk.dev.videos import make_video  # noqa: E402
from marlin_desk.library import scan  # noqa: E402
from marlin_desk.library.search import search_library, stage_one  # noqa: E402
from marlin_desk.resources import demo_model  # noqa: E402
from marlin_desk.store import AnalysisCache, CacheKey  # noqa: E402
from marlin_desk.store.library import LibraryStore  # noqa: E402
from marlin_desk.workflows import JobSettings, analyze, find, open_video  # noqa: E402
from training.data import COLOURS  # noqa: E402

WINDOW_S = 120.0
QUERIES = ["the dog jumps into the pool", "a man opens the door", "car", "do",
           "people dancing at night", "close-up of hands typing on a keyboard",
           'kid" AND (ball', "woman laughing in the kitchen", "the blue screen"]
SUBJECTS = ["a man", "a woman", "a child", "two kids", "an old man", "a dog", "a cat",
            "a cyclist", "a waiter", "the presenter", "a crowd", "a girl", "a boy", "a couple",
            "a chef", "a runner", "a driver", "a teacher", "a musician", "a police officer"]
DETAILS = ["", "", "in a red jacket", "with a hat", "in a white shirt", "with sunglasses",
           "carrying a bag", "in a green coat", "holding a phone", "with a backpack"]
ACTIONS = ["opens the door", "jumps into the pool", "walks down the street", "sits on a bench",
           "laughs", "talks to the camera", "picks up a ball", "throws a ball", "runs across the "
           "field", "drinks coffee", "types on a keyboard", "rides a bicycle", "dances",
           "cuts vegetables", "waves at the camera", "climbs the stairs", "plays the guitar",
           "reads a book", "gets out of the car", "closes the window", "eats a sandwich",
           "points at the sky", "hugs a friend", "ties a shoe", "parks the car", "swims"]
PLACES = ["", "", "in the kitchen", "at night", "in the park", "on the beach", "in the office",
          "at the station", "in the rain", "on a stage", "in a busy market", "by the lake",
          "in the garden", "on the highway", "in a small cafe", "at the gym"]
SCENES = ["A sunny street with shops and parked cars.", "A kitchen with wooden cabinets.",
          "An office with desks and computers.", "A park with trees and a pond.",
          "A beach with waves and people.", "A living room with a sofa and a lamp.",
          "A concert stage with bright lights.", "A swimming pool in a back garden.",
          "A train station platform at dusk.", "A classroom with children at desks."]
REAL = {  # the real videos: (seconds, colour) segments, on black
    "real-beach.mp4": [(2, "black"), (4, "blue"), (2, "black"), (3, "red")],
    "real-city.mp4": [(1, "black"), (3, "green"), (2, "black"), (4, "blue"), (1, "black")],
    "real-forest.mp4": [(2, "black"), (4, "red"), (2, "black"), (3, "green")],
    "real-desert.mp4": [(1, "black"), (5, "yellow"), (2, "black")],
}


def event_text(rng: random.Random) -> str:
    words = [rng.choice(SUBJECTS), rng.choice(DETAILS), rng.choice(ACTIONS), rng.choice(PLACES)]
    return " ".join(w for w in words if w)


def synthetic_analysis(rng: random.Random, minutes: float, events: int) -> Analysis:
    duration = minutes * 60.0
    windows = []
    for i in range(int(duration // WINDOW_S)):
        start = i * WINDOW_S
        evs = []
        for _ in range(events):
            a = start + rng.uniform(0, WINDOW_S - 20)
            evs.append(Event(round(a, 1), round(a + rng.uniform(3, 20), 1), event_text(rng)))
        evs.sort(key=lambda e: e.start)
        windows.append(WindowResult(i, start, start + WINDOW_S, "", True, rng.choice(SCENES),
                                    evs, frames=240, video_tokens=23520))
    return Analysis(duration, "synthetic", windows[0].scene, [e for w in windows
                                                                 for e in w.events], windows)


def build_synthetic(folder: Path, cache: AnalysisCache, videos: int, minutes: float,
                    events: int) -> dict[str, Any]:
    rng = random.Random(7)
    started = time.perf_counter()
    windows = 0
    for n in range(videos):
        path = folder / f"day {n // 20 + 1:02d}" / f"cam{n % 20:02d}.mp4"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(os.urandom(4096))
        analysis = synthetic_analysis(rng, minutes, events)
        analysis.video = str(path)
        key = CacheKey.for_file(path, "NemoStation/Marlin-2B", "default", "bf16",
                                {"window": WINDOW_S})
        cache.complete(key, analysis)
        windows += len(analysis.windows)
    return {"videos": videos, "hours": round(videos * minutes / 60, 1), "windows": windows,
            "events": windows * events, "write_s": round(time.perf_counter() - started, 2)}


def build_real(folder: Path, cache: AnalysisCache, settings: JobSettings) -> float:
    started = time.perf_counter()
    folder.mkdir(parents=True, exist_ok=True)
    engine = None
    for name, parts in REAL.items():
        path = make_video(folder / name, segments=[(d, COLOURS[c]) for d, c in parts],
                          size=(64, 64), fps=10, frame_code=False)
        bench = open_video(str(path), settings, cache=cache, engine=engine)
        analyze(bench)
        engine, _ = bench.engine, bench.close()
    return time.perf_counter() - started


def time_stage_one(store: LibraryStore, repeat: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for query in QUERIES:
        times = []
        for _ in range(repeat):
            t = time.perf_counter()
            hits = stage_one(store, query, 10)
            times.append((time.perf_counter() - t) * 1000)
        out[query] = {"median_ms": round(statistics.median(times), 2),
                      "max_ms": round(max(times), 2), "hits": len(hits)}
    return out


def plain_find_cost(folder: Path, settings: JobSettings) -> dict[str, Any]:
    """The tiny model's find over every window of a 100 s file, from a fresh session."""
    path = make_video(folder / "plain-find.mp4", size=(64, 64), fps=10, frame_code=False,
                      segments=[(40, COLOURS["black"]), (10, COLOURS["blue"]),
                                (50, COLOURS["black"])])
    bench = open_video(str(path), settings, use_cache=False)
    bench.ensure_session()  # the model load is not part of a window's cost
    t = time.perf_counter()
    find(bench, ["the blue screen"])
    seconds = time.perf_counter() - t
    windows = bench.total_windows
    t = time.perf_counter()
    find(bench, ["the red screen"])  # every prefill reused: the question alone
    reused = time.perf_counter() - t
    bench.close()
    return {"windows": windows, "window_s": bench.settings.window,
            "per_window_s": round(seconds / windows, 3),
            "per_window_reused_prefill_s": round(reused / windows, 3)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--videos", type=int, default=200)
    parser.add_argument("--minutes", type=float, default=30.0)
    parser.add_argument("--events", type=int, default=8, help="events per 120 s window")
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--refine", type=int, default=4, help="K windows to refine")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    settings = JobSettings(model=str(demo_model()), device="cpu")
    report: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="marlin-bench-library-") as tmp:
        root = Path(tmp)
        cache = AnalysisCache(root / "analyses.sqlite3")
        report["library"] = build_synthetic(root / "synthetic", cache, args.videos,
                                            args.minutes, args.events)
        report["library"]["real_videos_analysed_s"] = round(
            build_real(root / "real", cache, settings), 2)
        t = time.perf_counter()
        scan.add([str(root / "synthetic"), str(root / "real")], cache)
        report["library"]["scan_s"] = round(time.perf_counter() - t, 2)
        store = LibraryStore(cache)
        t = time.perf_counter()
        store.reindex("for the bench")
        report["library"]["reindex_s"] = round(time.perf_counter() - t, 2)
        report["library"]["db_mib"] = round(
            sum(p.stat().st_size for p in root.glob("analyses.sqlite3*")) / 2**20, 1)
        report["stage_one"] = time_stage_one(store, args.repeat)
        refine: dict[str, Any] = {}
        for label in ("cold", "warm"):
            t = time.perf_counter()
            result = search_library("the blue screen", cache=cache, top=10,
                                    refine=args.refine, settings=settings,
                                    engine=refine.get("_engine"))
            refine[label] = {"total_s": round(time.perf_counter() - t, 3),
                             "index_ms": round(result.index_ms, 2),
                             "refine_s": round(result.refine_s, 3),
                             "windows": result.refined_windows,
                             "model_hits": sum(h.stage == "model" for h in result.hits),
                             "notes": result.notes}
            if label == "cold":  # the next call reuses the loaded model, as the app does
                bench = open_video(str(root / "real" / "real-beach.mp4"), settings,
                                   cache=cache)
                bench.ensure_session()
                refine["_engine"] = bench.engine
                bench.close()
        refine.pop("_engine")
        report["refine"] = refine
        cost = plain_find_cost(root, settings)
        hours = report["library"]["hours"]
        tiny_windows = int(hours * 3600 / cost["window_s"])
        cost["library_windows_at_tiny_window"] = tiny_windows
        cost["library_hours_estimate"] = round(tiny_windows * cost["per_window_s"] / 3600, 2)
        cost["library_windows_at_120s"] = report["library"]["windows"]
        cost["note"] = ("extrapolated: a plain find must prefill every window (prefills are "
                        "kept per session, in memory); Marlin-2B's 120 s windows cost far more "
                        "each than the tiny model's")
        report["plain_find"] = cost
        cache.close()
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        _print(report)
    return 0


def _print(r: dict[str, Any]) -> None:
    lib = r["library"]
    print(f"library: {lib['videos']} synthetic videos, {lib['hours']} h, {lib['windows']} "
          f"windows, {lib['events']} events (written through the store in {lib['write_s']} s), "
          f"+4 real videos analysed by the tiny model in {lib['real_videos_analysed_s']} s; "
          f"scan {lib['scan_s']} s, reindex {lib['reindex_s']} s, database {lib['db_mib']} MiB")
    print("stage one (index, top 10):")
    for q, t in r["stage_one"].items():
        print(f"  {t['median_ms']:7.2f} ms median {t['max_ms']:7.2f} ms max  {t['hits']:2d} hits"
              f"  {q!r}")
    for label, t in r["refine"].items():
        print(f"stage one + refine ({label} model): {t['total_s']:.3f} s: index "
              f"{t['index_ms']:.2f} ms, model {t['refine_s']:.3f} s in {t['windows']} windows, "
              f"{t['model_hits']} model hits {t['notes'] or ''}")
    c = r["plain_find"]
    print(f"plain find, tiny model: {c['per_window_s']:.3f} s per {c['window_s']:g} s window "
          f"(measured on {c['windows']} windows; {c['per_window_reused_prefill_s']:.3f} s with "
          f"the prefill reused); every window of the library: {c['library_windows_at_tiny_window']}"
          f" windows = about {c['library_hours_estimate']} h (extrapolated; Marlin-2B would "
          f"have {c['library_windows_at_120s']} windows of 120 s, each far costlier)")


if __name__ == "__main__":
    raise SystemExit(main())
