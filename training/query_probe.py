"""How far does the query's colour travel? Hidden states of one held-out clip asked about 4
colours: per layer input, the spread between the 4 queries (relative to the state's norm) at the
colour token, 1 and 5 tokens after it, and at the last prompt token and the first two answer
positions. 0.0000 at the answer positions means the answer cannot depend on the query.

    nice -n 15 .venv/bin/python -m training.query_probe /work/training-runs/mix70
"""

from __future__ import annotations

import argparse
from dataclasses import replace

import torch

from marlin_desk.core.prompts import find_prompt
from training.data import FIND_COLOURS, HELD_OUT_BASE, example
from training.train import collate, encode, lengthen_memory


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("model")
    p.add_argument("--long-memory", type=float, default=None,
                   help="apply train.lengthen_memory first (what a --long-memory run starts at)")
    args = p.parse_args(argv)
    from transformers import AutoProcessor, Qwen3_5ForConditionalGeneration

    torch.set_num_threads(1)
    model = Qwen3_5ForConditionalGeneration.from_pretrained(args.model).eval()
    processor = AutoProcessor.from_pretrained(args.model)
    if args.long_memory is not None:
        print("long memory (layer, head, old A):", lengthen_memory(model, args.long_memory))
    ex = example("find", HELD_OUT_BASE + 700_001, 10, min_segments=2)
    exs = [replace(ex, prompt=find_prompt(f"the {c} screen")) for c in FIND_COLOURS]
    batch = collate([encode(processor, e) for e in exs], model.config.pad_token_id)
    with torch.no_grad():
        out = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"],
                    mm_token_type_ids=batch["mm_token_type_ids"],
                    pixel_values_videos=batch["pixel_values_videos"],
                    video_grid_thw=batch["video_grid_thw"], output_hidden_states=True,
                    use_cache=False)
    ids = batch["input_ids"]
    colour = int((ids[0] != ids[1]).nonzero()[0])
    answer = int(batch["answer"][0].nonzero()[0])
    positions = {"colour": colour, "colour+1": colour + 1, "colour+5": colour + 5,
                 "last prompt": answer - 1, "answer 1": answer, "answer 2": answer + 1}
    print(f"colour token at {colour}, first answer token at {answer}")
    print("layer input  " + "  ".join(f"{k:>11}" for k in positions))
    for layer, h in enumerate(out.hidden_states):
        cells = []
        for pos in positions.values():
            v = h[:, pos]
            spread = (v - v.mean(0)).norm(dim=-1).mean() / v.norm(dim=-1).mean()
            cells.append(f"{float(spread):11.4f}")
        print(f"{layer:11d}  " + "  ".join(cells))


if __name__ == "__main__":
    main()
