"""Ways of running Marlin-2B behind one interface, and the chain that picks one.

Each backend says whether it can run on a machine (`can_run(hw, device)` with a reason) and
loads a checkpoint into a `LoadedModel`. `load_best` builds an ordered plan from the machine's
facts (a `Hardware` value, supplied so any machine can be described in tests), tries each step,
checks a quantized model's first inference, and records every skipped or failed step with its
reason in `LoadedModel.fallbacks` so the user sees why the app runs the way it does.

One module per concern: `interface` (the Backend protocol, Step, BackendFailed), `checkpoints`
(how a folder is quantized, which checkpoint a backend loads), `memory` (GPU memory and RAM
needs), one module per backend (`gptq`, `bnb4`, `sdnq`, `plain` for BF16/FP16/FP32), `self_check`
(the first-inference check), `chain` (the plan, its order and `load_best`) and `time_estimates`
(CPU time estimates). The names below are the ones the rest of the app imports.
"""

from marlin_desk.engine.backends.bnb4 import BNB_SKIP, Bnb4Backend
from marlin_desk.engine.backends.chain import (
    BACKEND_CHOICES,
    BACKENDS,
    DEVICE_CHOICES,
    QUANTIZED,
    kernel_notes,
    load_best,
    plan,
    planned_precision,
)
from marlin_desk.engine.backends.checkpoints import KIND, folder_kind, quant_method, sources_for
from marlin_desk.engine.backends.gptq import GptqBackend
from marlin_desk.engine.backends.interface import Backend, BackendFailed, Step
from marlin_desk.engine.backends.memory import BF16_WEIGHTS_GIB, RAM_MARGIN_GIB, VRAM_NEED_GIB
from marlin_desk.engine.backends.plain import PlainBackend
from marlin_desk.engine.backends.sdnq import SdnqBackend
from marlin_desk.engine.backends.self_check import check_first_inference
from marlin_desk.engine.backends.time_estimates import (
    CPU_GFLOPS_PER_CORE,
    CPU_MEMORY_GBPS,
    Estimate,
    estimate_for,
    measured_estimate,
    parameter_count,
    prompt_tokens_for,
    static_estimate,
)

__all__ = [
    "BACKENDS", "BACKEND_CHOICES", "BF16_WEIGHTS_GIB", "BNB_SKIP", "CPU_GFLOPS_PER_CORE",
    "CPU_MEMORY_GBPS", "DEVICE_CHOICES", "KIND", "QUANTIZED", "RAM_MARGIN_GIB", "VRAM_NEED_GIB",
    "Backend", "BackendFailed", "Bnb4Backend", "Estimate", "GptqBackend", "PlainBackend",
    "SdnqBackend", "Step", "check_first_inference", "estimate_for", "folder_kind",
    "kernel_notes", "load_best", "measured_estimate", "parameter_count", "plan",
    "planned_precision", "prompt_tokens_for", "quant_method", "sources_for", "static_estimate",
]
