"""Reframing cost: subject detection + path per minute of 1080p, and a Reels export with the
moving crop vs the fixed centre crop, in one run (with a plain decode of the same file as the
baseline, and the machine's load, since other work may share the cores).

    .venv/bin/python bench/reframe.py [--seconds 60] [--export-seconds 20] [--json]

The source is synthetic (marlin_desk/dev/reframe_videos.py): the astronaut photograph walking
across a textured 1920x1080 30 fps frame, H.264, made once in a temporary folder. The goal
(issue #17): analysing a minute in under 6 s (10 % of real time) on 2 cores.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from marlin_desk.core.reframe import ReframeSettings  # noqa: E402
from marlin_desk.dev.reframe_videos import background, make_reframe_video  # noqa: E402
from marlin_desk.media.clip_export import ClipSpec, ExportOptions, export_clip  # noqa: E402
from marlin_desk.media.ffmpeg_bin import find_ffmpeg  # noqa: E402
from marlin_desk.media.motion_subject import MotionFinder  # noqa: E402
from marlin_desk.media.probe import probe  # noqa: E402
from marlin_desk.media.reframe_detect import detect_span  # noqa: E402
from marlin_desk.media.reframe_path import compute_path  # noqa: E402
from marlin_desk.workflows.reframe import ReframeCache  # noqa: E402


def _load() -> str:
    try:
        return " ".join(f"{v:.2f}" for v in os.getloadavg())
    except OSError:
        return "unknown"


def _timed(fn):  # type: ignore[no-untyped-def]
    began = time.perf_counter()
    value = fn()
    return value, time.perf_counter() - began


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--export-seconds", type=float, default=20.0)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    rows: list[dict[str, object]] = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        source = folder / "reframe-1080p.mp4"
        _, made = _timed(lambda: make_reframe_video(source, "moving", size=(1920, 1080),
                                                    fps=30.0, duration=args.seconds))
        info = probe(str(source))
        minutes = info.duration / 60.0
        binary = find_ffmpeg()
        settings = ReframeSettings()

        def row(case: str, seconds: float, **extra: object) -> None:
            rows.append({"case": case, "seconds": round(seconds, 3),
                         "seconds_per_minute": round(seconds / minutes, 3),
                         "share_of_realtime": round(seconds / info.duration, 4),
                         "load": _load(), **extra})

        _, decode = _timed(lambda: subprocess.run(
            [binary.path, "-v", "error", "-nostdin", "-i", str(source), "-map", "0:v:0",
             "-f", "null", "-"], check=True))
        row("baseline: FFmpeg decode only", decode)
        det, detect = _timed(lambda: detect_span(str(source), info, 0.0, info.duration,
                                                 settings, binary=binary))
        path, plan = _timed(lambda: compute_path(det, 1080, 1920, settings))
        faces = sum(bool(s.faces) for s in det.samples)
        row("detection + cuts (one pass)", detect, samples=len(det.samples),
            samples_with_face=faces)
        row("path from the detections", plan, shots=len(path.shots))
        _, known = _timed(lambda: detect_span(str(source), info, 0.0, info.duration, settings,
                                              binary=binary, cuts=[]))
        row("detection, cuts known (shots cache)", known)
        # What the motion fallback adds to each sample (it runs on every one).
        frames = [background(480, 270, seed)[:, :, ::-1].copy() for seed in (1, 3)]
        finder = MotionFinder()
        _, motion = _timed(lambda: [finder.feed(frames[i % 2]) for i in range(300)])
        rows.append({"case": "motion finder, 300 samples of 480x270", "seconds": round(motion, 3),
                     "ms_per_sample": round(motion / 300 * 1000, 3), "load": _load()})

        span = min(args.export_seconds, info.duration)
        options = ExportOptions(folder / "out", encoder="x264")
        cache = ReframeCache(folder / "reframe-cache")
        # Centre first and last: the spread between the two is the noise of a shared machine.
        cases = [("centre", None, "export reels, centre crop (today)"),
                 ("auto", cache.detections, "export reels, reframed, detection included"),
                 ("auto", cache.detections, "export reels, reframed, detections cached"),
                 ("centre", None, "export reels, centre crop again")]
        for mode, source_of, label in cases:
            spec = ClipSpec(0.0, span, preset="reels", mode="exact", reframe=mode)
            result, seconds = _timed(lambda spec=spec, d=source_of: export_clip(
                source, spec, options, info=info, binary=binary, detections=d))
            rows.append({"case": label, "seconds": round(seconds, 3), "clip_seconds": span,
                         "x_realtime": round(span / seconds, 2), "load": _load(),
                         "reframe": result.reframe})
    doc = {"source": f"{info.width}x{info.height} {info.fps:g} fps, {info.duration:.1f} s",
           "made_in_s": round(made, 1), "cpu_count": os.cpu_count(), "rows": rows}
    if args.json:
        print(json.dumps(doc))
        return 0
    print(f"source {doc['source']} (made in {made:.1f} s), {os.cpu_count()} CPUs")
    for r in rows:
        if "seconds_per_minute" in r:
            extra = (f"{r['seconds_per_minute']:6.2f} s/min  "
                     f"{100 * r['share_of_realtime']:5.1f} % of real time")
        elif "ms_per_sample" in r:
            extra = f"{r['ms_per_sample']:.2f} ms a sample"
        else:
            extra = f"{r['x_realtime']:5.2f}x real time for {r['clip_seconds']:g} s"
        print(f"  {r['case']:<44} {r['seconds']:7.2f} s  {extra}  (load {r['load']})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
