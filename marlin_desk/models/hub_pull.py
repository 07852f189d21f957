"""Pulling a model from the Hugging Face hub into the models folder, resumably.

The installed huggingface_hub downloads to a process-unique temporary file and deletes it when
``hf_hub_download`` fails, so a 4 GB pull cut at 90 % would start over. Each file is streamed
here through ``huggingface_hub.file_download.http_get`` (the hub's own HTTP code: auth headers,
retries, redirects) into a persistent ``.partial/<file>.part`` and continued with an HTTP Range
request next time. Every file's checksum is matched against the hub's before the manifest that
makes the model usable is written. huggingface_hub is imported lazily.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import shutil
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from marlin_desk.core.errors import BadInput, MarlinError, ModelUnavailable
from marlin_desk.models.catalogue import DEFAULT_MODEL, catalogue_entry
from marlin_desk.models.files import (
    _CHUNK,
    MANIFEST,
    MANIFEST_FORMAT,
    PARTIAL_DIR,
    _check_space,
    _check_weights,
    _hash_file,
    _matches,
    _now,
    _one_line,
    _present_bytes,
    _read_json,
    _RemoteFile,
    _revision_matches,
    _write_json,
    file_rule,
    is_offline,
    offline_hint,
)
from marlin_desk.models.progress import ProgressCallback, _Meter, _PartWriter, _silent_bar

if TYPE_CHECKING:
    from marlin_desk.models.manager import ModelManager, ModelStatus

log = logging.getLogger(__name__)


def pull(manager: ModelManager, model_id: str = DEFAULT_MODEL,
         revision: str | None = None, *,
         progress: ProgressCallback | None = None,
         cancel: threading.Event | None = None) -> ModelStatus:
    """Download a model into our folder: pinned commit, free-space check, resumable,
    every file's checksum matched against the hub before the model counts as downloaded."""
    entry = catalogue_entry(model_id)
    if entry is not None:
        model_id = entry.id
    rev = revision or (entry.revision if entry else "main")
    target = manager.folder_for(model_id)
    current = manager.status(model_id, revision)
    if is_offline():
        if current.usable and (revision is None or
                               _revision_matches(revision, current.revision, current.commit)):
            return current
        raise ModelUnavailable(offline_hint(model_id, target))
    commit, remote, refused = _remote_files(model_id, rev, target)
    allowed = file_rule(model_id)
    files = [f for f in remote if allowed(f.name)]
    _check_weights([f.name for f in files], f"{model_id}@{rev}", model_id)
    if refused:
        log.info("%s: not fetching %s (pickles, code or other files)", model_id, refused)
    manager.root.mkdir(parents=True, exist_ok=True)
    with manager._lock(model_id):
        doc = manager.manifest(model_id)
        if doc is not None and doc.get("commit") == commit and current.state == "verified":
            _Meter(model_id, "done", len(files), current.size_on_disk, progress,
                   cancel).finish()
            return current
        _download_all(manager, model_id, rev, commit, files, target, progress, cancel)
    return manager.status(model_id)


def _remote_files(model_id: str, rev: str,
                  target: Path) -> tuple[str, list[_RemoteFile], list[str]]:
    """The commit `rev` points to now, and its files with sizes and checksums."""
    from huggingface_hub import HfApi
    from huggingface_hub.errors import (
        GatedRepoError,
        RepositoryNotFoundError,
        RevisionNotFoundError,
    )

    try:
        info = HfApi().model_info(model_id, revision=rev, files_metadata=True)
    except GatedRepoError as exc:
        raise ModelUnavailable(f"{model_id} is gated: accept its terms on the hub, then log "
                               f"in with `hf auth login` ({_one_line(exc)})") from exc
    except RevisionNotFoundError as exc:
        raise BadInput(f"{model_id} has no revision {rev!r}") from exc
    except RepositoryNotFoundError as exc:
        raise BadInput(f"no model {model_id} on the hub (or it is private: log in with "
                       f"`hf auth login`)") from exc
    except _network_errors() as exc:
        raise ModelUnavailable(offline_hint(
            model_id, target, f"the hub cannot be reached ({_one_line(exc)})")) from exc
    allowed = file_rule(model_id)
    files, refused = [], []
    for s in info.siblings or []:
        lfs = s.lfs
        sha = (lfs.get("sha256") if isinstance(lfs, dict) else getattr(lfs, "sha256", None)) \
            if lfs else None
        f = _RemoteFile(s.rfilename, s.size, sha, None if lfs else s.blob_id)
        (files if allowed(f.name) else refused).append(f)
    return info.sha or rev, files, [f.name for f in refused]


def _download_all(manager: ModelManager, model_id: str, rev: str, commit: str,
                  files: list[_RemoteFile], target: Path, progress: ProgressCallback | None,
                  cancel: threading.Event | None) -> None:
    target.mkdir(parents=True, exist_ok=True)
    old = _read_json(target / MANIFEST) or {}
    (target / MANIFEST).unlink(missing_ok=True)  # incomplete from here until the end
    total = sum(f.size or 0 for f in files)
    have = sum(_present_bytes(target, f) for f in files)
    _check_space(target, total - have, model_id)
    meter = _Meter(model_id, "download", len(files), total, progress, cancel,
                   manager.progress_interval)
    record: dict[str, dict[str, Any]] = {}
    for f in files:
        record[f.name] = _fetch_one(manager, model_id, commit, f, target, meter)
        meter.end_file()
    for stale in set(old.get("files") or {}) - set(record):
        (target / stale).unlink(missing_ok=True)
    shutil.rmtree(target / PARTIAL_DIR, ignore_errors=True)
    _write_json(target / MANIFEST, {
        "format": MANIFEST_FORMAT, "complete": True, "model_id": model_id, "revision": rev,
        "commit": commit, "source": "hub", "source_path": None, "reference": "hub",
        "pulled_at": _now(), "verified_at": _now(), "verify_ok": True, "files": record})
    meter.finish()


def _fetch_one(manager: ModelManager, model_id: str, commit: str, f: _RemoteFile,
               target: Path, meter: _Meter) -> dict[str, Any]:
    """One file: keep it if already right, else resume/download it, check it, move it in."""
    final = target / f.name
    if final.is_file() and f.size is not None and final.stat().st_size == f.size:
        meter.start_file(f.name, "verify")
        digest = _hash_file(final, meter, fetched=False)
        if _matches(final, digest, f):
            return {"size": f.size, "sha256": digest}
        meter.add(-f.size, fetched=False)
        final.unlink()
    part = target / PARTIAL_DIR / (f.name + ".part")
    part.parent.mkdir(parents=True, exist_ok=True)
    for attempt in (1, 2):
        digest = _stream(manager, model_id, commit, f, part, target, meter)
        if _matches(part, digest, f):
            break
        size = part.stat().st_size
        part.unlink()
        meter.add(-size, fetched=False)
        log.warning("%s: %s failed its checksum (attempt %d)", model_id, f.name, attempt)
    else:
        raise ModelUnavailable(f"{f.name} of {model_id} does not match the hub's checksum "
                               f"twice in a row; run the pull again later")
    final.parent.mkdir(parents=True, exist_ok=True)
    os.replace(part, final)
    return {"size": final.stat().st_size, "sha256": digest}


def _stream(manager: ModelManager, model_id: str, commit: str, f: _RemoteFile,
            part: Path, target: Path, meter: _Meter) -> str:
    from huggingface_hub import file_download, hf_hub_url
    from huggingface_hub.utils import build_hf_headers

    resume = part.stat().st_size if part.is_file() else 0
    if f.size is not None and resume > f.size:
        part.unlink()
        resume = 0
    meter.start_file(f.name, "download")
    hasher = hashlib.sha256()
    if resume:
        with part.open("rb") as fh:
            for chunk in iter(lambda: fh.read(_CHUNK), b""):
                hasher.update(chunk)
        meter.add(resume, fetched=False)
        log.info("%s: resuming %s at %d bytes", model_id, f.name, resume)
    with part.open("ab") as fh:
        writer = _PartWriter(fh, meter, hasher)
        try:
            file_download.http_get(
                hf_hub_url(model_id, f.name, revision=commit), writer, resume_size=resume,
                headers=build_hf_headers(), expected_size=f.size, tqdm_class=_silent_bar())
        except MarlinError:
            raise
        except _network_errors() as exc:
            raise ModelUnavailable(offline_hint(
                model_id, target, f"the download failed ({_one_line(exc)}); run the pull "
                                  f"again to resume it, or")) from exc
        except OSError as exc:
            raise MarlinError(f"cannot write {part}: {exc.strerror or exc}") from exc
    return _hash_file(part) if not writer.hash_valid else hasher.hexdigest()


def _network_errors() -> tuple[type[BaseException], ...]:
    errors: list[type[BaseException]] = [ConnectionError, TimeoutError]
    with contextlib.suppress(ImportError):
        from huggingface_hub.errors import HfHubHTTPError

        errors.append(HfHubHTTPError)
    for module in ("httpx2", "httpx"):
        with contextlib.suppress(ImportError):
            errors.append(__import__(module).HTTPError)
    return tuple(errors)


