"""Importing a model folder someone brought (a USB stick, `hf download --local-dir`): copied
into the models folder, or registered where it is, with every file checked against the
checksums the folder carries (our manifest, or hub download metadata)."""

from __future__ import annotations

import hashlib
import os
import shutil
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from marlin_desk.core.errors import BadInput
from marlin_desk.models.catalogue import catalogue_entry
from marlin_desk.models.files import (
    _CHUNK,
    LINKS_FILE,
    MANIFEST,
    MANIFEST_FORMAT,
    PARTIAL_DIR,
    _check_ref,
    _check_space,
    _check_weights,
    _hash_file,
    _local_files,
    _missing_shards,
    _now,
    _read_json,
    _source_references,
    _write_json,
    file_rule,
)
from marlin_desk.models.progress import ProgressCallback, _Meter

if TYPE_CHECKING:
    from marlin_desk.models.manager import ModelManager, ModelStatus


def pull_from_folder(manager: ModelManager, source: Path | str, model_id: str, *,
                     link: bool = False,
                     progress: ProgressCallback | None = None,
                     cancel: threading.Event | None = None) -> ModelStatus:
    """Take a folder someone brought (USB stick, `hf download --local-dir`): copy it into
    our models folder (or, with link, register it where it is), checking every file."""
    src = Path(source).expanduser().resolve()
    if not src.is_dir():
        raise BadInput(f"no folder at {source}")
    target = manager.folder_for(model_id)
    names = _local_files(src, file_rule(model_id))
    _check_weights(names, str(src), model_id)
    missing = _missing_shards(src, names)
    if missing:
        raise BadInput(f"{src} lacks {len(missing)} weight shard(s) its index names, "
                       f"e.g. {missing[0]}: the copy is incomplete")
    refs, ref_kind, commit, revision = _source_references(src, model_id, names)
    if ref_kind == "none":
        refs, ref_kind = catalogue_references(model_id, names)
    total = sum((src / n).stat().st_size for n in names)
    meter = _Meter(model_id, "verify" if link else "copy", len(names), total, progress,
                   cancel, manager.progress_interval)
    if link or src == target.resolve():
        record = {n: _check_in_place(manager, src, n, refs, meter) for n in names}
        doc = {"format": MANIFEST_FORMAT, "complete": True, "model_id": model_id,
               "revision": revision, "commit": commit, "source": "folder",
               "source_path": str(src), "reference": ref_kind, "pulled_at": _now(),
               "verified_at": _now(), "verify_ok": True, "files": record}
        if link:
            manager.root.mkdir(parents=True, exist_ok=True)
            links = manager.links()
            links[model_id] = {**doc, "path": str(src)}
            _write_json(manager.root / LINKS_FILE, links)
        else:
            _write_json(target / MANIFEST, doc)
        meter.finish()
        return manager.status(model_id)
    if target.resolve().is_relative_to(src) or src.is_relative_to(target.resolve()):
        raise BadInput(f"{src} and {target} overlap: copy from another folder")
    manager.root.mkdir(parents=True, exist_ok=True)
    with manager._lock(model_id):
        target.mkdir(parents=True, exist_ok=True)
        old = _read_json(target / MANIFEST) or {}
        (target / MANIFEST).unlink(missing_ok=True)
        _check_space(target, total, model_id)
        record = {}
        for n in names:
            record[n] = _copy_one(manager, src, target, n, refs, meter)
            meter.end_file()
        for stale in set(old.get("files") or {}) - set(record):
            (target / stale).unlink(missing_ok=True)
        shutil.rmtree(target / PARTIAL_DIR, ignore_errors=True)
        _write_json(target / MANIFEST, {
            "format": MANIFEST_FORMAT, "complete": True, "model_id": model_id,
            "revision": revision, "commit": commit, "source": "folder",
            "source_path": str(src), "reference": ref_kind, "pulled_at": _now(),
            "verified_at": _now(), "verify_ok": True, "files": record})
    meter.finish()
    return manager.status(model_id)


def catalogue_references(model_id: str, names: list[str]
                         ) -> tuple[dict[str, tuple[str, str]], str]:
    """Checksums the catalogue itself records for a checkpoint (the bundled Whisper tiny.en):
    ({name: ("sha256", hex)}, "catalogue") when it records one for every file, else none."""
    entry = catalogue_entry(model_id)
    known = {n: sha for n, _size, sha in (entry.files if entry else ()) if sha}
    if known and all(n in known for n in names if n not in ("README.md", "LICENSE")):
        return {n: ("sha256", known[n]) for n in names if n in known}, "catalogue"
    return {}, "none"


def _check_in_place(manager: ModelManager, src: Path, name: str,
                    refs: dict[str, tuple[str, str]],
                    meter: _Meter) -> dict[str, Any]:
    meter.start_file(name, "verify")
    digest = _hash_file(src / name, meter)
    _check_ref(src / name, digest, refs.get(name), src)
    meter.end_file()
    return {"size": (src / name).stat().st_size, "sha256": digest}


def _copy_one(manager: ModelManager, src: Path, target: Path, name: str,
              refs: dict[str, tuple[str, str]],
              meter: _Meter) -> dict[str, Any]:
    meter.start_file(name, "copy")
    part = target / PARTIAL_DIR / (name + ".part")
    part.parent.mkdir(parents=True, exist_ok=True)
    hasher = hashlib.sha256()
    with (src / name).open("rb") as fin, part.open("wb") as fout:
        for chunk in iter(lambda: fin.read(_CHUNK), b""):
            meter.check_cancel()
            fout.write(chunk)
            hasher.update(chunk)
            meter.add(len(chunk))
    digest = hasher.hexdigest()
    try:
        _check_ref(part, digest, refs.get(name), src, shown=name)
    except BadInput:
        part.unlink()
        raise
    (target / name).parent.mkdir(parents=True, exist_ok=True)
    os.replace(part, target / name)
    return {"size": (target / name).stat().st_size, "sha256": digest}

