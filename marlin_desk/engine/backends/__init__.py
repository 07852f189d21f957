"""Ways of running Marlin-2B behind one interface, and the chain that picks one (chain.py; split
into one module per concern in the next commit). The names below are the ones the rest of the
app imports."""

from marlin_desk.engine.backends.chain import (
    BACKEND_CHOICES,
    BACKENDS,
    BF16_WEIGHTS_GIB,
    BNB_SKIP,
    CPU_GFLOPS_PER_CORE,
    CPU_MEMORY_GBPS,
    DEVICE_CHOICES,
    KIND,
    QUANTIZED,
    RAM_MARGIN_GIB,
    VRAM_NEED_GIB,
    Backend,
    BackendFailed,
    Bnb4Backend,
    Estimate,
    GptqBackend,
    PlainBackend,
    SdnqBackend,
    Step,
    check_first_inference,
    estimate_for,
    folder_kind,
    kernel_notes,
    load_best,
    measured_estimate,
    parameter_count,
    plan,
    planned_precision,
    prompt_tokens_for,
    quant_method,
    sources_for,
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
