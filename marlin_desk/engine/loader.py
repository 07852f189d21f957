"""Load a Marlin checkpoint (hub id or local folder) with the native Qwen3.5 class.

Marlin's checkpoint declares a custom class with remote code that only adds prompting and
parsing; the forward pass is transformers' own `Qwen3_5ForConditionalGeneration`, so we load that
class directly and never run remote code.
"""

from __future__ import annotations

import json
import logging
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from marlin_desk.core.budget import TRAINING_BUDGET, VideoBudget
from marlin_desk.core.errors import ModelUnavailable
from marlin_desk.models.catalogue import DEFAULT_MODEL

log = logging.getLogger(__name__)

_HUB_ID = re.compile(r"[\w.-]+/[\w.-]+")


@dataclass
class LoadedModel:
    """A model ready to answer, with the facts the user is shown about how it runs."""

    model: Any
    processor: Any
    model_id: str
    device: str
    dtype: str
    revision: str | None = None
    backend: str = "transformers"
    why: str = ""
    eos_ids: list[int] = field(default_factory=list)
    pad_id: int | None = None
    # Added with the backend chain (engine/backends/): each skipped or failed backend with its
    # reason, the numeric precision used in cache keys, and notes such as missing fast kernels.
    fallbacks: list[str] = field(default_factory=list)
    precision: str = ""
    notes: list[str] = field(default_factory=list)

    def describe(self) -> dict[str, Any]:
        return {"model": self.model_id, "revision": self.revision, "backend": self.backend,
                "device": self.device, "dtype": self.dtype, "why": self.why,
                "precision": self.precision or self.dtype, "fallbacks": list(self.fallbacks),
                "notes": list(self.notes)}


BUDGET_FILE = "budget.json"  # a model trained with another video budget says so here


def model_budget(model: str) -> VideoBudget:
    """The video budget a model was trained with: Marlin-2B's own (TRAINING_BUDGET), unless the
    model's folder carries a budget.json (the small test models trained in training/ do)."""
    path = Path(model).expanduser() / BUDGET_FILE
    if not path.is_file():
        return TRAINING_BUDGET
    try:
        return VideoBudget.from_dict(json.loads(path.read_text()))
    except (OSError, ValueError, TypeError) as exc:
        raise ModelUnavailable(f"{path} is not a valid video budget: {exc}") from exc


def resolve_device(device: str = "auto") -> tuple[str, str, str]:
    """(device, dtype, why). CUDA: bfloat16; CPU: float32 (bf16 matmuls are slow on most CPUs)."""
    import torch

    if device not in {"auto", "cpu", "cuda", "mps"}:
        from marlin_desk.core.errors import BadInput

        raise BadInput(f"unknown device {device!r}: use auto, cpu, cuda or mps")
    if device in {"auto", "cuda"} and torch.cuda.is_available():
        return "cuda", "bfloat16", "a CUDA GPU is available"
    if device == "cuda":
        raise ModelUnavailable("no usable CUDA GPU found: run with --device cpu")
    if device in {"auto", "mps"} and getattr(torch.backends, "mps", None) and \
            torch.backends.mps.is_available():
        return "mps", "float16", "Apple GPU (MPS) is available"
    if device == "mps":
        raise ModelUnavailable("Apple MPS is not available here: run with --device cpu")
    why = "no GPU found" if device == "auto" else "CPU requested"
    return "cpu", "float32", why


def _fix_hint(model_id: str) -> str:
    return (f"model {model_id!r} is not on this machine and cannot be downloaded now. "
            f"On a connected machine run `marlin-desk models pull {model_id}` (or "
            f"`hf download {model_id} --local-dir DIR`), copy the folder here and pass --model DIR")


def locate(model: str, revision: str | None = None) -> Path:
    """A local folder for `model`: the folder; else a hub id's copy in our models folder (put
    there by `marlin-desk models pull`); else its hub snapshot (downloaded if allowed)."""
    path = Path(model).expanduser()
    if path.is_dir():
        if not (path / "config.json").is_file():
            raise ModelUnavailable(f"{path} is not a model folder (no config.json)")
        return path
    if path.exists() or not _HUB_ID.fullmatch(model):
        raise ModelUnavailable(f"no model folder at {model}")
    from marlin_desk.models import ModelManager

    pulled = ModelManager().installed_folder(model, revision)
    if pulled is not None:
        return pulled
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import HfHubHTTPError, LocalEntryNotFoundError

    offline = os.environ.get("HF_HUB_OFFLINE", "").lower() in {"1", "true", "yes"}
    try:
        return Path(snapshot_download(
            model, revision=revision, local_files_only=offline,
            allow_patterns=["*.json", "*.safetensors", "*.jinja", "*.txt", "*.model"],
        ))
    except (LocalEntryNotFoundError, HfHubHTTPError, OSError, ValueError) as exc:
        log.info("cannot locate %s: %s", model, exc)
        raise ModelUnavailable(_fix_hint(model)) from exc


def load_model(model: str = DEFAULT_MODEL, device: str = "auto",
               revision: str | None = None) -> LoadedModel:
    """Load weights (safetensors only) and the processor; no remote code anywhere."""
    import torch
    from transformers import AutoProcessor, Qwen3_5ForConditionalGeneration

    quiet_transformers()
    folder = locate(model, revision)
    dev, dtype, why = resolve_device(device)
    log.info("loading %s on %s (%s): %s", folder, dev, dtype, why)
    try:
        net = Qwen3_5ForConditionalGeneration.from_pretrained(
            folder, dtype=getattr(torch, dtype), use_safetensors=True)
        processor = AutoProcessor.from_pretrained(folder)
    except (OSError, ValueError) as exc:
        raise ModelUnavailable(f"cannot load the model from {folder}: {exc}") from exc
    net.to(dev).eval()
    return LoadedModel(model=net, processor=processor, model_id=model, device=dev, dtype=dtype,
                       revision=revision, why=why, eos_ids=stop_ids(net),
                       pad_id=net.config.pad_token_id)


def quiet_transformers() -> None:
    """transformers' advice (kernels to install, deprecations) and its progress bars are not for
    our users; `-v` keeps them."""
    import transformers

    if not logging.getLogger("marlin_desk").isEnabledFor(logging.DEBUG):
        transformers.logging.set_verbosity_error()
        transformers.logging.disable_progress_bar()


def load_native(folder: Path, device: str, dtype: str, **kwargs: Any) -> tuple[Any, Any]:
    """(model, processor) from a folder with the native class; `kwargs` go to
    `from_pretrained` (e.g. a quantization config). Raises what transformers raises."""
    import torch
    from transformers import AutoProcessor, Qwen3_5ForConditionalGeneration

    quiet_transformers()

    placed = "quantization_config" in kwargs or "device_map" in kwargs
    if "quantization_config" in kwargs:
        kwargs.setdefault("device_map", {"": device})
    net = Qwen3_5ForConditionalGeneration.from_pretrained(
        folder, dtype=getattr(torch, dtype), use_safetensors=True, **kwargs)
    processor = AutoProcessor.from_pretrained(folder)
    if not placed:  # quantized weights are placed by from_pretrained; moving them breaks them
        net.to(device)
    return net.eval(), processor


def stop_ids(net: Any) -> list[int]:
    """Both EOS ids: the checkpoint's files disagree (top level vs text config), so stop on all."""
    ids: list[int] = []
    for value in (net.generation_config.eos_token_id, net.config.eos_token_id,
                  net.config.get_text_config().eos_token_id):
        for i in value if isinstance(value, list) else [value]:
            if i is not None and i not in ids:
                ids.append(int(i))
    return ids
