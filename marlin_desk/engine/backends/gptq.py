"""GPTQ 4-bit through gptqmodel."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from marlin_desk.engine.backends.checkpoints import quant_method
from marlin_desk.engine.backends.interface import BackendFailed
from marlin_desk.engine.backends.memory import VRAM_NEED_GIB, vram_check
from marlin_desk.engine.hardware import Hardware


@dataclass(frozen=True)
class GptqBackend:
    """GPTQ 4-bit through gptqmodel: smallest and fastest on CUDA. On CPU it runs only when
    asked (its torch kernels generate slowly; its fast CPU kernel compiles for ~2 min)."""

    name: str = "gptq"

    def can_run(self, hw: Hardware, device: str, source: str) -> tuple[bool, str]:
        if not hw.has("gptqmodel"):
            return False, "gptqmodel is not installed (pip install 'marlin-desk[quant]')"
        if device == "mps":
            return False, "gptqmodel has no Apple MPS kernels"
        path = Path(source)
        if path.is_dir() and quant_method(path) != "gptq":
            return False, f"{path} is not a GPTQ checkpoint (quantization_config says otherwise)"
        if device == "cuda":
            return vram_check("GPTQ 4-bit", hw, VRAM_NEED_GIB["gptq"])
        return True, ""

    def dtype(self, hw: Hardware, device: str) -> str:
        return "float16" if device == "cuda" and not hw.bf16_on_cuda else "bfloat16"

    def precision(self, hw: Hardware, device: str) -> str:
        return "gptq-int4"

    def load(self, folder: Path, device: str, hw: Hardware) -> tuple[Any, Any]:
        if quant_method(folder) != "gptq":
            raise BackendFailed(f"{folder} is not a GPTQ checkpoint")
        # gptqmodel's loader fails on 2 cores with its default worker count (docs/toolchain.md)
        os.environ.setdefault("GPTQMODEL_CPU_WORKERS", "2")
        import torch
        from gptqmodel import BACKEND, GPTQModel
        from transformers import AutoProcessor

        kernel = BACKEND.TORCH if device == "cpu" else BACKEND.AUTO  # no 2-minute JIT on CPU
        wrapped = GPTQModel.load(str(folder), device=device, backend=kernel,
                                 dtype=getattr(torch, self.dtype(hw, device)))
        net = wrapped.model
        # gptqmodel rewrites the generation config to sampling without cache: undo both
        net.generation_config.do_sample = False
        net.generation_config.use_cache = True
        for key in ("temperature", "top_p", "top_k"):
            if hasattr(net.generation_config, key):
                setattr(net.generation_config, key, None)
        return net.eval(), AutoProcessor.from_pretrained(folder)
