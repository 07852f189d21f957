"""Score a trained model folder on held-out seeded clips through the APP's own path.

Each clip is written as a real video file (H.264 via tests/videos.make_video), then answered by
`VideoSession.ask` (sample_window -> video_prefix -> prefill -> suffix -> greedy decode), with
the budget recorded in the folder's budget.json. So this measures what a user of the app gets.

    nice -n 15 .venv/bin/python -m training.evaluate /work/training-runs/probe_s0 --task probe
"""

from __future__ import annotations

import argparse
import json
import tempfile
from collections import Counter
from pathlib import Path

from marlin_desk.core.budget import VideoBudget
from marlin_desk.core.parsing import parse_find
from marlin_desk.core.windows import Window
from training.data import COLOURS, HELD_OUT_BASE, clip_kind, example

EVAL_BASE = HELD_OUT_BASE + 500_000  # disjoint from training and from train.py's held-out batch


def iou(a: tuple[float, float], b: tuple[float, float]) -> float:
    inter = max(0.0, min(a[1], b[1]) - max(a[0], b[0]))
    union = max(a[1], b[1]) - min(a[0], b[0])
    return inter / union if union > 0 else 0.0


def write_clip(path: Path, segments: list[tuple[float, float, str]], duration: float) -> None:
    from tests.videos import make_video

    parts: list[tuple[float, tuple[int, int, int]]] = []
    t = 0.0
    for a, b, name in segments:
        if a > t:
            parts.append((a - t, COLOURS["black"]))
        parts.append((b - a, COLOURS[name]))
        t = b
    if duration > t:
        parts.append((duration - t, COLOURS["black"]))
    make_video(path, segments=parts, size=(64, 64), fps=10, frame_code=False)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("model")
    p.add_argument("--task", choices=["probe", "find"], default="probe")
    p.add_argument("-n", type=int, default=40)
    p.add_argument("--max-segments", type=int, default=2, choices=[1, 2])
    p.add_argument("--min-segments", type=int, default=1, choices=[1, 2])
    p.add_argument("--max-duration", type=int, default=12,
                   help="find: clip lengths 4..max-duration s (12: the first session's set)")
    p.add_argument("--threads", type=int, default=1)
    args = p.parse_args(argv)

    import torch

    from marlin_desk.engine.loader import load_model
    from marlin_desk.engine.session import VideoSession

    torch.set_num_threads(args.threads)
    folder = Path(args.model)
    budget = VideoBudget(**json.loads((folder / "budget.json").read_text()))
    engine = load_model(str(folder), device="cpu")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(args.n):
            ex = example(args.task, EVAL_BASE + i, None, args.max_segments, args.min_segments,
                         max_duration=args.max_duration)
            duration = ex.frames.window_end
            path = Path(tmp) / f"clip{i}.mp4"
            write_clip(path, ex.segments, duration)
            session = VideoSession(engine, str(path), budget=budget)
            answer = session.ask(Window(0, 0.0, duration), ex.prompt, 16)
            row = {"seed": EVAL_BASE + i, "duration": duration, "truth": ex.target,
                   "answer": answer.text,
                   "segments": ex.segments}
            if args.task == "probe":
                row["correct"] = answer.text.strip().lower() == ex.target
            else:
                parsed = parse_find(answer.text, duration)
                span = (parsed.span.start, parsed.span.end) if parsed.span else None
                row.update(kind=clip_kind(ex), format_ok=parsed.format_ok,
                           iou=iou(span, ex.target) if span else 0.0,
                           iou_whole=iou((0.0, duration), ex.target),
                           iou_first=iou(ex.segments[0][:2], ex.target))
            rows.append(row)
    summary: dict[str, object] = {"model": str(folder), "task": args.task, "n": args.n}
    if args.task == "probe":
        summary["accuracy"] = sum(r["correct"] for r in rows) / len(rows)
        summary["chance"] = 1 / 8
        summary["answers"] = dict(Counter(r["answer"] for r in rows))
        confusion = Counter((r["truth"], r["answer"]) for r in rows if not r["correct"])
        summary["errors"] = {f"{t}->{a}": c for (t, a), c in confusion.items()}
    else:
        mean = lambda key: sum(r[key] for r in rows) / len(rows)  # noqa: E731
        summary.update(mean_iou=mean("iou"), format_ok=mean("format_ok"),
                       baseline_whole_video=mean("iou_whole"),
                       baseline_first_segment=mean("iou_first"),
                       distinct_answers=len({r["answer"] for r in rows}),
                       by_kind={k: {"n": len(sel), "mean_iou": sum(r["iou"] for r in sel)
                                    / len(sel), "iou_ge_0.5": sum(r["iou"] >= 0.5 for r in sel)}
                                for k in ("1seg", "2seg_first", "2seg_second")
                                if (sel := [r for r in rows if r["kind"] == k])},
                       top_answers=Counter(r["answer"] for r in rows).most_common(5))
    suffix = "" if args.max_duration == 12 else f"_d{args.max_duration}"
    (folder / f"eval_{args.task}{suffix}.json").write_text(json.dumps(
        {"summary": summary, "rows": rows}, indent=1, default=str))
    print(json.dumps(summary, indent=1, default=str))


if __name__ == "__main__":
    main()
