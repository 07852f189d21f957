"""How much GPU memory and RAM each backend needs, and the checks against a machine's facts."""

from __future__ import annotations

from pathlib import Path

from marlin_desk.engine.hardware import GIB, Hardware

# Peak GPU memory for a 120 s window, in GiB, with a margin. Published figures for a consumer
# GPU: GPTQ 4.67 GB, bnb4 4.20 GB, BF16 about 8 GB; bench/gpu_check.py measures ours.
VRAM_NEED_GIB = {"gptq": 5.0, "bnb4": 4.6, "bf16": 8.5, "fp32": 16.0, "sdnq": 6.0}
BF16_WEIGHTS_GIB = 4.43  # resident BF16 weights of Marlin-2B
RAM_MARGIN_GIB = 2.5  # activations of a 120 s window on CPU, the processor, Python


def weights_gib(folder: Path) -> float:
    return sum(f.stat().st_size for f in folder.glob("*.safetensors")) / GIB


def size_gib(source: str, bf16_multiple: float) -> float:
    """Estimated resident weights: a local folder's files, else the catalogue's BF16 size."""
    path = Path(source)
    if path.is_dir():
        return weights_gib(path) * bf16_multiple
    return BF16_WEIGHTS_GIB * bf16_multiple


def vram_check(name: str, hw: Hardware, need_gib: float) -> tuple[bool, str]:
    free = hw.vram_free or hw.vram_total
    if free and free < need_gib * GIB:
        return False, (f"{free / GIB:.1f} GiB of GPU memory free, {name} needs about "
                       f"{need_gib:.1f} GiB for a 120 s window")
    return True, ""


def ram_check(name: str, hw: Hardware, need_gib: float) -> tuple[bool, str]:
    have = hw.ram_available or hw.ram_total
    if have and have < need_gib * GIB:
        return False, (f"{have / GIB:.1f} GiB of RAM available, {name} on CPU needs about "
                       f"{need_gib:.1f} GiB")
    return True, ""
