"""How fast one 60 s window is sampled at the training budget (120 frames), 1080p and 720p.

Run: .venv/bin/python bench/frames.py [--seconds 60] [--repeat 2] [--no-check]

The test files (H.264 High, 30 fps, keyframe every 250 frames, B-frames) are generated once and
cached in the temp folder. The FFmpeg command line writes them when it is there (testsrc2: moving
pictures at a realistic bitrate, quickly); otherwise marlin_desk.dev.videos.make_video does
(slower).
Timings exclude the probe, which is reported separately.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from marlin_desk.core.budget import TRAINING_BUDGET  # noqa: E402
from marlin_desk.media.probe import probe  # noqa: E402
from marlin_desk.media.sampling import sample_window  # noqa: E402

CACHE = Path(tempfile.gettempdir()) / "marlin-bench-frames"
GOP = 250
FPS = 30


def make_file(width: int, height: int, seconds: float) -> Path:
    """The cached test file for this size, written once."""
    CACHE.mkdir(exist_ok=True)
    path = CACHE / f"h264-{width}x{height}-{FPS}fps-{seconds:g}s-gop{GOP}.mp4"
    if path.exists():
        return path
    partial = path.with_suffix(".partial.mp4")
    started = time.perf_counter()
    ffmpeg = shutil.which("ffmpeg")
    if ffmpeg:
        source = f"testsrc2=size={width}x{height}:rate={FPS}:duration={seconds:g}"
        subprocess.run(
            [
                ffmpeg,
                "-v",
                "error",
                "-y",
                "-f",
                "lavfi",
                "-i",
                source,
                "-c:v",
                "libx264",
                "-preset",
                "veryfast",
                "-crf",
                "23",
                "-g",
                str(GOP),
                "-pix_fmt",
                "yuv420p",
                str(partial),
            ],
            check=True,
        )
    else:
        from marlin_desk.dev.videos import make_video

        make_video(
            partial, duration=seconds, size=(width, height), fps=FPS, gop=GOP, texture=True, crf=23
        )
    os.replace(partial, path)
    print(f"  (generated {path.name} in {time.perf_counter() - started:.1f} s)")
    return path


def bench(label: str, width: int, height: int, seconds: float, repeat: int) -> None:
    path = make_file(width, height, seconds)
    started = time.perf_counter()
    info = probe(str(path))
    probe_s = time.perf_counter() - started
    best = cpu = float("inf")
    for _ in range(repeat):
        started, cpu_started = time.perf_counter(), time.process_time()
        sampled = sample_window(str(path), 0.0, info.duration, TRAINING_BUDGET, info=info)
        best = min(best, time.perf_counter() - started)
        cpu = min(cpu, time.process_time() - cpu_started)
    h, w = sampled.size
    mbps = path.stat().st_size * 8 / info.duration / 1e6
    gaps = [b - a for a, b in zip(sampled.times, sampled.times[1:], strict=False)]
    print(
        f"{label:>6}: {best:6.2f} s for {info.duration:.0f} s of video = "
        f"{info.duration / best:5.1f}x realtime (CPU {cpu:.2f} s) | "
        f"{len(sampled.times)} frames of {w}x{h} "
        f"({TRAINING_BUDGET.tokens_per_frame(h, w)} tokens each) | frame times "
        f"{sampled.times[0]:.3f}..{sampled.times[-1]:.3f} s, gaps {min(gaps):.3f}-"
        f"{max(gaps):.3f} s | source {info.width}x{info.height} {info.fps:.2f} fps "
        f"{mbps:.1f} Mbit/s | probe {probe_s * 1000:.0f} ms"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--repeat", type=int, default=2, help="runs per file; the best counts")
    args = parser.parse_args()
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(
        f"sample_window over one {args.seconds:g} s window, budget {TRAINING_BUDGET.fps:g} fps, "
        f"{os.cpu_count()} CPU cores, load average {load:.1f} (best of {args.repeat}; CPU time "
        "counts every core, so on an idle machine wall time is about CPU / cores)"
    )
    bench("1080p", 1920, 1080, args.seconds, args.repeat)
    bench("720p", 1280, 720, args.seconds, args.repeat)


if __name__ == "__main__":
    main()
