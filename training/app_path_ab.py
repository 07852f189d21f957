"""Where does the app path lose accuracy? Greedy answers on evaluate.py's 50 held-out clips with
four frame sets: the training renderer's in-memory frames (`mem`), the app's frames sampled from
the H.264 file (`app`, what evaluate.py scores), and the two swaps (in-memory pixels with the
app's timestamps, app pixels with the training timestamps). Mean IoU per clip kind.

    nice -n 19 .venv/bin/python -m training.app_path_ab /work/training-runs/paired_slow4_more
"""

from __future__ import annotations

import json
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

import torch

from marlin_desk.core.budget import VideoBudget
from marlin_desk.core.parsing import parse_find
from marlin_desk.media.sampling import sample_window
from training.data import clip_kind, example
from training.evaluate import EVAL_BASE, iou, write_clip
from training.train import encode


def main() -> None:
    from transformers import AutoProcessor, Qwen3_5ForConditionalGeneration

    torch.set_num_threads(1)
    m = sys.argv[1]
    model = Qwen3_5ForConditionalGeneration.from_pretrained(m).eval()
    proc = AutoProcessor.from_pretrained(m)
    budget = VideoBudget(**json.loads((Path(m) / "budget.json").read_text()))
    res = {}
    tmp = tempfile.mkdtemp()  # small files, left in /tmp
    for i in range(50):
        ex = example("find", EVAL_BASE + i, None, 2, 1, max_duration=12)
        p = Path(tmp) / f"c{i}.mp4"
        write_clip(p, ex.segments, ex.frames.window_end)
        app = sample_window(str(p), 0.0, ex.frames.window_end, budget)
        variants = {"mem": ex.frames, "app": app}
        if len(app.frames) == len(ex.frames.frames):
            variants["mem_pixels_app_times"] = replace(app, frames=ex.frames.frames)
            variants["app_pixels_mem_times"] = replace(ex.frames, frames=app.frames)
        for name, fr in variants.items():
            e = encode(proc, replace(ex, frames=fr))
            n = len(e["ids"]) - len(e["answer_ids"])
            with torch.no_grad():
                out = model.generate(
                    input_ids=e["ids"][None, :n], attention_mask=torch.ones(1, n, dtype=torch.long),
                    mm_token_type_ids=e["mm"][None, :n], pixel_values_videos=e["pixels"],
                    video_grid_thw=e["grid"], max_new_tokens=16, do_sample=False)
            text = proc.tokenizer.decode(out[0, n:], skip_special_tokens=True)
            pf = parse_find(text, ex.frames.window_end)
            res.setdefault(name, {}).setdefault(clip_kind(ex), []).append(
                iou((pf.span.start, pf.span.end), ex.target) if pf.span else 0.0)
    for name, d in res.items():
        print(name, {k: (len(v), round(sum(v) / len(v), 3)) for k, v in d.items()})


if __name__ == "__main__":
    main()
