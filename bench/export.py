"""Export speed: fast (stream copy) and exact (re-encode) clips of a 1080p source, and the Reels
preset, in multiples of real time.

    .venv/bin/python bench/export.py [--seconds 60] [--speed veryfast] [--json]

The source is synthetic (FFmpeg's testsrc2 at 1920x1080, 30 fps, with a 440 Hz tone, a keyframe
every 2 s), made once in a temporary folder; each case exports one clip of `--seconds` starting
at 1.3 s (not on a keyframe). x realtime = clip seconds / wall seconds. FFmpeg's CPU seconds
are printed too: on a shared machine they say what the wall time would be on idle cores.
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

from marlin_desk.media.clip_export import ClipSpec, ExportOptions, export_clip  # noqa: E402
from marlin_desk.media.ffmpeg_bin import find_ffmpeg  # noqa: E402
from marlin_desk.media.presets import DEFAULT_SPEED, X264_SPEEDS  # noqa: E402
from marlin_desk.media.probe import probe  # noqa: E402

CASES = [
    ("fast (stream copy)", dict(mode="fast")),
    ("exact, original 1080p", dict()),
    ("exact, youtube 1080p", dict(preset="youtube")),
    ("exact, reels 9:16 crop", dict(preset="reels", fill="crop")),
    ("exact, reels 9:16 blur", dict(preset="reels", fill="blur")),
]


def make_source(folder: Path, seconds: float) -> Path:
    path = folder / "source-1080p.mp4"
    dur = seconds + 3
    subprocess.run([find_ffmpeg().path, "-v", "error", "-y",
                    "-f", "lavfi", "-i", f"testsrc2=s=1920x1080:r=30:d={dur}",
                    "-f", "lavfi", "-i", f"sine=frequency=440:sample_rate=48000:duration={dur}",
                    "-c:v", "libx264", "-preset", "veryfast", "-crf", "20", "-g", "60",
                    "-pix_fmt", "yuv420p", "-c:a", "aac", "-b:a", "192k", "-shortest", str(path)],
                   check=True)
    return path


def _child_cpu() -> float:
    """CPU seconds of finished child processes (FFmpeg); 0 where `resource` is missing."""
    try:
        import resource
    except ImportError:  # Windows
        return 0.0
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=60.0, help="clip length (default 60)")
    ap.add_argument("--speed", choices=X264_SPEEDS, default=DEFAULT_SPEED)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()

    binary = find_ffmpeg()
    rows = []
    with tempfile.TemporaryDirectory(prefix="marlin-bench-") as tmp:
        folder = Path(tmp)
        t0 = time.perf_counter()
        src = make_source(folder, args.seconds)
        made = time.perf_counter() - t0
        if not args.json:
            print(f"FFmpeg {binary.version} ({binary.source}), {os.cpu_count()} CPUs, load "
                  f"average {os.getloadavg()[0]:.1f}; x264 {args.speed}; source made in "
                  f"{made:.1f} s")
        for label, extra in CASES:
            spec = ClipSpec(1.3, 1.3 + args.seconds, **extra)
            out = folder / label.split(",")[0].split(" ")[0]
            t, cpu0 = time.perf_counter(), _child_cpu()
            r = export_clip(src, spec, ExportOptions(out, speed=args.speed))
            wall, cpu = time.perf_counter() - t, _child_cpu() - cpu0
            info = probe(str(r.path))
            row = {"case": label, "clip_s": round(r.real_duration, 3), "wall_s": round(wall, 2),
                   "x_realtime": round(r.real_duration / wall, 1), "cpu_s": round(cpu, 2),
                   "size": f"{info.width}x{info.height}",
                   "mb": round(r.path.stat().st_size / 1e6, 1),
                   "real_start": round(r.real_start, 3)}
            rows.append(row)
            if not args.json:
                print(f"{label:26s} {row['clip_s']:6.1f} s clip in {row['wall_s']:6.2f} s  "
                      f"= {row['x_realtime']:6.1f}x realtime (FFmpeg CPU {cpu:6.1f} s)  "
                      f"{row['size']:>9s} "
                      f"{row['mb']:6.1f} MB  starts at {row['real_start']:.3f} s")
            r.path.unlink()
    if args.json:
        json.dump({"ffmpeg": binary.to_json(), "cpus": os.cpu_count(), "speed": args.speed,
                   "load_average": round(os.getloadavg()[0], 2),
                   "cases": rows}, sys.stdout, indent=2)
        print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
