"""SDNQ int8 through the `sdnq` package."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from marlin_desk.engine.backends.checkpoints import quant_method
from marlin_desk.engine.backends.interface import BackendFailed
from marlin_desk.engine.backends.memory import VRAM_NEED_GIB, vram_check
from marlin_desk.engine.hardware import Hardware
from marlin_desk.engine.loader import load_native


@dataclass(frozen=True)
class SdnqBackend:
    """SDNQ int8 through the `sdnq` package: importing it registers its quantizer with
    transformers, and the pre-quantized folder then loads with the native class."""

    name: str = "sdnq"

    def can_run(self, hw: Hardware, device: str, source: str) -> tuple[bool, str]:
        if not hw.has("sdnq"):
            return False, "sdnq is not installed (pip install sdnq)"
        path = Path(source)
        if path.is_dir() and quant_method(path) != "sdnq":
            return False, f"{path} is not an SDNQ checkpoint"
        if device == "cuda":
            return vram_check("SDNQ int8", hw, VRAM_NEED_GIB["sdnq"])
        return True, ""

    def dtype(self, hw: Hardware, device: str) -> str:
        if device == "cuda":
            return "bfloat16" if hw.bf16_on_cuda else "float16"
        return "float32" if device == "cpu" else "float16"

    def precision(self, hw: Hardware, device: str) -> str:
        return "sdnq-int8"

    def load(self, folder: Path, device: str, hw: Hardware) -> tuple[Any, Any]:
        import sdnq  # noqa: F401 - registers the "sdnq" quant method with transformers

        if quant_method(folder) != "sdnq":
            raise BackendFailed(f"{folder} is not an SDNQ checkpoint")
        return load_native(folder, device, self.dtype(hw, device), device_map={"": device})
