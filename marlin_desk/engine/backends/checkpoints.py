"""Facts about checkpoints: how a folder is quantized, and which checkpoint each backend loads
for a model name (a local folder, or the catalogue's checkpoint of the backend's kind)."""

from __future__ import annotations

import json
from pathlib import Path

# catalogue kind of the checkpoint each backend loads
KIND = {"gptq": "gptq", "bnb4": "bf16", "bf16": "bf16", "fp32": "bf16", "sdnq": "sdnq"}


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


def sources_for(backend: str, model: str) -> list[str]:
    """What `backend` would load for `model`: a local folder as is; for a catalogue id, the
    catalogue's checkpoint of that backend's kind (the named one first when it fits)."""
    from marlin_desk.models import CATALOGUE, catalogue_entry

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


def named_kind(model: str) -> str | None:
    """The kind of checkpoint the user named, when it is knowable without downloading."""
    from marlin_desk.models import catalogue_entry

    path = Path(model).expanduser()
    if path.is_dir():
        return folder_kind(path)
    entry = catalogue_entry(model)
    return entry.variant if entry is not None else None
