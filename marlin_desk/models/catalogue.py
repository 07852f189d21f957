"""The catalogue of Marlin checkpoints the app knows how to run, and what a model card says.

The licence is never written here: sources disagree about the base model's (the cards say
Apache-2.0, an article about Qwen3.5 says BSL-1.1), so the app shows what the downloaded card's
metadata says (`card_licence`), and "see the model card" before one is downloaded.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal

Variant = Literal["bf16", "gptq", "bnb4-from-bf16", "sdnq", "mlx"]
UNKNOWN_LICENCE = "see the model card"


@dataclass(frozen=True)
class CatalogueEntry:
    """A checkpoint we know how to run. Sizes are approximate; pull uses the hub's real sizes."""

    id: str
    variant: Variant
    backend: str
    size_gb: float
    revision: str = "main"
    note: str = ""
    default: bool = False
    also_serves: tuple[Variant, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


CATALOGUE: tuple[CatalogueEntry, ...] = (
    CatalogueEntry("NemoStation/Marlin-2B", "bf16", "transformers", 4.6,
                   note="BF16 original; bitsandbytes 4-bit is quantized from it at load",
                   default=True, also_serves=("bnb4-from-bf16",)),
    CatalogueEntry("NemoStation/Marlin-2B-GPTQ", "gptq", "gptqmodel", 2.6,
                   note="GPTQ 4-bit g128, lm_head 16-bit; needs a CUDA GPU"),
    CatalogueEntry("prasannaJagadesh/marlin-2B-GPTQ-4BITS", "gptq", "gptqmodel", 2.6,
                   note="third-party GPTQ 4-bit; needs a CUDA GPU"),
    CatalogueEntry("tintwotin/Marlin-2B-SDNQ-int8", "sdnq", "sdnq", 2.8,
                   note="third-party SDNQ int8"),
    CatalogueEntry("junwatu/Marlin-2B-MLX-8bit", "mlx", "mlx-vlm", 2.6,
                   note="MLX 8-bit, Apple Silicon only"),
)
DEFAULT_MODEL = next(e.id for e in CATALOGUE if e.default)


def catalogue_entry(model_id: str) -> CatalogueEntry | None:
    """The catalogue's entry for a hub id (case-insensitive, as the hub is), or None."""
    return next((e for e in CATALOGUE if e.id.lower() == model_id.lower()), None)




def card_licence(folder: Path | str | None) -> str:
    """The `license:` of a model card's YAML front matter (README.md in the model folder), or
    UNKNOWN_LICENCE when there is no card or it names none."""
    if folder is None:
        return UNKNOWN_LICENCE
    try:
        text = (Path(folder) / "README.md").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return UNKNOWN_LICENCE
    front = re.match(r"---\s*\n(.*?)\n---", text, re.S)
    if not front:
        return UNKNOWN_LICENCE
    found = re.search(r"^licen[cs]e:\s*(.+?)\s*$", front.group(1), re.M | re.I)
    value = found.group(1).strip("'\" ") if found else ""
    name = re.search(r"^licen[cs]e_name:\s*(.+?)\s*$", front.group(1), re.M | re.I)
    if value.lower() == "other" and name:
        value = name.group(1).strip("'\" ")
    return value or UNKNOWN_LICENCE
