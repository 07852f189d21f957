"""bitsandbytes NF4, quantized at load from the BF16 original."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from marlin_desk.engine.backends.checkpoints import folder_kind, quant_method
from marlin_desk.engine.backends.memory import (
    RAM_MARGIN_GIB,
    VRAM_NEED_GIB,
    ram_check,
    size_gib,
    vram_check,
)
from marlin_desk.engine.hardware import Hardware
from marlin_desk.engine.loader import load_native

# Modules bitsandbytes must leave in 16/32-bit: the vision tower (quality, and small), lm_head,
# and the DeltaNet in_proj_a/in_proj_b whose 16-wide outputs the 4-bit CPU kernel cannot take
# (it needs multiples of 32). "model.visual" is matched from the start of the name: transformers
# 5.24 does not match a bare "visual" inside "model.visual.blocks...", so it would be quantized.
BNB_SKIP = ["model.visual", "lm_head", "in_proj_a", "in_proj_b"]


@dataclass(frozen=True)
class Bnb4Backend:
    """bitsandbytes NF4, quantized at load from the BF16 original."""

    name: str = "bnb4"

    def can_run(self, hw: Hardware, device: str, source: str) -> tuple[bool, str]:
        if not hw.has("bitsandbytes"):
            return False, "bitsandbytes is not installed (pip install 'marlin-desk[quant]')"
        if device == "mps":
            return False, "bitsandbytes 4-bit has no Apple MPS support"
        path = Path(source)
        if path.is_dir() and folder_kind(path) != "bf16":
            return False, f"{path} is already {quant_method(path)}-quantized"
        if device == "cuda":
            return vram_check("NF4", hw, VRAM_NEED_GIB["bnb4"])
        # resident: 4-bit layers plus the 16-bit vision tower, embeddings and lm_head
        return ram_check("NF4", hw, size_gib(source, 0.5) + RAM_MARGIN_GIB)

    def dtype(self, hw: Hardware, device: str) -> str:
        if device == "cuda":
            return "bfloat16" if hw.bf16_on_cuda else "float16"
        return "float32"

    def precision(self, hw: Hardware, device: str) -> str:
        return "nf4"

    def load(self, folder: Path, device: str, hw: Hardware) -> tuple[Any, Any]:
        import torch
        from transformers import BitsAndBytesConfig

        dtype = self.dtype(hw, device)
        config = BitsAndBytesConfig(
            load_in_4bit=True, bnb_4bit_quant_type="nf4", bnb_4bit_use_double_quant=True,
            bnb_4bit_compute_dtype=getattr(torch, dtype), llm_int8_skip_modules=BNB_SKIP)
        if quant_method(folder) == "bitsandbytes":  # already quantized: its own config rules
            return load_native(folder, device, dtype, device_map={"": device})
        return load_native(folder, device, dtype, quantization_config=config)
