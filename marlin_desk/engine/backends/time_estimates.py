"""Time estimates for CPU runs: static (from the parameter count) before anything runs, then
measured on the first window."""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field

from marlin_desk.engine.loader import LoadedModel

CPU_GFLOPS_PER_CORE = 25.0  # sustained fp32 matmul on a recent x86 core (AVX2 FMA), roughly
CPU_MEMORY_GBPS = 12.0  # what one decode step can stream from RAM on a desktop, roughly


@dataclass
class Estimate:
    """Seconds for a job, and how the figure was obtained (static, or measured)."""

    seconds: float
    basis: str
    per_window: float = 0.0
    detail: dict[str, float] = field(default_factory=dict)

    def message(self) -> str:
        minutes = self.seconds / 60
        span = f"{minutes:.0f} min" if minutes >= 1.5 else f"{self.seconds:.0f} s"
        return f"estimated time: about {span} ({self.basis})"


def parameter_count(engine: LoadedModel) -> int:
    return int(sum(p.numel() for p in engine.model.parameters()))


def static_estimate(params: int, bytes_per_param: float, windows: int, prompt_tokens: int,
                    new_tokens: int, cores: int) -> Estimate:
    """Before anything runs: prefill costs 2 FLOP per parameter per prompt token (compute
    bound); each decoded token reads every weight once (memory bound)."""
    prefill = 2.0 * params * prompt_tokens / (CPU_GFLOPS_PER_CORE * 1e9 * max(1, cores))
    decode = new_tokens * params * bytes_per_param / (CPU_MEMORY_GBPS * 1e9)
    per_window = prefill + decode
    return Estimate(per_window * windows, "static, from the parameter count", per_window,
                    {"prefill_s": prefill, "decode_s": decode})


def measured_estimate(first_window_seconds: float, windows_left: int) -> Estimate:
    """After the first window: its own time times the windows left (the best predictor)."""
    return Estimate(first_window_seconds * windows_left, "measured on the first window",
                    first_window_seconds)


def estimate_for(engine: LoadedModel, windows: int, prompt_tokens: int = 23_600,
                 new_tokens: int = 512, cores: int | None = None) -> Estimate:
    """A static estimate for `windows` caption windows on this engine (CPU speeds assumed)."""
    bytes_per = {"float32": 4.0, "bfloat16": 2.0, "float16": 2.0}.get(engine.dtype, 2.0)
    if engine.precision in ("gptq-int4", "nf4"):
        bytes_per = 0.6
    cores = cores or (len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
                      else os.cpu_count() or 1)
    return static_estimate(parameter_count(engine), bytes_per, windows, prompt_tokens,
                           new_tokens, cores)


def prompt_tokens_for(window_seconds: float, tokens_per_second: float = 196.0) -> int:
    """Language tokens of a window at the training budget (98 per frame, 2 frames a second)."""
    return int(math.ceil(window_seconds * tokens_per_second)) + 80
