"""Export speed: smart (re-encode to the first keyframe, copy the rest), exact (re-encode),
fast (stream copy) clips of a 1080p source and the presets, in multiples of real time, next to
the bare FFmpeg commands that do a plain copy and a plain re-encode of the same span.

    .venv/bin/python bench/export.py [--seconds 60] [--speed veryfast] [--only smart,exact,...]
                                     [--json]

The source is synthetic (FFmpeg's testsrc2 at 1920x1080, 30 fps, with a 440 Hz tone, a keyframe
every 2 s, x264's default B-frames), made once in a temporary folder; each case exports one clip
of `--seconds` starting at 1.3 s (not on a keyframe). x realtime = clip seconds / wall seconds.
FFmpeg's CPU seconds are printed too: on a shared machine they say what the wall time would be on
idle cores. The last lines compare smart with exact and with the bare copy.
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
    ("smart", "smart (head re-encode + copy)", dict(mode="smart")),
    ("fast", "fast (stream copy)", dict(mode="fast")),
    ("exact", "exact, original 1080p", dict(mode="exact")),
    ("youtube", "exact, youtube 1080p", dict(preset="youtube", mode="exact")),
    ("reels", "exact, reels 9:16 crop", dict(preset="reels", fill="crop", mode="exact")),
    ("blur", "exact, reels 9:16 blur", dict(preset="reels", fill="blur", mode="exact")),
    # Loudness normalisation: two-pass loudnorm, the first pass an extra decode of the audio.
    ("reels-loud", "exact, reels + loudnorm -14",
     dict(preset="reels", fill="crop", mode="exact", loudness=-14.0)),
    ("smart-loud", "smart + loudnorm -14", dict(mode="smart", loudness=-14.0)),
]
_OPTION_KEYS = ("loudness", "audio_channels", "audio_kbps")  # ExportOptions, not ClipSpec
# The same spans cut by FFmpeg alone: what the app's own work (planning, checks) costs on top.
BARE = [
    ("bare-copy", "bare ffmpeg -c copy", ["-c", "copy"]),
    ("bare-x264", "bare ffmpeg libx264", ["-c:v", "libx264", "-preset", "{speed}", "-crf", "18",
                                          "-c:a", "aac"]),
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


def _bare(src: Path, out: Path, seconds: float, codec_args: list[str]) -> None:
    subprocess.run([find_ffmpeg().path, "-v", "error", "-y", "-ss", "1.3", "-i", str(src),
                    "-t", f"{seconds}", *codec_args, str(out)], check=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=60.0, help="clip length (default 60)")
    ap.add_argument("--speed", choices=X264_SPEEDS, default=DEFAULT_SPEED)
    names = [c[0] for c in CASES] + [b[0] for b in BARE]
    ap.add_argument("--only", default=",".join(names),
                    help=f"comma-separated cases (default all: {','.join(names)})")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    only = set(args.only.split(","))
    if only - set(names):
        ap.error(f"unknown cases {', '.join(sorted(only - set(names)))}")

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
        for name, label, extra in CASES:
            if name not in only:
                continue
            spec_args = {k: v for k, v in extra.items() if k not in _OPTION_KEYS}
            opt_args = {k: v for k, v in extra.items() if k in _OPTION_KEYS}
            spec = ClipSpec(1.3, 1.3 + args.seconds, **spec_args)
            t, cpu0 = time.perf_counter(), _child_cpu()
            r = export_clip(src, spec, ExportOptions(folder / name, speed=args.speed,
                                                     **opt_args))
            wall, cpu = time.perf_counter() - t, _child_cpu() - cpu0
            info = probe(str(r.path))
            row = {"case": label, "clip_s": round(r.real_duration, 3), "wall_s": round(wall, 2),
                   "x_realtime": round(r.real_duration / wall, 1), "cpu_s": round(cpu, 2),
                   "size": f"{info.width}x{info.height}",
                   "mb": round(r.path.stat().st_size / 1e6, 1),
                   "real_start": round(r.real_start, 3), "mode_used": r.mode_used,
                   "encoder": r.encoder["name"] if r.encoder else "copy",
                   "fallback": r.fallback}
            rows.append(row)
            _print(row, args.json)
            r.path.unlink()
        for name, label, codec_args in BARE:
            if name not in only:
                continue
            out = folder / f"{name}.mp4"
            t, cpu0 = time.perf_counter(), _child_cpu()
            _bare(src, out, args.seconds, [a.format(speed=args.speed) for a in codec_args])
            wall, cpu = time.perf_counter() - t, _child_cpu() - cpu0
            info = probe(str(out))
            row = {"case": label, "clip_s": round(info.duration, 3), "wall_s": round(wall, 2),
                   "x_realtime": round(info.duration / wall, 1), "cpu_s": round(cpu, 2),
                   "size": f"{info.width}x{info.height}", "mb": round(out.stat().st_size / 1e6, 1),
                   "real_start": None, "mode_used": None, "encoder": None, "fallback": None}
            rows.append(row)
            _print(row, args.json)
            out.unlink()
    walls = {r["case"]: r["wall_s"] for r in rows}
    ratios = {}
    smart = walls.get(CASES[0][1])
    if smart:
        for other in (CASES[2][1], BARE[1][1], BARE[0][1]):
            if other in walls:
                ratios[other] = walls[other] / smart
    if args.json:
        json.dump({"ffmpeg": binary.to_json(), "cpus": os.cpu_count(), "speed": args.speed,
                   "load_average": round(os.getloadavg()[0], 2),
                   "cases": rows,
                   "smart_speedup": {k: round(v, 2) for k, v in ratios.items()}},
                  sys.stdout, indent=2)
        print()
    else:
        for other, ratio in ratios.items():
            print(f"smart is {ratio:.1f}x as fast as {other}" if ratio >= 1
                  else f"smart takes {1 / ratio:.1f}x the time of {other}")
    return 0


def _print(row: dict, as_json: bool) -> None:
    if as_json:
        return
    start = "" if row["real_start"] is None else f"  starts at {row['real_start']:.3f} s"
    used = f"  [{row['mode_used']}, {row['encoder']}]" if row["mode_used"] else ""
    print(f"{row['case']:30s} {row['clip_s']:6.1f} s clip in {row['wall_s']:6.2f} s  "
          f"= {row['x_realtime']:6.1f}x realtime (FFmpeg CPU {row['cpu_s']:6.1f} s)  "
          f"{row['size']:>9s} {row['mb']:6.1f} MB{start}{used}")
    if row["fallback"]:
        print(f"    fell back: {row['fallback']}")


if __name__ == "__main__":
    raise SystemExit(main())
