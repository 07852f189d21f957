"""Train the tiny Marlin-format model on synthetic clips, through the app's own input path.

Every example goes through `engine.inputs.video_prefix` (the frames -> prompt prefix with the
`<t seconds>` timestamps and the pixel tensors) and `engine.inputs.suffix_ids` (the prompt and
the assistant opener), exactly what `VideoSession.ask` feeds the model; the answer tokens and
`<|im_end|>` follow, and only they carry loss. Deterministic for a given --seed and --steps.

    nice -n 15 .venv/bin/python -m training.train --task probe --steps 600 --out runs/probe
"""

from __future__ import annotations

import argparse
import csv
import json
import random
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import torch

from marlin_desk.core.prompts import find_prompt
from marlin_desk.dev.tiny_model import build_processor, build_tokenizer, tiny_config
from marlin_desk.engine.inputs import suffix_ids, video_prefix
from training import data as training_data
from training.data import (
    HELD_OUT_BASE,
    PROBE_COLOURS,
    TINY_BUDGET,
    Example,
    clip_kind,
    example,
    fixed_layout_example,
    other_colour,
)


def encode(processor: Any, ex: Example) -> dict[str, Any]:
    """One example as the app would send it, plus the answer; `weights` marks loss targets."""
    tok = processor.tokenizer
    prefix = video_prefix(processor, ex.frames)
    suffix = suffix_ids(processor, ex.prompt)[0]
    answer = tok(ex.answer + "<|im_end|>", add_special_tokens=False,
                 return_tensors="pt")["input_ids"][0]
    ids = torch.cat([prefix.inputs["input_ids"][0], suffix, answer])
    mm = torch.cat([prefix.inputs["mm_token_type_ids"][0],
                    torch.zeros(len(suffix) + len(answer), dtype=torch.long)])
    is_answer = torch.zeros(len(ids), dtype=torch.bool)
    is_answer[len(ids) - len(answer):] = True
    return {"ids": ids, "mm": mm, "answer": is_answer, "answer_ids": answer,
            "pixels": prefix.inputs["pixel_values_videos"],
            "grid": prefix.inputs["video_grid_thw"]}


def collate(items: list[dict[str, Any]], pad_id: int) -> dict[str, Any]:
    """Right-padded batch (causal model: padding after the text changes nothing before it)."""
    n = max(len(it["ids"]) for it in items)
    ids = torch.full((len(items), n), pad_id, dtype=torch.long)
    mask = torch.zeros((len(items), n), dtype=torch.long)
    mm = torch.zeros((len(items), n), dtype=torch.long)
    answer = torch.zeros((len(items), n), dtype=torch.bool)
    for i, it in enumerate(items):
        k = len(it["ids"])
        ids[i, :k], mask[i, :k], mm[i, :k], answer[i, :k] = it["ids"], 1, it["mm"], it["answer"]
    return {"input_ids": ids, "attention_mask": mask, "mm_token_type_ids": mm,
            "pixel_values_videos": torch.cat([it["pixels"] for it in items]),
            "video_grid_thw": torch.cat([it["grid"] for it in items]), "answer": answer}


def batch_for(processor: Any, task: str, seeds: list[int], pad_id: int,
              max_segments: int = 2, min_segments: int = 1,
              two_segment_share: float | None = None, max_duration: int = 12,
              caption_share: float = 0.0, max_count: int = 2, paired: bool = False,
              empty_share: float = 0.0, absent_share: float = 0.0, keep_pairs: bool = False,
              time_probe_share: float = 0.0, presence_share: float = 0.0,
              min_duration: int = 4) -> dict[str, Any]:
    # One clip length per batch (find/caption: 4-max_duration s), so only the answers differ.
    duration = min_duration + seeds[0] % (max_duration - min_duration + 1) \
        if task in ("find", "caption") else None

    def task_of(seed: int) -> str:  # find runs may mix in caption examples
        if task == "find" and caption_share and random.Random(seed * 11 + 5).random() \
                < caption_share:
            return "caption"
        return task

    if task == "find-fixed":
        exs = [fixed_layout_example(s) for s in seeds]
    elif paired and task == "find":  # each clip twice, asked about two different segments
        exs = []
        for s in seeds[:len(seeds) // 2]:  # the first answer may be the clip's caption instead,
            # the second may ask for a colour that is not there
            absent = random.Random(s * 31 + 7).random() < absent_share
            clip_args = (s, duration, max_segments, min_segments, two_segment_share,
                         max_duration, max_count)
            if keep_pairs:  # both questions always; the caption or absent one comes on top
                exs += [example("find", *clip_args, ask, empty_share) for ask in (0, 1)]
                if task_of(s) == "caption":
                    exs.append(example("caption", *clip_args, None, empty_share))
                elif absent:
                    exs.append(example("find", *clip_args, 1, empty_share, True))
                if random.Random(s * 41 + 3).random() < time_probe_share:
                    exs.append(example("time-probe", *clip_args, None, empty_share))
                if random.Random(s * 47 + 1).random() < presence_share:
                    exs.append(example("presence", *clip_args, None, empty_share))
                continue
            exs.append(example(task_of(s), *clip_args, 0, empty_share))
            exs.append(example("find", *clip_args, 1, empty_share, absent))
    else:
        exs = [example(task_of(s), s, duration, max_segments, min_segments, two_segment_share,
                       max_duration, max_count, None, empty_share) for s in seeds]
    batch = collate([encode(processor, ex) for ex in exs], pad_id)
    if task in ("find", "caption", "find-fixed"):
        batch["kinds"] = [example_kind(ex) for ex in exs]
    return batch


def example_kind(ex: Example) -> str:
    """'caption', 'time-probe', or the find clip's kind (data.clip_kind)."""
    if ex.target == "caption":
        return "caption"
    if ex.target in ("yes", "no"):
        return "presence"
    return "time-probe" if ex.answer == ex.target else clip_kind(ex)


def token_losses(model: Any, batch: dict[str, Any], zero_pixels: bool = False
                 ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(per-target loss, target ids, logits at targets) for the answer tokens of a batch."""
    pixels = batch["pixel_values_videos"]
    out = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"],
                mm_token_type_ids=batch["mm_token_type_ids"],
                pixel_values_videos=torch.zeros_like(pixels) if zero_pixels else pixels,
                video_grid_thw=batch["video_grid_thw"], use_cache=False)
    logits = out.logits[:, :-1]
    targets = batch["input_ids"][:, 1:]
    where = batch["answer"][:, 1:]
    picked = logits[where]
    return torch.nn.functional.cross_entropy(picked, targets[where], reduction="none"), \
        targets[where], picked


def classify(tokenizer: Any) -> dict[int, str]:
    """Answer token -> kind: 'digit', 'colour' (any piece of a colour word), 'format'."""
    kinds: dict[int, str] = {}
    for name in PROBE_COLOURS:  # alone (a probe answer) and after a space (in a caption);
        # the pieces of a word split in several ('b', 'lu', 'e') would mark common letters
        for ids in tokenizer([name, f" {name}"], add_special_tokens=False)["input_ids"]:
            if len(ids) == 1:
                kinds[ids[0]] = "colour"
    for t in range(len(tokenizer)):
        if tokenizer.decode([t]).strip().isdigit():
            kinds[t] = "digit"
    return kinds


def vision_report(model: Any, processor: Any) -> dict[str, float]:
    """Do the merged vision embeddings differ by colour? Mean over each clip's video tokens,
    then the spread between colours vs the spread within a colour (other seeds/noise)."""
    from training.data import clip

    feats: dict[str, list[torch.Tensor]] = {}
    with torch.no_grad():
        for name in PROBE_COLOURS:
            for seed in range(3):
                prefix = video_prefix(processor, clip([(0.0, 4.0, name)], 4.0, HELD_OUT_BASE
                                                      + 7919 * seed))
                out = model.model.get_video_features(
                    pixel_values_videos=prefix.inputs["pixel_values_videos"],
                    video_grid_thw=prefix.inputs["video_grid_thw"])
                emb = out.pooler_output if hasattr(out, "pooler_output") else out
                emb = torch.cat(list(emb)) if isinstance(emb, tuple | list) else emb
                feats.setdefault(name, []).append(emb.mean(0))
    centres = torch.stack([torch.stack(v).mean(0) for v in feats.values()])
    within = torch.stack([torch.stack(v).std(0).norm() for v in feats.values()]).mean()
    between = torch.cdist(centres, centres)
    off = between[~torch.eye(len(centres), dtype=torch.bool)]
    text_norm = model.get_input_embeddings().weight.norm(dim=-1).mean()
    return {"vision_norm": float(centres.norm(dim=-1).mean()), "text_emb_norm": float(text_norm),
            "between_colour_dist_min": float(off.min()), "between_colour_dist_mean":
            float(off.mean()), "within_colour_spread": float(within)}


def add_full_attention_layer(model: Any, seed: int) -> Any:
    """The same model with one more full-attention text layer appended, initialised so that the
    model's function is unchanged (the new layer's attention output and MLP output projections
    are zero: the residual stream passes through). Its other weights are the model's own
    random init for a layer, seeded."""
    import copy

    from transformers import Qwen3_5ForConditionalGeneration

    config = copy.deepcopy(model.config)
    text = config.text_config
    text.layer_types = [*text.layer_types, "full_attention"]
    text.num_hidden_layers += 1
    torch.manual_seed(seed)
    bigger = Qwen3_5ForConditionalGeneration(config)
    missing, unexpected = bigger.load_state_dict(model.state_dict(), strict=False)
    new = f"model.language_model.layers.{text.num_hidden_layers - 1}."
    assert not unexpected and all(k.startswith(new) for k in missing), (missing, unexpected)
    layer = bigger.model.language_model.layers[-1]
    with torch.no_grad():
        layer.self_attn.o_proj.weight.zero_()
        layer.mlp.down_proj.weight.zero_()
    bigger.generation_config = model.generation_config
    return bigger


def lengthen_memory(model: Any, a_value: float) -> list[tuple[int, int, float]]:
    """Give one head of every Gated DeltaNet layer a long memory: set exp(A_log) of the head
    that already forgets slowest to `a_value`. The decay per token is
    exp(-A * softplus(a + dt_bias)) ~ exp(-1.31 A) at dt_bias 1, so the random init
    (A ~ U(0.01, 16), 4 heads) can leave no head that remembers the query colour the ~35 tokens
    to the answer (A >= 1 forgets 76 % per token). Returns (layer, head, old A)."""
    changed = []
    for i, layer in enumerate(model.model.language_model.layers):
        attn = getattr(layer, "linear_attn", None)
        if attn is None:
            continue
        with torch.no_grad():
            head = int(attn.A_log.argmin())
            changed.append((i, head, float(attn.A_log[head].exp())))
            attn.A_log[head] = float(torch.tensor(a_value).log())
    return changed


def repeat_layer_pattern(n_layers: int) -> dict[str, Any]:
    """Text-config override: `n_layers` layers in the real pattern (3 Gated DeltaNet layers then
    one full-attention layer, repeated, as Marlin-2B's 24 layers are)."""
    if n_layers <= 0 or n_layers % 4:
        raise ValueError(f"--text-layers must be a positive multiple of 4, not {n_layers}")
    return {"num_hidden_layers": n_layers,
            "layer_types": (["linear_attention"] * 3 + ["full_attention"]) * (n_layers // 4)}


def slow_all_heads(model: Any, lo: float, hi: float) -> list[list[float]]:
    """Re-draw A (exp(A_log)) of every Gated DeltaNet head from U(lo, hi): per-token decay
    ~exp(-1.31 A), so U(0.01, 0.5) keeps 52-99 % per token. Returns the new A per layer."""
    drawn = []
    for layer in model.model.language_model.layers:
        attn = getattr(layer, "linear_attn", None)
        if attn is None:
            continue
        with torch.no_grad():
            a = torch.empty_like(attn.A_log).uniform_(lo, hi)
            attn.A_log.copy_(a.log())
        drawn.append([round(float(x), 3) for x in a])
    return drawn


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--task", choices=["probe", "find", "caption", "find-fixed"],
                   default="probe", help="find-fixed: a diagnostic (data.fixed_layout_example)")
    p.add_argument("--steps", type=int, default=600)
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--lr", type=float, default=2e-3)
    p.add_argument("--warmup", type=int, default=50)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--digit-weight", type=float, default=1.0,
                   help="loss weight of digit tokens in the answer (others 1)")
    p.add_argument("--colour-weight", type=float, default=1.0,
                   help="loss weight of colour-word tokens in the answer (a caption names them)")
    p.add_argument("--max-segments", type=int, default=2, choices=[1, 2],
                   help="find: coloured segments per clip (1 = the easiest variant)")
    p.add_argument("--min-segments", type=int, default=1, choices=[1, 2],
                   help="find: 2 = every clip has two colours, so the query always matters")
    p.add_argument("--two-segment-share", type=float, default=None,
                   help="find: each clip has two segments with this probability, else one "
                        "(overrides --min/--max-segments; the held-out sets use 0.6)")
    p.add_argument("--max-duration", type=int, default=12,
                   help="find: clip lengths are 4..max-duration whole seconds")
    p.add_argument("--min-duration", type=int, default=4,
                   help="find: training clip lengths are min-duration..max-duration s")
    p.add_argument("--max-count", type=int, default=2,
                   help="find with --two-segment-share: multi-segment clips get 2..max-count "
                        "segments (as many as the clip length allows)")
    p.add_argument("--paired", action="store_true",
                   help="find: a batch is batch/2 clips, each asked about two of its segments "
                        "(the prior over which segment is asked cancels; only the query helps)")
    p.add_argument("--caption-share", type=float, default=0.0,
                   help="find: this share of the examples are caption examples instead")
    p.add_argument("--empty-share", type=float, default=0.0,
                   help="find/caption: this share of the clips is black only")
    p.add_argument("--absent-share", type=float, default=0.0,
                   help="find --paired: the second question asks for an absent colour with "
                        "this probability (answered with a random span: data.absent_answer)")
    p.add_argument("--time-probe-share", type=float, default=0.0,
                   help="find --paired --keep-pairs: this share of the clips also gets the "
                        "auxiliary question 'what colour from S to E' (data.time_probe_example)")
    p.add_argument("--presence-share", type=float, default=0.0,
                   help="find --paired --keep-pairs: this share of the clips also gets the "
                        "auxiliary yes/no question 'is there a C screen' (data.presence_example)")
    p.add_argument("--keep-pairs", action="store_true",
                   help="find --paired: every clip keeps both find questions; its caption or an "
                        "absent colour is a third example (else they replace one)")
    p.add_argument("--absent-grid", type=float, default=1.0, choices=[1.0, 0.5],
                   help="the grid of the random spans answering an absent colour "
                        "(data.ABSENT_GRID)")
    p.add_argument("--varied", action="store_true",
                   help="more query phrasings and 16:9 source files (data.VARIED_*)")
    p.add_argument("--wide", action="store_true",
                   help="16:9 source files too (data.VARIED_SOURCE_SIZES), one phrasing")
    p.add_argument("--log-every", type=int, default=25)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--save-every", type=int, default=0,
                   help="also save the model every N steps (a run stopped early keeps one)")
    p.add_argument("--init", help="start from this model folder instead of random weights")
    p.add_argument("--add-full-layer", action="store_true",
                   help="with --init: append one full-attention text layer (identity at start)")
    p.add_argument("--long-memory", type=float, default=None, metavar="A",
                   help="set A (exp(A_log)) of one head per linear-attention layer to this "
                        "value (e.g. 0.02: ~2.6 %% decay per token) before training")
    p.add_argument("--text-layers", type=int, default=None, metavar="N",
                   help="from scratch only: N text layers (a multiple of 4), the real pattern "
                        "[linear x3, full] repeated N/4 times (dev/tiny_model.py has 4)")
    p.add_argument("--long-memory-all", type=float, nargs=2, default=None, metavar=("LO", "HI"),
                   help="from scratch only: every linear-attention head gets A = exp(A_log) "
                        "from U(LO, HI) instead of U(0, 16) (e.g. 0.01 0.5: slow forgetting)")
    p.add_argument("--app-times", action="store_true",
                   help="frames at the times the app gives a 10 fps file (data.FRAME_TIMES), "
                        "not on the exact 0.5 s grid")
    p.add_argument("--out", required=True)
    args = p.parse_args(argv)
    # data-wide choices, set once before any example is made
    if args.app_times:
        training_data.FRAME_TIMES = "app"
    training_data.ABSENT_GRID = args.absent_grid
    if args.varied or args.wide:
        training_data.SOURCE_SIZES = training_data.VARIED_SOURCE_SIZES
    if args.varied:
        training_data.QUERY_STYLES = training_data.VARIED_QUERY_STYLES

    from transformers import (
        AutoProcessor,
        Qwen3_5Config,
        Qwen3_5ForConditionalGeneration,
        Qwen3_5Tokenizer,
    )

    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    torch.use_deterministic_algorithms(True, warn_only=True)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    if args.init:
        tokenizer = Qwen3_5Tokenizer.from_pretrained(args.init)
        tokenizer.save_pretrained(out)
        model = Qwen3_5ForConditionalGeneration.from_pretrained(args.init, dtype=torch.float32)
        if args.add_full_layer:
            model = add_full_attention_layer(model, args.seed)
        processor = AutoProcessor.from_pretrained(args.init)
        processor.save_pretrained(out)
    else:
        tokenizer = build_tokenizer(out)
        config_dict = tiny_config(tokenizer)
        if args.text_layers is not None:
            config_dict["text_config"].update(repeat_layer_pattern(args.text_layers))
        config = Qwen3_5Config(**config_dict)
        model = Qwen3_5ForConditionalGeneration(config)
        if args.long_memory_all is not None:
            print("long memory, all heads:", slow_all_heads(model, *args.long_memory_all),
                  flush=True)
        processor = build_processor(out, tokenizer, TINY_BUDGET)
    if args.long_memory is not None:
        print("long memory (layer, head, old A):", lengthen_memory(model, args.long_memory),
              flush=True)
    config = model.config
    model.generation_config.eos_token_id = [config.eos_token_id,
                                            config.text_config.eos_token_id]
    model.generation_config.pad_token_id = config.pad_token_id
    model.generation_config.do_sample = False
    (out / "budget.json").write_text(json.dumps(TINY_BUDGET.to_dict(), indent=1))
    (out / "train_args.json").write_text(json.dumps(vars(args), indent=1))
    pad_id = config.pad_token_id
    kinds = classify(tokenizer)
    n_params = sum(p.numel() for p in model.parameters())
    print(f"{n_params / 1e6:.2f} M parameters", flush=True)

    mixed = args.task == "find-fixed" or (args.task == "find"
                                           and args.two_segment_share is not None)
    swapped_helds = []
    extra_helds: dict[str, dict[str, Any]] = {}
    if mixed:  # 3 batches of 16 (different clip lengths), 60 % two-segment clips
        helds = [batch_for(processor, "find", [HELD_OUT_BASE + 16 * k + i for i in range(16)],
                           pad_id, two_segment_share=0.6, max_duration=args.max_duration)
                 for k in range(3)]
        for k in range(3):  # the same clips and answers, another colour asked for
            seeds = [HELD_OUT_BASE + 16 * k + i for i in range(16)]
            duration = 4 + seeds[0] % (args.max_duration - 3)
            exs = [example("find", s, duration, two_segment_share=0.6,
                           max_duration=args.max_duration) for s in seeds]
            swapped_helds.append(collate([encode(processor, replace(
                ex, prompt=find_prompt(f"the {other_colour(ex)} screen"))) for ex in exs],
                pad_id))
        if args.absent_share or args.caption_share:  # absent colours; captions of the clips
            seeds = [HELD_OUT_BASE + 100 + i for i in range(16)]
            duration = 4 + seeds[0] % (args.max_duration - 3)
            extra_helds = {
                "absent": collate([encode(processor, example(
                    "find", s, duration, two_segment_share=0.6, max_duration=args.max_duration,
                    absent=True)) for s in seeds], pad_id),
                "caption": collate([encode(processor, example(
                    "caption", s, duration, two_segment_share=0.6,
                    max_duration=args.max_duration)) for s in seeds], pad_id)}
            if args.presence_share:  # yes/no: ~0.69 is a coin toss
                extra_helds["presence"] = collate([encode(processor, example(
                    "presence", s, duration, two_segment_share=0.6,
                    max_duration=args.max_duration)) for s in seeds], pad_id)
    else:  # the first session's held-out batch (curves comparable with its runs)
        helds = [batch_for(processor, args.task, [HELD_OUT_BASE + i for i in range(32)], pad_id,
                           args.max_segments, args.min_segments)]

    def held_out(step: int) -> dict[str, Any]:
        model.eval()
        reals, blinds, tgts, clip_kinds = [], [], [], []
        with torch.no_grad():
            for held in helds:
                real, targets, _ = token_losses(model, held)
                blind, _, _ = token_losses(model, held, zero_pixels=True)
                reals.append(real)
                blinds.append(blind)
                tgts.append(targets)
                if "kinds" in held:  # the clip kind of each answer token
                    rows = held["answer"][:, 1:].nonzero()[:, 0]
                    clip_kinds += [held["kinds"][int(r)] for r in rows]
            swapped = [token_losses(model, h)[0] for h in swapped_helds]
            extra = {name: token_losses(model, h)[:2] for name, h in extra_helds.items()}
        model.train()
        real, blind, targets = torch.cat(reals), torch.cat(blinds), torch.cat(tgts)
        row: dict[str, Any] = {"step": step, "held_loss": float(real.mean()),
                               "held_loss_zero_pixels": float(blind.mean())}
        is_digit = torch.tensor([kinds.get(int(t), "format") == "digit" for t in targets])
        for kind in ("colour", "digit", "format"):
            sel = torch.tensor([kinds.get(int(t), "format") == kind for t in targets])
            if sel.any():
                row[f"held_{kind}"] = float(real[sel].mean())
                row[f"held_{kind}_zero_pixels"] = float(blind[sel].mean())
        if mixed:
            for ck in ("1seg", "2seg_first", "2seg_second"):
                sel = torch.tensor([k == ck for k in clip_kinds]) & is_digit
                if sel.any():
                    row[f"digit_{ck}"] = float(real[sel].mean())
            # Binding: the digit loss on two-segment clips with the real query vs the other
            # segment's colour asked. Equal values: the model ignores the query.
            multi = torch.tensor([k.startswith("2seg") for k in clip_kinds]) & is_digit
            row["digit_multi"] = float(real[multi].mean())
            row["digit_multi_query_swapped"] = float(torch.cat(swapped)[multi].mean())
        for name, (loss, targets) in extra.items():  # absent: high is right (unsure digits)
            digits = torch.tensor([kinds.get(int(t)) == "digit" for t in targets])
            if digits.any():
                row[f"{name}_digit"] = float(loss[digits].mean())
            colours = torch.tensor([kinds.get(int(t)) == "colour" for t in targets])
            if colours.any():  # a caption's colour words: ~1.39 is a guess among 4
                row[f"{name}_colour"] = float(loss[colours].mean())
            row[f"{name}_loss"] = float(loss.mean())
        return row

    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min(1.0, (s + 1) / args.warmup) * max(0.1, 1 - s / max(1, args.steps)))
    log_path = out / "curve.csv"
    fields = ["step", "seconds", "train_loss", "held_loss", "held_loss_zero_pixels",
              "held_colour", "held_colour_zero_pixels", "held_digit", "held_digit_zero_pixels",
              "held_format", "held_format_zero_pixels", "digit_1seg", "digit_2seg_first",
              "digit_2seg_second", "digit_multi", "digit_multi_query_swapped", "absent_digit",
              "absent_loss", "caption_digit", "caption_loss", "caption_colour",
              "presence_loss"]
    started = time.perf_counter()
    vision_before = vision_report(model, processor)
    print("vision before:", vision_before, flush=True)
    with log_path.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=fields, restval="")
        writer.writeheader()
        writer.writerow({**held_out(0), "seconds": 0.0})
        model.train()
        running = []
        for step in range(1, args.steps + 1):
            seeds = [(args.seed * 1_000_003 + step * 1009 + i) % HELD_OUT_BASE
                     for i in range(args.batch)]
            batch = batch_for(processor, args.task, seeds, pad_id, args.max_segments,
                              args.min_segments, args.two_segment_share, args.max_duration,
                              args.caption_share, args.max_count, args.paired,
                              args.empty_share, args.absent_share, args.keep_pairs,
                              args.time_probe_share, args.presence_share, args.min_duration)
            losses, targets, _ = token_losses(model, batch)
            token_weight = {"digit": args.digit_weight, "colour": args.colour_weight}
            weights = torch.tensor([token_weight.get(kinds.get(int(t), ""), 1.0)
                                    for t in targets])
            loss = (losses * weights).sum() / weights.sum()
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            sched.step()
            running.append(float(losses.mean()))
            if step % args.log_every == 0 or step == args.steps:
                row = {**held_out(step), "seconds": round(time.perf_counter() - started, 1),
                       "train_loss": sum(running) / len(running)}
                running = []
                writer.writerow(row)
                fh.flush()
                print({k: round(v, 4) if isinstance(v, float) else v for k, v in row.items()},
                      flush=True)
            if args.save_every and step % args.save_every == 0 and step < args.steps:
                model.save_pretrained(out, safe_serialization=True)
                print(f"saved {out} at step {step}", flush=True)
    model.eval()
    vision_after = vision_report(model, processor)
    print("vision after:", vision_after, flush=True)
    (out / "vision_report.json").write_text(json.dumps(
        {"before": vision_before, "after": vision_after,
         "train_seconds": round(time.perf_counter() - started, 1)}, indent=1))
    model.save_pretrained(out, safe_serialization=True)
    print(f"saved {out} after {time.perf_counter() - started:.0f} s", flush=True)


if __name__ == "__main__":
    main()
