"""Folders brought by hand (`pull --from`), verify, remove, list and where: no hub involved."""

from __future__ import annotations

import hashlib
import json
import threading
from pathlib import Path

import pytest

from marlin_desk.core.errors import BadInput, Cancelled, ModelUnavailable
from marlin_desk.engine import loader
from marlin_desk.models import (
    CATALOGUE,
    DEFAULT_MODEL,
    LINKS_FILE,
    MANIFEST,
    ModelManager,
    Progress,
)

from .conftest import MODEL, FakeHub, model_files, write_folder

SAFE = {"config.json", "tokenizer.json", "chat_template.jinja", "merges.txt",
        "model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"}


@pytest.fixture
def usb(tmp_path: Path) -> Path:
    """A folder someone copied from another machine, with the pickles and code a repo has."""
    return write_folder(tmp_path / "usb" / "Marlin-2B", model_files())


def _files(folder: Path) -> set[str]:
    return {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()}


def test_pull_from_folder_copies_only_safe_files(usb: Path, manager: ModelManager) -> None:
    events: list[Progress] = []
    st = manager.pull_from_folder(usb, MODEL, progress=events.append)
    folder = manager.folder_for(MODEL)
    assert st.source == "pulled" and st.folder == folder
    assert st.state == "downloaded"  # complete, but nothing independent vouched for the bytes
    assert _files(folder) == SAFE | {MANIFEST}
    for name in SAFE:
        assert (folder / name).read_bytes() == (usb / name).read_bytes()
    assert events[-1].phase == "done" and events[-1].fraction == 1.0
    assert [e.bytes_done for e in events] == sorted(e.bytes_done for e in events)
    assert (usb / "pytorch_model.bin").exists()  # the source is left alone
    assert manager.verify(MODEL).ok


def test_pull_from_a_folder_pulled_elsewhere_keeps_its_checksums(
        hub: FakeHub, tmp_path: Path, usb: Path) -> None:
    hub.add(MODEL, model_files())
    online = ModelManager(tmp_path / "connected" / "models")
    online.pull(MODEL)
    offline = ModelManager(tmp_path / "here" / "models")
    st = offline.pull_from_folder(online.folder_for(MODEL), MODEL)
    assert st.state == "verified" and st.commit == online.status(MODEL).commit


def test_the_printed_folder_copied_to_the_same_place_just_works(
        hub: FakeHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import shutil

    hub.add(MODEL, model_files())
    online = ModelManager(tmp_path / "connected" / "models")
    online.pull(MODEL)
    here = ModelManager(tmp_path / "here" / "models")
    shutil.copytree(online.folder_for(MODEL), here.folder_for(MODEL))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert here.status(MODEL).state == "verified"
    assert here.installed_folder(MODEL) == here.folder_for(MODEL)
    assert here.verify(MODEL).ok


def test_damaged_copy_is_caught_against_its_manifest(hub: FakeHub, tmp_path: Path) -> None:
    hub.add(MODEL, model_files())
    online = ModelManager(tmp_path / "connected" / "models")
    online.pull(MODEL)
    src = online.folder_for(MODEL)
    weights = src / "model-00001-of-00002.safetensors"
    data = bytearray(weights.read_bytes())
    data[100] ^= 1
    weights.write_bytes(bytes(data))
    here = ModelManager(tmp_path / "here" / "models")
    with pytest.raises(BadInput, match="damaged"):
        here.pull_from_folder(src, MODEL)
    assert here.installed_folder(MODEL) is None


def test_hf_download_local_dir_metadata_is_used_as_reference(usb: Path,
                                                             manager: ModelManager) -> None:
    meta = usb / ".cache" / "huggingface" / "download"
    meta.mkdir(parents=True)
    for name in SAFE:
        data = (usb / name).read_bytes()
        etag = hashlib.sha256(data).hexdigest() if name.endswith(".safetensors") else \
            hashlib.sha1(f"blob {len(data)}\0".encode() + data).hexdigest()
        (meta / (name + ".metadata")).write_text(f"{'c' * 40}\n{etag}\n1700000000.0\n")
    st = manager.pull_from_folder(usb, MODEL)
    assert st.state == "verified" and st.commit == "c" * 40
    assert ".cache/huggingface/download/config.json.metadata" not in _files(st.folder)


@pytest.mark.parametrize("drop", ["config.json", "weights", "one shard"])
def test_incomplete_folders_are_refused(tmp_path: Path, manager: ModelManager, drop: str) -> None:
    files = model_files()
    if drop == "config.json":
        del files["config.json"]
    elif drop == "weights":
        files = {n: d for n, d in files.items() if not n.endswith(".safetensors")}
    else:
        files["model.safetensors.index.json"] = json.dumps({"weight_map": {
            "a": "model-00001-of-00002.safetensors", "b": "model-00003-of-00003.safetensors",
        }}).encode()
    src = write_folder(tmp_path / "src", files)
    with pytest.raises(BadInput):
        manager.pull_from_folder(src, MODEL)
    assert manager.status(MODEL).state == "not-downloaded"


def test_cancelled_copy_is_not_a_model(usb: Path, manager: ModelManager) -> None:
    cancel = threading.Event()

    def stop(p: Progress) -> None:
        if p.bytes_done > 0:
            cancel.set()

    with pytest.raises(Cancelled):
        manager.pull_from_folder(usb, MODEL, progress=stop, cancel=cancel)
    assert manager.status(MODEL).state == "partial"
    assert manager.installed_folder(MODEL) is None


def test_linked_folder_is_used_in_place_and_never_deleted(usb: Path,
                                                          manager: ModelManager) -> None:
    st = manager.pull_from_folder(usb, MODEL, link=True)
    assert st.source == "linked" and st.folder == usb and st.state == "downloaded"
    assert not manager.folder_for(MODEL).exists()
    assert manager.installed_folder(MODEL) == usb
    assert manager.verify(MODEL).ok
    assert manager.remove(MODEL) == usb
    assert usb.is_dir() and (usb / "config.json").is_file()  # forgotten, not deleted
    assert MODEL not in json.loads((manager.root / LINKS_FILE).read_text())


def test_verify_detects_a_corrupted_file(usb: Path, manager: ModelManager) -> None:
    manager.pull_from_folder(usb, MODEL)
    weights = manager.folder_for(MODEL) / "model-00002-of-00002.safetensors"
    data = bytearray(weights.read_bytes())
    data[len(data) // 2] ^= 0x55
    weights.write_bytes(bytes(data))  # same size: only the hash can tell
    report = manager.verify(MODEL)
    assert not report.ok
    assert report.problems == [{"file": weights.name, "problem": "sha256 mismatch"}]
    assert manager.status(MODEL).state == "damaged"
    assert manager.installed_folder(MODEL) is None


def test_verify_detects_missing_and_truncated_files(usb: Path, manager: ModelManager) -> None:
    manager.pull_from_folder(usb, MODEL)
    folder = manager.folder_for(MODEL)
    (folder / "merges.txt").unlink()
    (folder / "tokenizer.json").write_bytes(b"{}")
    problems = {p["file"]: p["problem"] for p in manager.verify(MODEL).problems}
    assert problems["merges.txt"] == "missing" and problems["tokenizer.json"].startswith("size")


def test_verify_of_a_model_not_downloaded_is_model_unavailable(manager: ModelManager) -> None:
    with pytest.raises(ModelUnavailable, match="models pull"):
        manager.verify(MODEL)


def test_remove_deletes_only_inside_the_models_folder(usb: Path, tmp_path: Path,
                                                      manager: ModelManager) -> None:
    manager.pull_from_folder(usb, MODEL)
    for outside in (usb, tmp_path, manager.root, manager.root / ".." / "usb"):
        with pytest.raises(BadInput, match="refusing"):
            manager.remove(str(outside))
    assert usb.is_dir() and manager.folder_for(MODEL).is_dir()
    escape = manager.root / "Evil--Link"
    escape.symlink_to(usb, target_is_directory=True)
    with pytest.raises(BadInput, match="refusing"):
        manager.remove("Evil/Link")
    with pytest.raises(BadInput, match="refusing"):
        manager.remove(str(escape))
    assert (usb / "config.json").is_file()
    assert manager.remove(MODEL) == manager.folder_for(MODEL)
    assert not manager.folder_for(MODEL).exists()
    assert manager.remove(MODEL) is None  # nothing left: not an error


def test_list_shows_catalogue_and_local_models(usb: Path, tmp_path: Path,
                                               manager: ModelManager) -> None:
    manager.pull_from_folder(usb, "someone/Marlin-2B-finetune")
    other = write_folder(tmp_path / "mine", model_files(weights=1000))
    manager.pull_from_folder(other, "me/my-marlin", link=True)
    rows = {r.id: r for r in manager.list_models()}
    assert [r.id for r in manager.list_models()][:len(CATALOGUE)] == [e.id for e in CATALOGUE]
    assert rows[DEFAULT_MODEL].state == "not-downloaded" and rows[DEFAULT_MODEL].entry.default
    assert rows["someone/Marlin-2B-finetune"].state == "downloaded"
    assert rows["someone/Marlin-2B-finetune"].size_on_disk > 1_000_000
    assert rows["me/my-marlin"].source == "linked" and rows["me/my-marlin"].folder == other


def test_where_and_status(usb: Path, manager: ModelManager) -> None:
    st = manager.status(MODEL)
    assert st.folder is None and st.target == manager.folder_for(MODEL)
    manager.pull_from_folder(usb, MODEL)
    st = manager.status(MODEL)
    assert st.folder == st.target and json.loads(json.dumps(st.to_json()))["usable"]


def test_catalogue() -> None:
    ids = [e.id for e in CATALOGUE]
    assert ids == ["NemoStation/Marlin-2B", "NemoStation/Marlin-2B-GPTQ",
                   "prasannaJagadesh/marlin-2B-GPTQ-4BITS", "tintwotin/Marlin-2B-SDNQ-int8",
                   "junwatu/Marlin-2B-MLX-8bit"]
    assert DEFAULT_MODEL == loader.DEFAULT_MODEL == "NemoStation/Marlin-2B"
    assert all(e.revision and e.size_gb > 0 and e.backend for e in CATALOGUE)
    assert {e.variant for e in CATALOGUE} == {"bf16", "gptq", "sdnq", "mlx"}


def test_no_remote_code_and_no_pickles_anywhere() -> None:
    package = Path(loader.__file__).resolve().parents[1]
    for source in package.rglob("*.py"):
        text = source.read_text(encoding="utf-8")
        assert "trust_remote_code=True" not in text.replace(" ", ""), source
