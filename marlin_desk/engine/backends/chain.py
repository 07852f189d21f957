"""Ways of running Marlin-2B behind one interface, and the chain that picks one.

Each backend says whether it can run on a machine (`can_run(hw, device)` with a reason) and
loads a checkpoint into a `LoadedModel`. `load_best` builds an ordered plan from the machine's
facts (a `Hardware` value, supplied so any machine can be described in tests), tries each step,
checks a quantized model's first inference, and records every skipped or failed step with its
reason in `LoadedModel.fallbacks` so the user sees why the app runs the way it does.

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
import json
import logging
import math
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from marlin_desk.core.errors import BadInput, MarlinError, ModelUnavailable
from marlin_desk.engine.hardware import GIB, Hardware, detect
from marlin_desk.engine.loader import DEFAULT_MODEL, LoadedModel, load_native, locate, stop_ids

log = logging.getLogger(__name__)

BACKEND_CHOICES = ("auto", "gptq", "bnb4", "bf16", "fp32", "sdnq")
DEVICE_CHOICES = ("auto", "cuda", "cpu", "mps")

# Modules bitsandbytes must leave in 16/32-bit: the vision tower (quality, and small), lm_head,
# and the DeltaNet in_proj_a/in_proj_b whose 16-wide outputs the 4-bit CPU kernel cannot take
# (it needs multiples of 32). "model.visual" is matched from the start of the name: transformers
# 5.24 does not match a bare "visual" inside "model.visual.blocks...", so it would be quantized.
BNB_SKIP = ["model.visual", "lm_head", "in_proj_a", "in_proj_b"]

# Peak GPU memory for a 120 s window, in GiB, with a margin. Published figures for a consumer
# GPU: GPTQ 4.67 GB, bnb4 4.20 GB, BF16 about 8 GB; bench/gpu_check.py measures ours.
VRAM_NEED_GIB = {"gptq": 5.0, "bnb4": 4.6, "bf16": 8.5, "fp32": 16.0, "sdnq": 6.0}
BF16_WEIGHTS_GIB = 4.43  # resident BF16 weights of Marlin-2B
RAM_MARGIN_GIB = 2.5  # activations of a 120 s window on CPU, the processor, Python

# catalogue kind of the checkpoint each backend loads
KIND = {"gptq": "gptq", "bnb4": "bf16", "bf16": "bf16", "fp32": "bf16", "sdnq": "sdnq"}


class BackendFailed(MarlinError):
    """One backend could not load or failed its self-check (the chain moves on)."""


@dataclass(frozen=True)
class Step:
    """One planned attempt: a backend on a device, and why it is in the plan."""

    backend: str
    device: str
    why: str


class Backend(Protocol):
    name: str

    def can_run(self, hw: Hardware, device: str, source: str) -> tuple[bool, str]:
        """(possible here, reason): decided from facts only, before any loading."""
        ...

    def dtype(self, hw: Hardware, device: str) -> str:
        """The activations' dtype on that device."""
        ...

    def precision(self, hw: Hardware, device: str) -> str:
        """The numeric precision that goes into cache keys ("gptq-int4", "nf4", ...)."""
        ...

    def load(self, folder: Path, device: str, hw: Hardware) -> tuple[Any, Any]:
        """(model, processor) from a local folder; raises on failure."""
        ...


# -- facts about checkpoints -----------------------------------------------------------------


def quant_method(folder: Path) -> str | None:
    """The folder's `quantization_config.quant_method` ("gptq", "sdnq", "bitsandbytes") or None."""
    try:
        config = json.loads((folder / "config.json").read_text())
    except (OSError, ValueError):
        return None
    method = (config.get("quantization_config") or {}).get("quant_method")
    if method is None and (folder / "quantization_config.json").is_file():
        try:
            method = json.loads((folder / "quantization_config.json").read_text()).get(
                "quant_method")
        except (OSError, ValueError):
            method = None
    return str(method).lower() if method else None


def folder_kind(folder: Path) -> str:
    """"gptq", "sdnq" or "bf16" (a plain or a bitsandbytes checkpoint)."""
    method = quant_method(folder)
    return method if method in ("gptq", "sdnq") else "bf16"


def _weights_gib(folder: Path) -> float:
    return sum(f.stat().st_size for f in folder.glob("*.safetensors")) / GIB


def sources_for(backend: str, model: str) -> list[str]:
    """What `backend` would load for `model`: a local folder as is; for a catalogue id, the
    catalogue's checkpoint of that backend's kind (the named one first when it fits)."""
    from marlin_desk.engine.models import CATALOGUE, catalogue_entry

    if Path(model).expanduser().is_dir():
        return [str(Path(model).expanduser())]
    kind = KIND[backend]
    entry = catalogue_entry(model)
    if entry is None:
        return [model]  # an unknown hub id: used as is, its config decides later
    ids = [e.id for e in CATALOGUE if e.variant == kind]
    if entry.variant == kind:
        ids = [entry.id] + [i for i in ids if i != entry.id]
    return ids


def _named_kind(model: str) -> str | None:
    """The kind of checkpoint the user named, when it is knowable without downloading."""
    from marlin_desk.engine.models import catalogue_entry

    path = Path(model).expanduser()
    if path.is_dir():
        return folder_kind(path)
    entry = catalogue_entry(model)
    return entry.variant if entry is not None else None


def _size_gib(source: str, bf16_multiple: float) -> float:
    """Estimated resident weights: a local folder's files, else the catalogue's BF16 size."""
    path = Path(source)
    if path.is_dir():
        return _weights_gib(path) * bf16_multiple
    return BF16_WEIGHTS_GIB * bf16_multiple


def _vram_check(name: str, hw: Hardware, need_gib: float) -> tuple[bool, str]:
    free = hw.vram_free or hw.vram_total
    if free and free < need_gib * GIB:
        return False, (f"{free / GIB:.1f} GiB of GPU memory free, {name} needs about "
                       f"{need_gib:.1f} GiB for a 120 s window")
    return True, ""


def _ram_check(name: str, hw: Hardware, need_gib: float) -> tuple[bool, str]:
    have = hw.ram_available or hw.ram_total
    if have and have < need_gib * GIB:
        return False, (f"{have / GIB:.1f} GiB of RAM available, {name} on CPU needs about "
                       f"{need_gib:.1f} GiB")
    return True, ""


# -- the backends ------------------------------------------------------------------------------


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
            return _vram_check("GPTQ 4-bit", hw, VRAM_NEED_GIB["gptq"])
        return True, ""

    def dtype(self, hw: Hardware, device: str) -> str:
        return "float16" if device == "cuda" and not hw.bf16_on_cuda else "bfloat16"

    def precision(self, hw: Hardware, device: str) -> str:
        return "gptq-int4"

    def load(self, folder: Path, device: str, hw: Hardware) -> tuple[Any, Any]:
        if quant_method(folder) != "gptq":
            raise BackendFailed(f"{folder} is not a GPTQ checkpoint")
        # gptqmodel's loader fails on 2 cores with its default worker count (TOOLCHAIN.md)
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
            return _vram_check("NF4", hw, VRAM_NEED_GIB["bnb4"])
        # resident: 4-bit layers plus the 16-bit vision tower, embeddings and lm_head
        return _ram_check("NF4", hw, _size_gib(source, 0.5) + RAM_MARGIN_GIB)

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
                _size_gib(source, 2.0 if self.name == "fp32" else 1.0) + 1.0
            return _vram_check(self.name.upper(), hw, need)
        if device == "mps":
            return True, ""
        multiple = 2.0 if self.name == "fp32" else 1.0
        return _ram_check(self.name.upper(), hw, _size_gib(source, multiple) + RAM_MARGIN_GIB)

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
            return _vram_check("SDNQ int8", hw, VRAM_NEED_GIB["sdnq"])
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
    named = _named_kind(model)
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
                _fell_back(fallbacks, f"{label} ({source}): {_short(exc)}")
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


def _short(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"{type(exc).__name__}: {text[:300]}" if text else type(exc).__name__


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


# -- the first-inference self-check -----------------------------------------------------------


def check_first_inference(engine: LoadedModel, new_tokens: int = 2) -> str | None:
    """None when a short greedy generate on a tiny synthetic clip gives finite logits; else
    what went wrong. Broken quantized kernels tend to give NaN or inf, not an exception."""
    import numpy as np
    import torch

    from marlin_desk.engine.inputs import suffix_ids, video_prefix
    from marlin_desk.media.sampling import SampledFrames

    try:
        rng = np.random.default_rng(0)
        frames = SampledFrames(frames=rng.integers(0, 255, (4, 64, 64, 3), dtype=np.uint8),
                               times=[0.0, 0.5, 1.0, 1.5], window_start=0.0, window_end=2.0,
                               source_indices=[0, 1, 2, 3])
        prefix = video_prefix(engine.processor, frames)
        inputs = dict(prefix.inputs)
        suffix = suffix_ids(engine.processor, "Describe the clip.")
        inputs["input_ids"] = torch.cat([inputs["input_ids"], suffix], dim=1)
        inputs["attention_mask"] = torch.ones_like(inputs["input_ids"])
        if "mm_token_type_ids" in inputs:
            inputs["mm_token_type_ids"] = torch.cat(
                [inputs["mm_token_type_ids"], torch.zeros_like(suffix)], dim=1)
        net = engine.model
        moved = {k: (v.to(net.device, dtype=net.dtype) if v.is_floating_point() else
                     v.to(net.device)) if isinstance(v, torch.Tensor) else v
                 for k, v in inputs.items()}
        net.model.rope_deltas = None
        with torch.inference_mode():
            out = net.generate(**moved, max_new_tokens=new_tokens, do_sample=False, num_beams=1,
                               eos_token_id=engine.eos_ids, pad_token_id=engine.pad_id,
                               return_dict_in_generate=True, output_logits=True)
        net.model.rope_deltas = None
    except Exception as exc:  # noqa: BLE001 - any failure here means "do not use this backend"
        return _short(exc)
    for step in out.logits:
        if not bool(torch.isfinite(step.float()).all()):
            return "non-finite logits"
    return None


# -- time estimates for CPU runs ---------------------------------------------------------------

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
