"""`marlin-desk shots VIDEO`: the video's shot changes (cut times), detected once and cached."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from marlin_desk.cli.common import emit_json, progress, run_in_worker
from marlin_desk.core.errors import BadInput


def register(subparsers: Any) -> None:
    from marlin_desk.media.shots import SCENE_THRESHOLD

    p = subparsers.add_parser(
        "shots", help="list the video's shot changes (hard cuts)",
        description="Find the hard cuts of VIDEO with FFmpeg's scene score (one pass over a "
                    "320 px copy) and print their times in seconds from the first frame: the "
                    "first frame of each new shot. Stored in the analysis cache by content, so "
                    "asking again is instant.")
    p.add_argument("video", metavar="VIDEO")
    p.add_argument("--threshold", type=float, default=SCENE_THRESHOLD,
                   help="scene score (0-1) a frame must pass to be a cut (default %(default)s)")
    p.add_argument("--json", action="store_true", help="print one JSON document")
    p.set_defaults(func=run_shots)


def shots_for(video: str, threshold: float | None = None) -> Any:
    """workflows.Shots for `video` through the cache, Ctrl-C cancelling FFmpeg cleanly."""
    import threading

    from marlin_desk.media.shots import ShotSettings
    from marlin_desk.store.cache import AnalysisCache, CacheUnavailable
    from marlin_desk.workflows.shots import find_shots

    try:
        settings = ShotSettings() if threshold is None else ShotSettings(threshold=threshold)
    except ValueError as exc:
        raise BadInput(str(exc)) from None
    try:
        cache: AnalysisCache | None = AnalysisCache()
    except CacheUnavailable as exc:
        progress(f"marlin-desk: shots not cached ({exc})")
        cache = None
    stop = threading.Event()
    bar = _Progress()
    return run_in_worker(lambda: find_shots(video, cache, stop, bar.update, settings=settings),
                         stop.set, "shots")


def run_shots(args: argparse.Namespace) -> int:
    video = args.video
    if not Path(video).is_file():
        raise BadInput(f"{video} does not exist or is not a file")
    shots = shots_for(video, args.threshold)
    if args.json:
        emit_json({"video": str(Path(video).resolve()), **shots.to_json()})
    else:
        for t in shots.times:
            print(f"{t:.6f}")
        where = "from the cache" if shots.cached else "detected"
        progress(f"{len(shots.times)} cuts, {where} in {shots.seconds:.2f} s")
    return 0


class _Progress:
    def __init__(self) -> None:
        self.tty = sys.stderr.isatty()
        self._last = -1

    def update(self, fraction: float) -> None:
        pct = int(fraction * 100)
        if self.tty and pct != self._last:
            self._last = pct
            sys.stderr.write(f"\rshots {pct:3d}%" + ("\r\033[K" if pct >= 100 else ""))
            sys.stderr.flush()
