"""Model manager: the catalogue of Marlin checkpoints; pulling, verifying, listing, removing.

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
import hashlib
import json
import logging
import os
import re
import shutil
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath
from typing import Any, BinaryIO, Literal

from marlin_desk import paths
from marlin_desk.core.errors import BadInput, Cancelled, MarlinError, ModelUnavailable

log = logging.getLogger(__name__)

Variant = Literal["bf16", "gptq", "bnb4-from-bf16", "sdnq", "mlx"]
State = Literal["not-downloaded", "partial", "downloaded", "verified", "damaged", "hf-cache"]
Phase = Literal["download", "copy", "verify", "done"]

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


@dataclass(frozen=True)
class CatalogueEntry:
    """A checkpoint we know how to run. Sizes are approximate; pull uses the hub's real sizes."""

    id: str
    variant: Variant
    backend: str
    size_gb: float
    revision: str = "main"
    licence: str = ""
    note: str = ""
    default: bool = False
    also_serves: tuple[Variant, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


_LICENCE = "see the model card (a fine-tune of Qwen3.5-2B, Apache-2.0)"
CATALOGUE: tuple[CatalogueEntry, ...] = (
    CatalogueEntry("NemoStation/Marlin-2B", "bf16", "transformers", 4.6, licence=_LICENCE,
                   note="BF16 original; bitsandbytes 4-bit is quantized from it at load",
                   default=True, also_serves=("bnb4-from-bf16",)),
    CatalogueEntry("NemoStation/Marlin-2B-GPTQ", "gptq", "gptqmodel", 2.6, licence=_LICENCE,
                   note="GPTQ 4-bit g128, lm_head 16-bit; needs a CUDA GPU"),
    CatalogueEntry("prasannaJagadesh/marlin-2B-GPTQ-4BITS", "gptq", "gptqmodel", 2.6,
                   licence=_LICENCE, note="third-party GPTQ 4-bit; needs a CUDA GPU"),
    CatalogueEntry("tintwotin/Marlin-2B-SDNQ-int8", "sdnq", "sdnq", 2.8, licence=_LICENCE,
                   note="third-party SDNQ int8"),
    CatalogueEntry("NemoStation/Marlin-2B-MLX-8bit", "mlx", "mlx-vlm", 2.6, licence=_LICENCE,
                   note="MLX 8-bit, Apple Silicon only"),
)
DEFAULT_MODEL = next(e.id for e in CATALOGUE if e.default)


def catalogue_entry(model_id: str) -> CatalogueEntry | None:
    """The catalogue's entry for a hub id (case-insensitive, as the hub is), or None."""
    return next((e for e in CATALOGUE if e.id.lower() == model_id.lower()), None)


class NotEnoughSpace(ModelUnavailable):
    """The disk cannot hold the download: the model stays unavailable (exit code 3)."""


@dataclass(frozen=True)
class Progress:
    """One progress report. bytes_done never decreases; the last report has phase "done"."""

    model_id: str
    phase: Phase
    file: str
    files_done: int
    files_total: int
    bytes_done: int
    bytes_total: int
    speed_bps: float | None = None
    eta_s: float | None = None

    @property
    def fraction(self) -> float:
        return 1.0 if self.bytes_total <= 0 else min(1.0, self.bytes_done / self.bytes_total)


ProgressCallback = Callable[[Progress], None]


@dataclass
class ModelStatus:
    """Where a model is and in what state; what `list`, `where` and the dialog show."""

    id: str
    state: State
    target: Path  # where `pull` puts (or put) it
    folder: Path | None = None  # where it is usable from now, if anywhere
    source: Literal["pulled", "linked", "hf-cache"] | None = None
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


@dataclass(frozen=True)
class _RemoteFile:
    name: str
    size: int | None
    sha256: str | None  # the hub's LFS sha256 (weights)
    git_sha1: str | None  # the hub's git blob id (small text files)


# ---------------------------------------------------------------------------------------------
# small helpers


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


def _local_files(folder: Path) -> list[str]:
    """Allowed files under a folder, as posix names (hidden folders such as .cache skipped)."""
    names = []
    for p in folder.rglob("*"):
        rel = p.relative_to(folder).as_posix()
        if p.is_file() and allowed_file(rel):
            names.append(rel)
    return sorted(names)


def _check_weights(names: list[str], where: str) -> None:
    if "config.json" not in names:
        raise BadInput(f"{where} is not a model: it has no config.json")
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


class _Meter:
    """Turns byte counts into throttled Progress reports with speed and ETA; honours cancel."""

    def __init__(self, model_id: str, phase: Phase, files_total: int, bytes_total: int,
                 callback: ProgressCallback | None, cancel: threading.Event | None,
                 interval: float = 0.1) -> None:
        self.model_id, self.phase = model_id, phase
        self.files_total, self.bytes_total = files_total, bytes_total
        self.callback, self.cancel, self.interval = callback, cancel, interval
        self.file, self.files_done = "", 0
        self._done = 0
        self._shown = 0  # the largest bytes_done reported: reports never go backwards
        self._last = 0.0
        self._samples: deque[tuple[float, int]] = deque()  # (time, fetched bytes so far)
        self._fetched = 0

    def check_cancel(self) -> None:
        if self.cancel is not None and self.cancel.is_set():
            raise Cancelled(f"pull of {self.model_id} cancelled; run it again to resume")

    def start_file(self, name: str, phase: Phase) -> None:
        self.file, self.phase = name, phase
        self.check_cancel()
        self._emit(force=True)

    def end_file(self) -> None:
        self.files_done += 1

    def add(self, n: int, fetched: bool = True) -> None:
        """n new bytes (negative when a server made us start a file over)."""
        self._done += n
        if fetched and n > 0:
            self._fetched += n
        self._emit()
        self.check_cancel()

    def finish(self) -> None:
        self.phase, self.file, self.files_done = "done", "", self.files_total
        self._done = max(self._done, self.bytes_total)
        self._emit(force=True)

    def _speed(self, now: float) -> float | None:
        self._samples.append((now, self._fetched))
        while len(self._samples) > 2 and now - self._samples[0][0] > 5.0:
            self._samples.popleft()
        t0, b0 = self._samples[0]
        if now - t0 < 0.2:
            return None
        return (self._fetched - b0) / (now - t0)

    def _emit(self, force: bool = False) -> None:
        if self.callback is None:
            return
        now = time.monotonic()
        speed = self._speed(now)
        if not force and now - self._last < self.interval:
            return
        self._last = now
        self._shown = max(self._shown, min(self._done, self.bytes_total))
        eta = None
        if speed and self.phase in ("download", "copy"):
            eta = max(0.0, (self.bytes_total - self._shown) / speed)
        self.callback(Progress(self.model_id, self.phase, self.file, self.files_done,
                               self.files_total, self._shown, self.bytes_total,
                               speed_bps=speed, eta_s=0.0 if self.phase == "done" else eta))


class _PartWriter:
    """The file object handed to http_get: appends, hashes and counts every byte, and stops
    between chunks when the user cancels (the bytes written so far stay for a resume)."""

    def __init__(self, fh: BinaryIO, meter: _Meter, hasher: Any) -> None:
        self.fh, self.meter, self.hasher = fh, meter, hasher
        self.hash_valid = True

    def write(self, data: bytes) -> int:
        self.meter.check_cancel()
        n = self.fh.write(data)
        self.hasher.update(data)
        self.meter.add(len(data))
        return n

    def tell(self) -> int:
        return self.fh.tell()

    def seek(self, offset: int, whence: int = 0) -> int:
        return self.fh.seek(offset, whence)

    def truncate(self, size: int | None = None) -> int:
        # The server ignored our Range header and sends the whole file again.
        pos = self.fh.tell() if size is None else size
        before = self.fh.seek(0, os.SEEK_END)
        self.fh.seek(pos)
        after = self.fh.truncate(pos)
        self.hash_valid = False
        self.meter.add(after - before, fetched=False)
        return after

    def flush(self) -> None:
        self.fh.flush()


def _silent_bar() -> type:
    """A tqdm class that never draws: our own Progress replaces huggingface_hub's bars."""
    from tqdm import tqdm

    class _NoBar(tqdm):  # type: ignore[misc]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            kwargs.pop("name", None)
            kwargs["disable"] = True
            super().__init__(*args, **kwargs)

    return _NoBar


def _network_errors() -> tuple[type[BaseException], ...]:
    errors: list[type[BaseException]] = [ConnectionError, TimeoutError]
    with contextlib.suppress(ImportError):
        from huggingface_hub.errors import HfHubHTTPError

        errors.append(HfHubHTTPError)
    for module in ("httpx2", "httpx"):
        with contextlib.suppress(ImportError):
            errors.append(__import__(module).HTTPError)
    return tuple(errors)


# ---------------------------------------------------------------------------------------------
# the manager


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
        return st

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
        elif doc.get("reference") in ("hub", "source-manifest", "hf-download-metadata"):
            st.state = "verified"
        else:
            st.state = "downloaded"

    def list_models(self) -> list[ModelStatus]:
        """The catalogue, then other pulled or linked models, each with its state."""
        ids = [e.id for e in CATALOGUE]
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
        entry = catalogue_entry(model_id)
        if entry is not None:
            model_id = entry.id
        rev = revision or (entry.revision if entry else "main")
        target = self.folder_for(model_id)
        current = self.status(model_id, revision)
        if is_offline():
            if current.usable and (revision is None or
                                   _revision_matches(revision, current.revision, current.commit)):
                return current
            raise ModelUnavailable(offline_hint(model_id, target))
        commit, remote, refused = self._remote_files(model_id, rev, target)
        files = [f for f in remote if allowed_file(f.name)]
        _check_weights([f.name for f in files], f"{model_id}@{rev}")
        if refused:
            log.info("%s: not fetching %s (pickles, code or other files)", model_id, refused)
        self.root.mkdir(parents=True, exist_ok=True)
        with self._lock(model_id):
            doc = self.manifest(model_id)
            if doc is not None and doc.get("commit") == commit and current.state == "verified":
                _Meter(model_id, "done", len(files), current.size_on_disk, progress,
                       cancel).finish()
                return current
            self._download_all(model_id, rev, commit, files, target, progress, cancel)
        return self.status(model_id)

    def _remote_files(self, model_id: str, rev: str,
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
        files, refused = [], []
        for s in info.siblings or []:
            lfs = s.lfs
            sha = (lfs.get("sha256") if isinstance(lfs, dict) else getattr(lfs, "sha256", None)) \
                if lfs else None
            f = _RemoteFile(s.rfilename, s.size, sha, None if lfs else s.blob_id)
            (files if allowed_file(f.name) else refused).append(f)
        return info.sha or rev, files, [f.name for f in refused]

    def _download_all(self, model_id: str, rev: str, commit: str, files: list[_RemoteFile],
                      target: Path, progress: ProgressCallback | None,
                      cancel: threading.Event | None) -> None:
        target.mkdir(parents=True, exist_ok=True)
        old = _read_json(target / MANIFEST) or {}
        (target / MANIFEST).unlink(missing_ok=True)  # incomplete from here until the end
        total = sum(f.size or 0 for f in files)
        have = sum(_present_bytes(target, f) for f in files)
        _check_space(target, total - have, model_id)
        meter = _Meter(model_id, "download", len(files), total, progress, cancel,
                       self.progress_interval)
        record: dict[str, dict[str, Any]] = {}
        for f in files:
            record[f.name] = self._fetch_one(model_id, commit, f, target, meter)
            meter.end_file()
        for stale in set(old.get("files") or {}) - set(record):
            (target / stale).unlink(missing_ok=True)
        shutil.rmtree(target / PARTIAL_DIR, ignore_errors=True)
        _write_json(target / MANIFEST, {
            "format": MANIFEST_FORMAT, "complete": True, "model_id": model_id, "revision": rev,
            "commit": commit, "source": "hub", "source_path": None, "reference": "hub",
            "pulled_at": _now(), "verified_at": _now(), "verify_ok": True, "files": record})
        meter.finish()

    def _fetch_one(self, model_id: str, commit: str, f: _RemoteFile, target: Path,
                   meter: _Meter) -> dict[str, Any]:
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
            digest = self._stream(model_id, commit, f, part, target, meter)
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

    def _stream(self, model_id: str, commit: str, f: _RemoteFile, part: Path, target: Path,
                meter: _Meter) -> str:
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

    # -- pull from a local folder -------------------------------------------------------------

    def pull_from_folder(self, source: Path | str, model_id: str, *, link: bool = False,
                         progress: ProgressCallback | None = None,
                         cancel: threading.Event | None = None) -> ModelStatus:
        """Take a folder someone brought (USB stick, `hf download --local-dir`): copy it into
        our models folder (or, with link, register it where it is), checking every file."""
        src = Path(source).expanduser().resolve()
        if not src.is_dir():
            raise BadInput(f"no folder at {source}")
        target = self.folder_for(model_id)
        names = _local_files(src)
        _check_weights(names, str(src))
        missing = _missing_shards(src, names)
        if missing:
            raise BadInput(f"{src} lacks {len(missing)} weight shard(s) its index names, "
                           f"e.g. {missing[0]}: the copy is incomplete")
        refs, ref_kind, commit, revision = _source_references(src, model_id, names)
        total = sum((src / n).stat().st_size for n in names)
        meter = _Meter(model_id, "verify" if link else "copy", len(names), total, progress,
                       cancel, self.progress_interval)
        if link or src == target.resolve():
            record = {n: self._check_in_place(src, n, refs, meter) for n in names}
            doc = {"format": MANIFEST_FORMAT, "complete": True, "model_id": model_id,
                   "revision": revision, "commit": commit, "source": "folder",
                   "source_path": str(src), "reference": ref_kind, "pulled_at": _now(),
                   "verified_at": _now(), "verify_ok": True, "files": record}
            if link:
                self.root.mkdir(parents=True, exist_ok=True)
                links = self.links()
                links[model_id] = {**doc, "path": str(src)}
                _write_json(self.root / LINKS_FILE, links)
            else:
                _write_json(target / MANIFEST, doc)
            meter.finish()
            return self.status(model_id)
        if target.resolve().is_relative_to(src) or src.is_relative_to(target.resolve()):
            raise BadInput(f"{src} and {target} overlap: copy from another folder")
        self.root.mkdir(parents=True, exist_ok=True)
        with self._lock(model_id):
            target.mkdir(parents=True, exist_ok=True)
            old = _read_json(target / MANIFEST) or {}
            (target / MANIFEST).unlink(missing_ok=True)
            _check_space(target, total, model_id)
            record = {}
            for n in names:
                record[n] = self._copy_one(src, target, n, refs, meter)
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
        return self.status(model_id)

    def _check_in_place(self, src: Path, name: str, refs: dict[str, tuple[str, str]],
                        meter: _Meter) -> dict[str, Any]:
        meter.start_file(name, "verify")
        digest = _hash_file(src / name, meter)
        _check_ref(src / name, digest, refs.get(name), src)
        meter.end_file()
        return {"size": (src / name).stat().st_size, "sha256": digest}

    def _copy_one(self, src: Path, target: Path, name: str, refs: dict[str, tuple[str, str]],
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

    # -- verify, remove ------------------------------------------------------------------------

    def verify(self, model_id: str, *, progress: ProgressCallback | None = None,
               cancel: threading.Event | None = None) -> VerifyReport:
        """Re-hash every file against the manifest (works offline); records the outcome."""
        target = self.folder_for(model_id)
        doc, folder, linked = self.manifest(model_id), target, False
        if doc is None:
            link = self.links().get(model_id)
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


# ---------------------------------------------------------------------------------------------
# module-level helpers used by the manager


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


def _hash_file(path: Path, meter: _Meter | None = None, fetched: bool = False) -> str:
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
