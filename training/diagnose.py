"""Does a model's answer depend on the video? Per-part answer loss on held-out clips with the
real pixels, with zeroed pixels and with another clip's pixels (same length: a shuffle within
the batch). For find, the parts are the start's and the end's whole seconds (the only tokens
that carry the answer: the decimals are always 0 on this grid) and the rest (format). For find,
also with the query's colour swapped (`query_swapped`): the real control for binding the query
to a segment. A model that ignores the query scores the same as with the real query.

    nice -n 15 .venv/bin/python -m training.diagnose /work/training-runs/find1 --task find
"""

from __future__ import annotations

import argparse
import json
import re
from dataclasses import replace
from pathlib import Path

import torch

from marlin_desk.core.prompts import find_prompt
from training.data import HELD_OUT_BASE, example, other_colour
from training.train import collate, encode

PARTS = ("start", "end", "colour", "format")


def part_labels(tokenizer, answer: str) -> list[str]:
    """The part each answer token belongs to, by character offsets ('<|im_end|>' is format)."""
    enc = tokenizer(answer, add_special_tokens=False, return_offsets_mapping=True)
    m = re.fullmatch(r"From (\d+)\.\d to (\d+)\.\d\.", answer)
    labels = []
    for a, b in enc["offset_mapping"]:
        if m and a < m.end(1) and b > m.start(1):
            labels.append("start")
        elif m and a < m.end(2) and b > m.start(2):
            labels.append("end")
        else:
            labels.append("colour" if not m else "format")
    return [*labels, "format"]  # <|im_end|>


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("model")
    p.add_argument("--task", choices=["probe", "find"], default="find")
    p.add_argument("--max-segments", type=int, default=2, choices=[1, 2])
    p.add_argument("--min-segments", type=int, default=1, choices=[1, 2])
    p.add_argument("-n", type=int, default=48, help="clips (in batches of 8 of one length)")
    args = p.parse_args(argv)
    from transformers import AutoProcessor, Qwen3_5ForConditionalGeneration

    torch.set_num_threads(1)
    folder = Path(args.model)
    model = Qwen3_5ForConditionalGeneration.from_pretrained(folder, dtype=torch.float32).eval()
    processor = AutoProcessor.from_pretrained(folder)
    tok = processor.tokenizer
    modes = ("real", "zero", "shuffled", "query_swapped")
    sums = {(mode, part): [0.0, 0] for mode in modes for part in PARTS}
    base = HELD_OUT_BASE + 700_000
    for b in range(args.n // 8):
        duration = 4 + b % 9 if args.task == "find" else None
        exs = [example(args.task, base + 8 * b + i, duration, args.max_segments,
                       args.min_segments)
               for i in range(8)]
        items = [encode(processor, ex) for ex in exs]
        labels = [part_labels(tok, ex.answer) for ex in exs]
        batch = collate(items, model.config.pad_token_id)
        per = batch["pixel_values_videos"].shape[0] // 8
        shuffled = torch.roll(batch["pixel_values_videos"].view(8, per, -1), 1, 0).reshape(
            batch["pixel_values_videos"].shape)
        runs = [("real", batch, batch["pixel_values_videos"]),
                ("zero", batch, torch.zeros_like(batch["pixel_values_videos"])),
                ("shuffled", batch, shuffled)]
        if args.task == "find":  # the same clip and answer, but another colour asked for
            swapped = collate([encode(processor, replace(ex, prompt=find_prompt(
                f"the {other_colour(ex)} screen"))) for ex in exs], model.config.pad_token_id)
            runs.append(("query_swapped", swapped, swapped["pixel_values_videos"]))
        for mode, batch, pixels in runs:
            with torch.no_grad():
                out = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"],
                            mm_token_type_ids=batch["mm_token_type_ids"],
                            pixel_values_videos=pixels, video_grid_thw=batch["video_grid_thw"],
                            use_cache=False)
            logp = torch.log_softmax(out.logits[:, :-1], -1)
            for i in range(8):
                where = batch["answer"][i, 1:].nonzero().flatten()
                targets = batch["input_ids"][i, 1:][where]
                losses = -logp[i, where, targets]
                for loss, part in zip(losses.tolist(), labels[i], strict=True):
                    sums[(mode, part)][0] += loss
                    sums[(mode, part)][1] += 1
    report = {f"{mode}/{part}": round(s / n, 4) for (mode, part), (s, n) in sums.items() if n}
    suffix = "" if (args.max_segments, args.min_segments) == (2, 1) else \
        f"_seg{args.min_segments}-{args.max_segments}"
    (folder / f"diagnose_{args.task}{suffix}.json").write_text(json.dumps(report, indent=1))
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
