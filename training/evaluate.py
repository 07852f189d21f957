"""Score a trained model folder on held-out seeded clips through the APP's own path.

Each clip is written as a real video file (H.264 via marlin_desk.dev.videos.make_video), then
answered by `VideoSession.ask` (sample_window -> video_prefix -> prefill -> suffix -> greedy
decode), with the budget recorded in the folder's budget.json. So this measures what a user of
the app gets.

    nice -n 15 .venv/bin/python -m training.evaluate runs/probe_s0 --task probe
"""

from __future__ import annotations

import argparse
import json
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

from marlin_desk.core.budget import VideoBudget
from marlin_desk.core.parsing import parse_find
from marlin_desk.core.windows import Window
from training.data import COLOURS, FIND_COLOURS, HELD_OUT_BASE, clip_kind, example

EVAL_BASE = HELD_OUT_BASE + 500_000  # disjoint from training and from train.py's held-out batch


def iou(a: tuple[float, float], b: tuple[float, float]) -> float:
    inter = max(0.0, min(a[1], b[1]) - max(a[0], b[0]))
    union = max(a[1], b[1]) - min(a[0], b[0])
    return inter / union if union > 0 else 0.0


def write_clip(path: Path, segments: list[tuple[float, float, str]], duration: float,
               size: tuple[int, int] = (64, 64)) -> None:
    from marlin_desk.dev.videos import make_video

    parts: list[tuple[float, tuple[int, int, int]]] = []
    t = 0.0
    for a, b, name in segments:
        if a > t:
            parts.append((a - t, COLOURS["black"]))
        parts.append((b - a, COLOURS[name]))
        t = b
    if duration > t:
        parts.append((duration - t, COLOURS["black"]))
    make_video(path, segments=parts, size=size, fps=10, frame_code=False)


def caption_match(events: list[Any], segments: list[tuple[float, float, str]]
                  ) -> dict[str, Any]:
    """Do the caption's events match the clip's segments one to one, in order, with the right
    colour? And how far is each boundary from the truth (the issue's target: within 0.5 s)?"""
    truth = sorted(segments)
    errors = [abs(x - y) for e, (a, b, _) in zip(events, truth, strict=False)
              for x, y in ((e.start, a), (e.end, b))]
    colours_ok = len(events) == len(truth) and all(
        name in e.description for e, (_, _, name) in zip(events, truth, strict=True))
    return {"count_ok": len(events) == len(truth), "colours_ok": colours_ok,
            "max_boundary_error": max(errors) if errors else 0.0,
            "within_0.5": colours_ok and all(err <= 0.5 for err in errors)}


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("model")
    p.add_argument("--task", choices=["probe", "find", "caption"], default="probe")
    p.add_argument("-n", type=int, default=40)
    p.add_argument("--max-segments", type=int, default=2, choices=[1, 2])
    p.add_argument("--min-segments", type=int, default=1, choices=[1, 2])
    p.add_argument("--max-duration", type=int, default=12,
                   help="find: clip lengths 4..max-duration s (12: the first session's set)")
    p.add_argument("--two-segment-share", type=float, default=None,
                   help="clips with 2..max-count segments (default: the first session's mix)")
    p.add_argument("--max-count", type=int, default=2)
    p.add_argument("--wide", action="store_true", help="16:9 files (320 x 180), not 64 x 64")
    p.add_argument("--absent", action="store_true",
                   help="find: also ask for a colour that is not in the clip and compare the "
                        "app's scores (present should score higher)")
    p.add_argument("--threads", type=int, default=1)
    args = p.parse_args(argv)

    import torch

    from marlin_desk.core.parsing import parse_caption
    from marlin_desk.core.prompts import find_prompt
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
                         args.two_segment_share, args.max_duration, args.max_count)
            duration = ex.frames.window_end
            path = Path(tmp) / f"clip{i}.mp4"
            write_clip(path, ex.segments, duration, (320, 180) if args.wide else (64, 64))
            session = VideoSession(engine, str(path), budget=budget)
            window = Window(0, 0.0, duration)
            answer = session.ask(window, ex.prompt, 16 if args.task != "caption" else 96)
            row = {"seed": EVAL_BASE + i, "duration": duration, "truth": ex.target,
                   "answer": answer.text,
                   "segments": ex.segments}
            if args.task == "probe":
                row["correct"] = answer.text.strip().lower() == ex.target
            elif args.task == "caption":
                parsed = parse_caption(answer.text, duration)
                row.update(format_ok=parsed.format_ok, **caption_match(parsed.events,
                                                                       ex.segments))
            else:
                parsed = parse_find(answer.text, duration)
                span = (parsed.span.start, parsed.span.end) if parsed.span else None
                row.update(kind=clip_kind(ex), format_ok=parsed.format_ok,
                           iou=iou(span, ex.target) if span else 0.0,
                           iou_whole=iou((0.0, duration), ex.target),
                           iou_first=iou(ex.segments[0][:2], ex.target), score=answer.score)
                if args.absent:
                    other = next(c for c in FIND_COLOURS
                                 if c not in {seg[2] for seg in ex.segments})
                    row["absent_score"] = session.ask(
                        window, find_prompt(f"the {other} screen"), 16).score
            rows.append(row)
    summary: dict[str, object] = {"model": str(folder), "task": args.task, "n": args.n}
    mean = lambda key: sum(r[key] for r in rows) / len(rows)  # noqa: E731
    if args.task == "probe":
        summary["accuracy"] = sum(r["correct"] for r in rows) / len(rows)
        summary["chance"] = 1 / 8
        summary["answers"] = dict(Counter(r["answer"] for r in rows))
        confusion = Counter((r["truth"], r["answer"]) for r in rows if not r["correct"])
        summary["errors"] = {f"{t}->{a}": c for (t, a), c in confusion.items()}
    elif args.task == "caption":
        summary.update(format_ok=mean("format_ok"), count_ok=mean("count_ok"),
                       colours_ok=mean("colours_ok"), boundaries_within_half_second=mean(
                           "within_0.5"), mean_max_boundary_error=mean("max_boundary_error"),
                       by_segments={k: {"n": len(sel), "within_0.5": sum(
                           r["within_0.5"] for r in sel) / len(sel)}
                                    for k in range(4)
                                    if (sel := [r for r in rows if len(r["segments"]) == k])})
    else:
        summary.update(mean_iou=mean("iou"), format_ok=mean("format_ok"),
                       baseline_whole_video=mean("iou_whole"),
                       baseline_first_segment=mean("iou_first"),
                       distinct_answers=len({r["answer"] for r in rows}),
                       by_kind={k: {"n": len(sel), "mean_iou": sum(r["iou"] for r in sel)
                                    / len(sel), "iou_ge_0.5": sum(r["iou"] >= 0.5 for r in sel)}
                                for k in ("1seg", "2seg_first", "2seg_second", "3seg_first",
                                          "3seg_second")
                                if (sel := [r for r in rows if r["kind"] == k])},
                       top_answers=Counter(r["answer"] for r in rows).most_common(5))
        if args.absent:
            summary.update(present_scores_higher=sum(r["score"] > r["absent_score"]
                                                     for r in rows) / len(rows),
                           mean_present_score=mean("score"),
                           mean_absent_score=mean("absent_score"))
    suffix = "" if args.max_duration == 12 else f"_d{args.max_duration}"
    suffix += "_wide" if args.wide else ""
    (folder / f"eval_{args.task}{suffix}.json").write_text(json.dumps(
        {"summary": summary, "rows": rows}, indent=1, default=str))
    print(json.dumps(summary, indent=1, default=str))


if __name__ == "__main__":
    main()
