"""The unquantized BF16 checkpoint as it is, through transformers' native class: BF16 (FP16
where the GPU lacks BF16, and on MPS) or FP32."""

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


@dataclass(frozen=True)
class PlainBackend:
    """The BF16 weights as they are: BF16 (FP16 where the GPU lacks BF16, and on MPS) or FP32."""

    name: str = "bf16"

    def can_run(self, hw: Hardware, device: str, source: str) -> tuple[bool, str]:
        path = Path(source)
        if path.is_dir() and folder_kind(path) != "bf16":
            return False, f"{path} is {quant_method(path)}-quantized: it needs its own backend"
        if device == "cuda":
            need = VRAM_NEED_GIB[self.name] if not path.is_dir() else \
                size_gib(source, 2.0 if self.name == "fp32" else 1.0) + 1.0
            return vram_check(self.name.upper(), hw, need)
        if device == "mps":
            return True, ""
        multiple = 2.0 if self.name == "fp32" else 1.0
        return ram_check(self.name.upper(), hw, size_gib(source, multiple) + RAM_MARGIN_GIB)

    def dtype(self, hw: Hardware, device: str) -> str:
        if self.name == "fp32":
            return "float32"
        if device == "mps" or (device == "cuda" and not hw.bf16_on_cuda):
            return "float16"
        return "bfloat16"

    def precision(self, hw: Hardware, device: str) -> str:
        return self.dtype(hw, device)

    def load(self, folder: Path, device: str, hw: Hardware) -> tuple[Any, Any]:
        return load_native(folder, device, self.dtype(hw, device))
