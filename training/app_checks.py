"""Which end-to-end behaviours does a trained model folder support through the app's real path?

Runs `workflows.open_video` + `workflows.find` (windows, merging, ranking by the model's own
score) on real H.264 files from `marlin_desk/dev/videos.make_video`, and prints one line per check:
- present vs absent colour: the top span's score for a colour in the clip vs one not in it;
- window offsets: a 10 s event at 130-140 s of a 5-minute video, 20 s windows;
- a window boundary: an event at 55-65 s (windows of 20 s split it at 60 s);
- VFR and a start offset: the same clip written with variable frame times / an edit-list
  offset gives the same video-time answer.
Decide from this output which tests are honest to write; it asserts nothing.

    nice -n 15 .venv/bin/python -m training.app_checks /work/training-runs/mix70
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path
from typing import Any

from training.data import COLOURS
from training.evaluate import iou

Parts = list[tuple[float, str]]  # (seconds, colour name) in order


def write(path: Path, parts: Parts, **kw: Any) -> Path:
    from marlin_desk.dev.videos import make_video

    return make_video(path, segments=[(d, COLOURS[c]) for d, c in parts], size=(64, 64),
                      fps=kw.pop("fps", 10), frame_code=False, **kw)


def find(model: str, video: Path, queries: list[str], window: float) -> list[Any]:
    import torch

    from marlin_desk.workflows import JobSettings, find, open_video

    torch.set_num_threads(1)
    bench = open_video(str(video), JobSettings(model=model, device="cpu", window=window),
                       use_cache=False)
    return find(bench, queries)


def top(result: Any) -> tuple[float, float, float] | None:
    if not result.spans:
        return None
    s = result.spans[0]
    return (round(s.start, 2), round(s.end, 2), round(s.score, 3) if s.score is not None else None)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("model")
    p.add_argument("--window", type=float, default=20.0)
    args = p.parse_args(argv)
    report: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        # 1. present vs absent, single-window clips of 10 s
        rows = []
        for i, (parts, present, absent) in enumerate([
            ([(2, "black"), (3, "red"), (1, "black"), (2, "blue"), (2, "black")], "red", "green"),
            ([(1, "black"), (4, "green"), (3, "black")], "green", "yellow"),
            ([(3, "black"), (2, "yellow"), (2, "black"), (3, "red")], "yellow", "blue"),
            ([(5, "blue"), (1, "black"), (3, "green"), (1, "black")], "green", "red"),
        ]):
            video = write(d / f"pa{i}.mp4", parts)
            res = find(args.model, video, [f"the {present} screen", f"the {absent} screen"],
                       window=120.0)
            t = 0.0
            truth = None
            for sec, c in parts:
                if c == present:
                    truth = (t, t + sec)
                t += sec
            got = top(res[0])
            rows.append({"present": got, "absent": top(res[1]), "truth": truth,
                         "iou": iou(got[:2], truth) if got else 0.0})
        report["present_vs_absent"] = rows
        # 2. window offsets and boundary, 5-minute video
        for name, parts, truth in [
            ("offset_130_140", [(130, "black"), (10, "red"), (160, "black")], (130.0, 140.0)),
            ("boundary_55_65", [(55, "black"), (10, "red"), (235, "black")], (55.0, 65.0)),
        ]:
            started = time.perf_counter()
            video = write(d / f"{name}.mp4", parts, fps=5)
            res = find(args.model, video, ["the red screen"], window=args.window)[0]
            spans = [(round(s.start, 2), round(s.end, 2), round(s.score, 3)) for s in res.spans]
            report[name] = {"truth": truth, "top": spans[:3], "n_spans": len(spans),
                            "top_iou": iou(spans[0][:2], truth) if spans else 0.0,
                            "seconds": round(time.perf_counter() - started, 1)}
        # 3. VFR and start offset: the same 12 s clip
        parts = [(3, "black"), (4, "green"), (2, "black"), (3, "blue")]
        same = {}
        for name, kw in [("cfr", {}), ("vfr", {"vfr": True}),
                         ("offset", {"start_offset": 1.5}), ("vfr_offset",
                                                             {"vfr": "jitter",
                                                              "start_offset": 2.0})]:
            video = write(d / f"{name}.mp4", parts, **kw)
            res = find(args.model, video, ["the green screen", "the blue screen"], window=120.0)
            same[name] = [top(r) for r in res]
        report["vfr_offset"] = {"truth": [(3.0, 7.0), (9.0, 12.0)], **same}
    print(json.dumps(report, indent=1))
    (Path(args.model) / "app_checks.json").write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
