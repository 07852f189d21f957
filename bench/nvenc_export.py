"""NVENC vs libx264 for a Reels export (issue #15/#19): a 60 s 1080p clip exported with the
9:16 preset by the app's own export code, once per encoder, in one run; plus the bare FFmpeg
command for each, as a user would type it. Where NVENC does not work (no NVIDIA driver or GPU,
as on this project's CPU machines) it says why, from the app's own test encode, and times x264.

    python bench/nvenc_export.py                 # on a machine with an NVIDIA GPU
    python bench/nvenc_export.py --seconds 4     # a quick dry run anywhere
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

from bench.gpu_check import make_video  # noqa: E402
from marlin_desk.media.encoders import verdicts  # noqa: E402
from marlin_desk.media.export import ClipSpec, ExportOptions, export_clip, find_ffmpeg  # noqa: E402


def app_export(video: Path, seconds: float, out: Path, encoder: str) -> dict[str, object]:
    started = time.perf_counter()
    result = export_clip(str(video), ClipSpec(0.0, seconds, encoder, preset="reels",
                                              mode="exact"),
                         ExportOptions(out / encoder, encoder=encoder))
    took = time.perf_counter() - started
    return {"case": f"app reels, --encoder {encoder}", "seconds": round(took, 2),
            "status": result.status, "encoder": (result.encoder or {}).get("name"),
            "why": (result.encoder or {}).get("why"), "error": result.error}


def bare(binary: str, video: Path, seconds: float, out: Path, codec: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run([binary, "-v", "error", "-y", "-i", str(video), "-t", str(seconds),
                    "-vf", "crop=ih*9/16:ih,scale=1080:1920,setsar=1", *codec, "-c:a", "aac",
                    str(out)], check=True)
    return round(time.perf_counter() - started, 2)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--out", default=None, help="write the rows as JSON here")
    args = parser.parse_args(argv)
    binary = find_ffmpeg()
    with tempfile.TemporaryDirectory(prefix="nvenc-bench-") as tmp:
        folder = Path(tmp)
        video = make_video(folder / "source.mp4", args.seconds, 1920, 1080, fps=30)
        nvenc_why = verdicts(binary, "h264").get("nvenc", "h264_nvenc is not in this FFmpeg")
        rows = [app_export(video, args.seconds, folder, "x264")]
        rows.append({"case": "bare ffmpeg libx264 veryfast crf 18", "seconds": bare(
            str(binary.path), video, args.seconds, folder / "bare-x264.mp4",
            ["-c:v", "libx264", "-preset", "veryfast", "-crf", "18"])})
        if nvenc_why is None:
            rows.append(app_export(video, args.seconds, folder, "nvenc"))
            rows.append({"case": "bare ffmpeg h264_nvenc p4 cq 19", "seconds": bare(
                str(binary.path), video, args.seconds, folder / "bare-nvenc.mp4",
                ["-c:v", "h264_nvenc", "-preset", "p4", "-cq", "19"])})
        else:
            rows.append({"case": "app reels, --encoder nvenc", "seconds": None,
                         "why": f"NVENC does not work here: {nvenc_why}"})
    print(f"Reels export of a {args.seconds:g} s 1080p30 clip ({binary.path}):")
    for row in rows:
        took = "n/a" if row["seconds"] is None else f"{row['seconds']:.2f} s"
        extra = f"  [{row.get('encoder')}] {row.get('why') or ''}" if "why" in row else ""
        print(f"  {row['case']:<40} {took:>9}{extra}")
    if args.out:
        Path(args.out).write_text(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
