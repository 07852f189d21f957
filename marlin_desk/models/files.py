"""Files of a model folder: which are allowed, the manifest, checksums, free space, the HF cache.

Only safetensors weights and text files (configs, tokenizer, chat template) are ever fetched or
copied; pickles (*.bin, *.pt) and code (*.py) never are. The one exception is a speech
checkpoint of the catalogue (CTranslate2 form): exactly the files its entry lists, whose
`model.bin` is CTranslate2's own flat binary format (read by its C++ loader, not a pickle).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath
from typing import Any

from marlin_desk.core.errors import BadInput, ModelUnavailable
from marlin_desk.models.catalogue import catalogue_entry

MANIFEST = "marlin-manifest.json"
PARTIAL_DIR = ".partial"
LINKS_FILE = "linked-folders.json"
MANIFEST_FORMAT = 1
# Text files a checkpoint needs besides its weights; everything else (pickles, code) is refused.
ALLOWED_SUFFIXES = (".json", ".safetensors", ".jinja", ".txt", ".model")
ALLOWED_NAMES = frozenset({"README.md", "LICENSE", "LICENSE.md", "NOTICE"})
SPACE_MARGIN = 256 * 2**20  # keep this much free beyond the download itself
_CHUNK = 8 * 2**20
_HUB_ID = re.compile(r"[A-Za-z0-9_][\w.-]*/[A-Za-z0-9_][\w.-]*")


class NotEnoughSpace(ModelUnavailable):
    """The disk cannot hold the download: the model stays unavailable (exit code 3)."""


@dataclass(frozen=True)
class _RemoteFile:
    name: str
    size: int | None
    sha256: str | None  # the hub's LFS sha256 (weights)
    git_sha1: str | None  # the hub's git blob id (small text files)


def is_offline() -> bool:
    """HF_HUB_OFFLINE (or TRANSFORMERS_OFFLINE), read now: the GUI or a test may change it."""
    values = (os.environ.get("HF_HUB_OFFLINE"), os.environ.get("TRANSFORMERS_OFFLINE"))
    return any((v or "").strip().upper() in {"1", "ON", "YES", "TRUE"} for v in values)


def check_model_id(model_id: str) -> tuple[str, str]:
    """(owner, name) of a hub id; refuses anything that could escape the models folder."""
    if not _HUB_ID.fullmatch(model_id) or "--" in model_id or ".." in model_id:
        raise BadInput(f"{model_id!r} is not a hub id (owner/name) or a model folder")
    owner, name = model_id.split("/")
    return owner, name


def allowed_file(name: str) -> bool:
    """Weights only as safetensors, plus configs/tokenizer/template: never pickles or code."""
    path = PurePosixPath(name)
    if path.is_absolute() or any(p in ("", ".", "..") or p.startswith(".") for p in path.parts):
        return False
    if path.name == MANIFEST:
        return False
    return path.suffix in ALLOWED_SUFFIXES or (len(path.parts) == 1 and path.name in ALLOWED_NAMES)


def file_rule(model_id: str | None) -> Callable[[str], bool]:
    """Which files of `model_id` are fetched or copied: for a speech checkpoint of the
    catalogue exactly its listed files (and the card and licence), else `allowed_file`."""
    entry = catalogue_entry(model_id) if model_id else None
    if entry is None or entry.kind != "speech":
        return allowed_file
    names = entry.file_names | ALLOWED_NAMES
    return lambda name: name in names


def offline_hint(model_id: str, target: Path, reason: str = "") -> str:
    """One line: what to run on a connected machine and where to put the files here."""
    why = reason or "this machine is offline (HF_HUB_OFFLINE is set)"
    return (f"model {model_id} is not downloaded and {why}: on a connected machine run "
            f"`marlin-desk models pull {model_id}`, then copy the folder that "
            f"`marlin-desk models where {model_id}` prints there to {target} here "
            f"(or run `marlin-desk models pull --from DIR {model_id}`, or pass --model DIR)")


def human_size(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if abs(n) < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GB"  # pragma: no cover


def _str(p: Path | None) -> str | None:
    return None if p is None else str(p)


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _one_line(exc: BaseException) -> str:
    text = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
    return text[:160]


def _git_blob_sha1(path: Path) -> str:
    """The hub's blob id for a non-LFS file: sha1 over git's "blob <size>\\0" header and bytes."""
    h = hashlib.sha1(f"blob {path.stat().st_size}\0".encode())
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(_CHUNK), b""):
            h.update(chunk)
    return h.hexdigest()


def _read_json(path: Path) -> dict[str, Any] | None:
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return doc if isinstance(doc, dict) else None


def _write_json(path: Path, doc: dict[str, Any]) -> None:
    """Atomic: a crash leaves the old file or the new one, never half of one."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(doc, indent=2, ensure_ascii=False), encoding="utf-8")
    os.replace(tmp, path)


def _local_files(folder: Path, allowed: Callable[[str], bool] = allowed_file) -> list[str]:
    """Allowed files under a folder, as posix names (hidden folders such as .cache skipped)."""
    names = []
    for p in folder.rglob("*"):
        rel = p.relative_to(folder).as_posix()
        if p.is_file() and allowed(rel):
            names.append(rel)
    return sorted(names)


def _check_weights(names: list[str], where: str, model_id: str | None = None) -> None:
    if "config.json" not in names:
        raise BadInput(f"{where} is not a model: it has no config.json")
    entry = catalogue_entry(model_id) if model_id else None
    if entry is not None and entry.kind == "speech":
        if "model.bin" not in names:
            raise BadInput(f"{where} is not a CTranslate2 Whisper checkpoint: it has no "
                           "model.bin")
        return
    if not any(n.endswith(".safetensors") for n in names):
        raise BadInput(f"{where} has no safetensors weights; pickled weights (*.bin, *.pt) "
                       "are never loaded")


def _missing_shards(folder: Path, names: list[str]) -> list[str]:
    """Shards a safetensors index names but the folder lacks (a half-copied USB stick)."""
    missing: list[str] = []
    for index in (n for n in names if n.endswith(".safetensors.index.json")):
        doc = _read_json(folder / index) or {}
        shards = set((doc.get("weight_map") or {}).values())
        base = PurePosixPath(index).parent
        missing += sorted(s for s in shards if (base / s).as_posix() not in names)
    return missing


def hf_cache_snapshot(model_id: str, revision: str | None = None) -> Path | None:
    """The Hugging Face cache's snapshot of a model, if its config and weights are there."""
    try:
        from huggingface_hub import try_to_load_from_cache

        found = try_to_load_from_cache(model_id, "config.json", revision=revision)
    except (ImportError, ValueError, OSError):
        return None
    if not isinstance(found, str):
        return None
    snapshot = Path(found).parent
    return snapshot if any(snapshot.glob("*.safetensors")) else None


def _revision_matches(want: str, revision: str | None, commit: str | None) -> bool:
    if want in (revision, commit):
        return True
    return bool(commit and len(want) >= 7 and re.fullmatch(r"[0-9a-f]+", want)
                and commit.startswith(want))


def _du(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def _present_bytes(target: Path, f: _RemoteFile) -> int:
    """Bytes already on disk for a file (done or partial), so the space check counts only
    what is still to come."""
    final, part = target / f.name, target / PARTIAL_DIR / (f.name + ".part")
    if final.is_file() and f.size is not None and final.stat().st_size == f.size:
        return f.size
    return part.stat().st_size if part.is_file() else 0


def _check_space(folder: Path, needed: int, model_id: str) -> None:
    free = shutil.disk_usage(folder).free
    if needed > 0 and free < needed + SPACE_MARGIN:
        raise NotEnoughSpace(f"not enough free space for {model_id}: it needs "
                             f"{human_size(needed + SPACE_MARGIN)} in {folder}, "
                             f"{human_size(free)} is free (free some space, or set "
                             f"MARLIN_DESK_DATA to a folder on a bigger disk)")


def _hash_file(path: Path, meter: Any = None, fetched: bool = False) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(_CHUNK), b""):
            h.update(chunk)
            if meter is not None:
                meter.add(len(chunk), fetched=fetched)
    return h.hexdigest()


def _matches(path: Path, sha256: str, f: _RemoteFile) -> bool:
    """Against the hub: LFS files by sha256, small git files by their blob id."""
    if f.size is not None and path.stat().st_size != f.size:
        return False
    if f.sha256:
        return sha256 == f.sha256
    if f.git_sha1:
        return _git_blob_sha1(path) == f.git_sha1
    return True


def _source_references(src: Path, model_id: str, names: list[str]
                       ) -> tuple[dict[str, tuple[str, str]], str, str | None, str | None]:
    """Checksums a brought folder carries: our own manifest (from `models pull` on another
    machine) or `hf download --local-dir` metadata. ({name: (kind, hex)}, kind, commit, rev)."""
    doc = _read_json(src / MANIFEST)
    if doc and doc.get("complete"):
        if str(doc.get("model_id", "")).lower() != model_id.lower():
            raise BadInput(f"{src} holds {doc.get('model_id')}, not {model_id}")
        refs = {n: ("sha256", f["sha256"]) for n, f in (doc.get("files") or {}).items()}
        absent = sorted(set(refs) - set(names))
        if absent:
            raise BadInput(f"{src} lacks {absent[0]} (and {len(absent) - 1} more) that its "
                           "manifest lists: the copy is incomplete")
        return refs, "source-manifest", doc.get("commit"), doc.get("revision")
    refs, commits = {}, set()
    meta_dir = src / ".cache" / "huggingface" / "download"
    for n in names:
        lines = _read_lines(meta_dir / (n + ".metadata"))
        if len(lines) >= 2:
            etag = lines[1].strip().strip('"')
            if re.fullmatch(r"[0-9a-f]{64}", etag):
                refs[n] = ("sha256", etag)
            elif re.fullmatch(r"[0-9a-f]{40}", etag):
                refs[n] = ("git-sha1", etag)
            commits.add(lines[0].strip())
    if refs and all(n in refs for n in names if n.endswith(".safetensors")):
        commit = commits.pop() if len(commits) == 1 else None
        return refs, "hf-download-metadata", commit, None
    return {}, "none", None, None


def _read_lines(path: Path) -> list[str]:
    try:
        return path.read_text(encoding="utf-8").splitlines()
    except OSError:
        return []


def _check_ref(path: Path, digest: str, ref: tuple[str, str] | None, src: Path,
               shown: str | None = None) -> None:
    if ref is None:
        return
    kind, want = ref
    got = digest if kind == "sha256" else _git_blob_sha1(path)
    if got != want:
        name = shown or path.name
        raise BadInput(f"{name} in {src} does not match its recorded checksum: the copy is "
                       "damaged (copy it again)")

