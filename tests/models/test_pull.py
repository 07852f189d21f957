"""Pulling from the (fake) hub: files, checksums, progress, space, cancel, resume, failures."""

from __future__ import annotations

import hashlib
import json
import shutil
import threading
from collections import namedtuple
from pathlib import Path

import pytest

from marlin_desk.core.errors import BadInput, Cancelled, ModelUnavailable
from marlin_desk.engine import loader
from marlin_desk.models import (
    MANIFEST,
    PARTIAL_DIR,
    ModelManager,
    NotEnoughSpace,
    Progress,
)

from .conftest import MODEL, FakeHub, model_files

WEIGHTS = ("model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors")


def test_pull_fetches_only_safe_files_and_records_checksums(hub: FakeHub,
                                                            manager: ModelManager) -> None:
    files = model_files()
    commit = hub.add(MODEL, files)
    st = manager.pull(MODEL)
    folder = manager.folder_for(MODEL)
    assert st.state == "verified" and st.folder == folder and st.commit == commit
    got = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())
    assert got == sorted(["config.json", "tokenizer.json", "chat_template.jinja", "merges.txt",
                          *WEIGHTS, MANIFEST])  # no .bin, .pt, .py, dot files
    manifest = json.loads((folder / MANIFEST).read_text())
    assert manifest["complete"] and manifest["commit"] == commit and manifest["revision"] == "main"
    for name, rec in manifest["files"].items():
        assert rec == {"size": len(files[name]), "sha256": hashlib.sha256(files[name]).hexdigest()}
    assert not (folder / PARTIAL_DIR).exists()
    assert st.size_on_disk == sum(rec["size"] for rec in manifest["files"].values())


def test_loader_locate_prefers_the_pulled_folder(hub: FakeHub, manager: ModelManager,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    hub.add(MODEL, model_files())
    monkeypatch.setenv("MARLIN_DESK_DATA", str(manager.root.parent))
    ModelManager().pull(MODEL)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert loader.locate(MODEL) == manager.folder_for(MODEL)
    commit = manager.status(MODEL).commit
    assert commit and loader.locate(MODEL, revision=commit[:10]) == manager.folder_for(MODEL)
    with pytest.raises(ModelUnavailable):  # another revision is not the pulled one
        loader.locate(MODEL, revision="v9")


def test_second_pull_downloads_nothing(hub: FakeHub, manager: ModelManager) -> None:
    hub.add(MODEL, model_files())
    manager.pull(MODEL)
    hub.requests.clear()
    events: list[Progress] = []
    st = manager.pull(MODEL, progress=events.append)
    assert st.state == "verified" and hub.requests == []
    assert events[-1].phase == "done" and events[-1].fraction == 1.0


def test_progress_is_monotonic_and_ends_at_100_percent(hub: FakeHub,
                                                       manager: ModelManager) -> None:
    files = model_files(weights=2_000_000)
    hub.add(MODEL, files)
    events: list[Progress] = []
    manager.pull(MODEL, progress=events.append)
    done = [e.bytes_done for e in events]
    assert done == sorted(done) and len(events) > 3
    total = sum(len(d) for n, d in files.items()
                if n.endswith((".json", ".safetensors", ".jinja", ".txt")) and n[0] != ".")
    assert all(e.bytes_total == total for e in events)
    assert events[-1].phase == "done" and events[-1].bytes_done == total
    assert events[-1].fraction == 1.0 and events[-1].files_done == events[-1].files_total == 6
    assert {e.file for e in events if e.phase == "download"} >= set(WEIGHTS)


def test_progress_reports_speed_and_eta() -> None:
    from marlin_desk.models.progress import _Meter

    clock = iter(float(t) for t in range(100))
    events: list[Progress] = []
    meter = _Meter("a/b", "download", 1, 1000, events.append, None, interval=0.0)
    import marlin_desk.models.progress as models

    real = models.time.monotonic
    models.time.monotonic = lambda: next(clock)  # type: ignore[assignment]
    try:
        meter.start_file("w.safetensors", "download")
        for _ in range(4):
            meter.add(100)
    finally:
        models.time.monotonic = real  # type: ignore[assignment]
    last = events[-1]
    assert last.speed_bps == pytest.approx(100.0)  # 100 bytes per (fake) second
    assert last.eta_s == pytest.approx((1000 - 400) / 100.0)


def test_disk_space_check_refuses_before_downloading(hub: FakeHub, manager: ModelManager,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    hub.add(MODEL, model_files())
    usage = namedtuple("usage", "total used free")
    monkeypatch.setattr(shutil, "disk_usage", lambda path: usage(10**9, 10**9 - 1000, 1000))
    with pytest.raises(NotEnoughSpace, match="not enough free space") as err:
        manager.pull(MODEL)
    assert err.value.exit_code == 3
    assert hub.requests == [] and manager.status(MODEL).state == "not-downloaded"


def test_cancel_mid_download_leaves_no_model_and_resume_continues(hub: FakeHub,
                                                                  manager: ModelManager) -> None:
    files = model_files(weights=1_000_000)
    hub.add(MODEL, files)
    cancel = threading.Event()
    big = WEIGHTS[1]

    def stop_halfway(name: str, offset: int) -> None:
        if name == big and offset >= 400_000:
            cancel.set()

    hub.on_chunk = stop_halfway
    with pytest.raises(Cancelled):
        manager.pull(MODEL, cancel=cancel)
    folder = manager.folder_for(MODEL)
    part = folder / PARTIAL_DIR / (big + ".part")
    assert not (folder / MANIFEST).exists()
    assert manager.status(MODEL).state == "partial"
    assert manager.installed_folder(MODEL) is None
    kept = part.stat().st_size
    assert 0 < kept < len(files[big])  # the partial file is kept for the resume

    hub.on_chunk, hub.requests = None, []
    events: list[Progress] = []
    st = manager.pull(MODEL, progress=events.append)
    assert st.state == "verified"
    assert hub.fetched(big) == [kept]  # continued where it stopped, not from zero
    assert hub.fetched(WEIGHTS[0]) == []  # the finished shard was kept
    assert (folder / big).read_bytes() == files[big]
    done = [e.bytes_done for e in events]
    assert done == sorted(done) and events[-1].fraction == 1.0


def test_a_partial_file_left_by_a_crash_is_continued(hub: FakeHub, manager: ModelManager) -> None:
    files = model_files()
    hub.add(MODEL, files)
    part = manager.folder_for(MODEL) / PARTIAL_DIR / (WEIGHTS[0] + ".part")
    part.parent.mkdir(parents=True)
    part.write_bytes(files[WEIGHTS[0]][:12345])
    manager.pull(MODEL)
    assert hub.fetched(WEIGHTS[0]) == [12345]
    assert (manager.folder_for(MODEL) / WEIGHTS[0]).read_bytes() == files[WEIGHTS[0]]


def test_a_partial_file_with_wrong_bytes_is_caught_and_fetched_again(
        hub: FakeHub, manager: ModelManager) -> None:
    files = model_files()
    hub.add(MODEL, files)
    part = manager.folder_for(MODEL) / PARTIAL_DIR / (WEIGHTS[0] + ".part")
    part.parent.mkdir(parents=True)
    part.write_bytes(b"\0" * 5000)
    assert manager.pull(MODEL).state == "verified"
    assert hub.fetched(WEIGHTS[0]) == [5000, 0]  # the resumed result failed its sha256
    assert (manager.folder_for(MODEL) / WEIGHTS[0]).read_bytes() == files[WEIGHTS[0]]


def test_hub_serving_bad_bytes_never_yields_a_model(hub: FakeHub, manager: ModelManager) -> None:
    hub.add(MODEL, model_files())
    hub.corrupt.add(WEIGHTS[1])
    with pytest.raises(ModelUnavailable, match="checksum"):
        manager.pull(MODEL)
    assert manager.installed_folder(MODEL) is None
    assert not (manager.folder_for(MODEL) / WEIGHTS[1]).exists()


def test_repo_without_safetensors_is_refused(hub: FakeHub, manager: ModelManager) -> None:
    hub.add("someone/pickled", {"config.json": b"{}", "pytorch_model.bin": b"PICKLE"})
    with pytest.raises(BadInput, match="no safetensors"):
        manager.pull("someone/pickled")
    assert hub.requests == []


def test_network_failure_is_model_unavailable_with_the_fix(hub: FakeHub,
                                                           manager: ModelManager) -> None:
    import httpx2

    hub.fail = httpx2.ConnectError("Name or service not known")
    with pytest.raises(ModelUnavailable) as err:
        manager.pull(MODEL)
    message = str(err.value)
    assert "\n" not in message and f"marlin-desk models pull {MODEL}" in message
    assert str(manager.folder_for(MODEL)) in message


def test_unknown_repo_is_bad_input(hub: FakeHub, manager: ModelManager) -> None:
    with pytest.raises(BadInput, match="no model"):
        manager.pull("nobody/nothing")


def test_offline_pull_of_a_downloaded_model_is_fine(hub: FakeHub, manager: ModelManager,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    hub.add(MODEL, model_files())
    manager.pull(MODEL)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    hub.requests.clear()
    assert manager.pull(MODEL).state == "verified" and hub.requests == []
    with pytest.raises(ModelUnavailable, match="offline"):
        manager.pull("NemoStation/Marlin-2B-GPTQ")


def test_repull_at_a_new_commit_replaces_changed_files_only(hub: FakeHub,
                                                            manager: ModelManager) -> None:
    files = model_files()
    hub.add(MODEL, files)
    manager.pull(MODEL)
    changed = dict(files)
    changed["config.json"] = b'{"model_type": "qwen3_5", "v": 2}'
    del changed[WEIGHTS[1]]
    hub.repos[MODEL] = ("f" * 40, changed)
    hub.requests.clear()
    st = manager.pull(MODEL)
    folder = manager.folder_for(MODEL)
    assert st.commit == "f" * 40 and st.state == "verified"
    assert [f for f, _ in hub.requests] == ["config.json"]
    assert not (folder / WEIGHTS[1]).exists()  # gone from the new commit: removed


@pytest.mark.parametrize("bad", ["../etc", "a/../b", "a--b/c", "/abs/path", "noslash", ".x/y"])
def test_ids_that_could_escape_the_models_folder_are_refused(manager: ModelManager,
                                                             bad: str) -> None:
    with pytest.raises(BadInput):
        manager.folder_for(bad)


def test_folder_layout(manager: ModelManager) -> None:
    assert manager.folder_for(MODEL) == manager.root / "NemoStation--Marlin-2B"
    assert isinstance(manager.folder_for(MODEL), Path)
