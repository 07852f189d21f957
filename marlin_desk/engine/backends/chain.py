"""The fallback chain: the ordered plan of backends for a request on a machine, and
`load_best`, which tries each step until one loads (and passes the self-check when quantized).

Order with `--backend auto`:
- CUDA: GPTQ 4-bit (smallest, fast kernels) -> bitsandbytes NF4 quantized at load from the BF16
  original -> BF16 (FP16 before Ampere) when the card has room -> the CPU chain (device auto).
- Apple MPS: FP16 on MPS -> the CPU chain.
- CPU: FP32 (BF16 matmuls are slow on most CPUs) when RAM allows -> BF16 -> NF4.
A model named explicitly as a GPTQ or SDNQ checkpoint (hub id or local folder) puts its own
backend first; an explicit `--backend` is tried alone, never silently replaced.
"""

from __future__ import annotations

import contextlib
import logging
import sys
from collections.abc import Mapping

from marlin_desk.core.errors import BadInput, ModelUnavailable
from marlin_desk.engine.backends.bnb4 import Bnb4Backend
from marlin_desk.engine.backends.checkpoints import named_kind, sources_for
from marlin_desk.engine.backends.gptq import GptqBackend
from marlin_desk.engine.backends.interface import Backend, Step, short_error
from marlin_desk.engine.backends.plain import PlainBackend
from marlin_desk.engine.backends.sdnq import SdnqBackend
from marlin_desk.engine.backends.self_check import check_first_inference
from marlin_desk.engine.hardware import Hardware, detect
from marlin_desk.engine.loader import DEFAULT_MODEL, LoadedModel, locate, stop_ids

log = logging.getLogger(__name__)

BACKEND_CHOICES = ("auto", "gptq", "bnb4", "bf16", "fp32", "sdnq")
DEVICE_CHOICES = ("auto", "cuda", "cpu", "mps")

BACKENDS: dict[str, Backend] = {
    "gptq": GptqBackend(), "bnb4": Bnb4Backend(), "bf16": PlainBackend("bf16"),
    "fp32": PlainBackend("fp32"), "sdnq": SdnqBackend(),
}
QUANTIZED = frozenset({"gptq", "bnb4", "sdnq"})


# -- the plan --------------------------------------------------------------------------------


def plan(model: str = DEFAULT_MODEL, backend: str = "auto", device: str = "auto",
         hw: Hardware | None = None) -> list[Step]:
    """The ordered attempts for this request on this machine (nothing is loaded)."""
    if backend not in BACKEND_CHOICES:
        raise BadInput(f"unknown backend {backend!r}: use one of {', '.join(BACKEND_CHOICES)}")
    if device not in DEVICE_CHOICES:
        raise BadInput(f"unknown device {device!r}: use auto, cpu, cuda or mps")
    hw = hw if hw is not None else detect()
    if device == "cuda" and not hw.cuda:
        raise ModelUnavailable("no usable CUDA GPU found: run with --device cpu")
    if device == "mps" and not hw.mps:
        raise ModelUnavailable("Apple MPS is not available here: run with --device cpu")
    if backend != "auto":
        return [Step(backend, _device_for(backend, device, hw), "requested with --backend")]

    steps: list[Step] = []
    named = named_kind(model)
    gpu = device if device != "auto" else ("cuda" if hw.cuda else "mps" if hw.mps else "cpu")
    if named == "gptq":
        steps.append(Step("gptq", "cuda" if gpu == "cuda" else "cpu",
                          "the model named is a GPTQ checkpoint"))
    elif named == "sdnq":
        steps.append(Step("sdnq", "cpu" if gpu == "mps" else gpu,
                          "the model named is an SDNQ checkpoint"))
    if gpu == "cuda":
        name = hw.cuda_name or "a CUDA GPU"
        steps += [Step("gptq", "cuda", f"{name}: GPTQ 4-bit is the smallest and fastest"),
                  Step("bnb4", "cuda", f"{name}: NF4 quantized at load from the BF16 original"),
                  Step("bf16", "cuda", f"{name}: 16-bit weights when the card has room")]
    elif gpu == "mps":
        steps.append(Step("bf16", "mps", "Apple GPU (MPS): 16-bit weights"))
    if device in ("auto", "cpu"):
        why = "no GPU found" if device == "auto" and gpu == "cpu" else \
            "CPU requested" if device == "cpu" else "the GPU backends did not work"
        steps += [Step("fp32", "cpu", f"{why}: FP32 on CPU (bf16 matmuls are slow on most CPUs)"),
                  Step("bf16", "cpu", f"{why}: BF16 on CPU halves the memory FP32 needs"),
                  Step("bnb4", "cpu", f"{why}: NF4 on CPU needs the least memory")]
    seen: set[tuple[str, str]] = set()
    unique = []
    for s in steps:
        if (s.backend, s.device) not in seen:
            seen.add((s.backend, s.device))
            unique.append(s)
    return unique


def _device_for(backend: str, device: str, hw: Hardware) -> str:
    if device != "auto":
        return device
    if hw.cuda and backend != "fp32":
        return "cuda"
    if hw.mps and backend == "bf16":
        return "mps"
    return "cpu"


def planned_precision(model: str, backend: str = "auto", device: str = "auto",
                      hw: Hardware | None = None) -> str:
    """The precision of the first step that can run: the cache key before anything loads
    (the loaded model's own `precision` replaces it if the chain falls back)."""
    hw = hw if hw is not None else detect()
    steps = plan(model, backend, device, hw)
    for step in steps:
        impl = BACKENDS[step.backend]
        if any(impl.can_run(hw, step.device, src)[0]
               for src in sources_for(step.backend, model)):
            return impl.precision(hw, step.device)
    first = steps[0]
    return BACKENDS[first.backend].precision(hw, first.device)


# -- loading -----------------------------------------------------------------------------------


def load_best(model: str = DEFAULT_MODEL, backend: str = "auto", device: str = "auto",
              hw: Hardware | None = None, self_check: bool = True, revision: str | None = None,
              backends: Mapping[str, Backend] | None = None) -> LoadedModel:
    """Try the plan's steps in order; the first that loads (and passes the self-check when
    quantized) wins. Every skipped or failed step is logged and kept in `fallbacks`."""
    hw = hw if hw is not None else detect()
    impls = dict(BACKENDS, **(backends or {}))
    steps = plan(model, backend, device, hw)
    fallbacks: list[str] = []
    for step in steps:
        impl = impls[step.backend]
        for source in sources_for(step.backend, model):
            label = f"{step.backend} on {step.device}"
            ok, reason = impl.can_run(hw, step.device, source)
            if not ok:
                _fell_back(fallbacks, f"{label}: {reason}")
                continue
            try:
                folder = locate(source, revision)
                ok, reason = impl.can_run(hw, step.device, str(folder))
                if not ok:
                    _fell_back(fallbacks, f"{label}: {reason}")
                    continue
                log.info("loading %s with %s on %s: %s", folder, step.backend, step.device,
                         step.why)
                # third-party loaders print banners (gptqmodel: "WARN Python GIL is
                # enabled...") to stdout, which belongs to the CLI's JSON: send them to stderr
                with contextlib.redirect_stdout(sys.stderr):
                    net, processor = impl.load(folder, step.device, hw)
            except Exception as exc:  # noqa: BLE001 - third-party loaders raise anything
                _fell_back(fallbacks, f"{label} ({source}): {short_error(exc)}")
                _free()
                continue
            engine = LoadedModel(
                model=net, processor=processor, model_id=source, device=step.device,
                dtype=impl.dtype(hw, step.device), revision=revision, backend=step.backend,
                why=step.why, eos_ids=stop_ids(net), pad_id=net.config.pad_token_id,
                fallbacks=list(fallbacks), precision=impl.precision(hw, step.device),
                notes=kernel_notes(hw, step.device))
            if self_check and step.backend in QUANTIZED:
                with contextlib.redirect_stdout(sys.stderr):
                    problem = check_first_inference(engine)
                if problem:
                    _fell_back(fallbacks, f"{label}: failed its first-inference check: {problem}")
                    del engine, net
                    _free()
                    continue
            if fallbacks:
                engine.why = f"{step.why} (after {len(fallbacks)} fallback(s))"
            return engine
    if backend != "auto":
        raise ModelUnavailable(f"backend {backend} cannot run {model}: " + "; ".join(fallbacks))
    raise ModelUnavailable(f"no backend could load {model}: " + "; ".join(fallbacks))


def _fell_back(fallbacks: list[str], message: str) -> None:
    log.warning("backend fallback: %s", message)
    fallbacks.append(message)


def _free() -> None:
    """Return memory a failed attempt held, before the next one tries."""
    import gc

    gc.collect()
    try:
        import torch

        if torch.cuda.is_available():
            torch.cuda.empty_cache()
    except ImportError:
        pass


def kernel_notes(hw: Hardware, device: str) -> list[str]:
    """The optional DeltaNet kernels: reported, never required."""
    if hw.fast_linear_attention:
        return ["flash-linear-attention and causal-conv1d kernels are installed"]
    missing = [dist for mod, dist in (("fla", "flash-linear-attention"),
                                      ("causal_conv1d", "causal-conv1d")) if not hw.has(mod)]
    if device == "cuda":
        return [f"optional fast kernels not installed: {', '.join(missing)} (the linear-attention "
                f"layers use slower PyTorch code)"]
    return [f"optional kernels not installed: {', '.join(missing)} (they only help on a GPU)"]
