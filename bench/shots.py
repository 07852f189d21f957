"""Shot detection speed: FFmpeg's scene score on a 1080p clip, as media/shots.py runs it (a
320 px copy), next to the same filter at full size, in wall seconds and multiples of real time.

    .venv/bin/python bench/shots.py [--seconds 60] [--json]

The source is synthetic: testsrc2 and solid-colour segments of 5 s alternating at 1920x1080,
30 fps (so the expected cut count is known: one every 5 s), made once in a temporary folder.
The TOOLCHAIN note measured FFmpeg's `select=gt(scene,x)` at full size at 4.6 s for 60 s on two
cores, PySceneDetect 7-9.5 s.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from marlin_desk.media.ffmpeg_bin import find_ffmpeg  # noqa: E402
from marlin_desk.media.probe import probe  # noqa: E402
from marlin_desk.media.shots import ShotSettings, detect_shots  # noqa: E402

SEGMENT_S = 5


def make_source(folder: Path, seconds: int) -> Path:
    path = folder / "shots-1080p.mp4"
    count = max(2, seconds // SEGMENT_S)
    args = [find_ffmpeg().path, "-v", "error", "-y"]
    for i in range(count):
        src = "testsrc2" if i % 2 == 0 else f"color=c=0x{(40 * i) % 256:02x}6090"
        sep = "=" if i % 2 == 0 else ":"
        args += ["-f", "lavfi", "-i", f"{src}{sep}s=1920x1080:r=30:d={SEGMENT_S}"]
    graph = "".join(f"[{i}:v]" for i in range(count)) + f"concat=n={count}:v=1:a=0[out]"
    subprocess.run([*args, "-filter_complex", graph, "-map", "[out]", "-c:v", "libx264",
                    "-preset", "veryfast", "-crf", "20", "-g", "60", "-pix_fmt", "yuv420p",
                    str(path)], check=True)
    return path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=int, default=60)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        source = make_source(Path(tmp), args.seconds)
        info = probe(str(source))
        rows = []
        for label, width in (("app (320 px)", 320), ("full size", 1920)):
            began = time.perf_counter()
            cuts = detect_shots(str(source), info=info, settings=ShotSettings(width=width))
            wall = time.perf_counter() - began
            rows.append({"case": label, "seconds": round(wall, 3), "cuts": len(cuts),
                         "x_realtime": round(info.duration / wall, 1)})
    expected = max(2, args.seconds // SEGMENT_S) - 1
    if args.json:
        print(json.dumps({"duration": info.duration, "expected_cuts": expected, "rows": rows}))
    else:
        print(f"{info.duration:.1f} s of 1080p30, {expected} cuts expected")
        for r in rows:
            print(f"  {r['case']:<14} {r['seconds']:7.2f} s  {r['x_realtime']:6.1f}x realtime  "
                  f"{r['cuts']} cuts")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
