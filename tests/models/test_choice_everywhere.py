"""Every command runs the model `choose_model` picks, and says why: Marlin-2B once it is in the
models folder (here the trained tiny model, registered the way a user brings a folder:
`models pull --from DIR NemoStation/Marlin-2B`), else the bundled demo model with
DEMO_SENTENCE. The commands run in-process (main), the model for real."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from marlin_desk.cli.main import main
from marlin_desk.models import DEFAULT_MODEL, MANIFEST, ModelManager
from marlin_desk.models.choice import DEMO_SENTENCE, choose_model
from marlin_desk.resources import demo_model, demo_video

TRAINED = Path(__file__).resolve().parents[2] / "resources" / "models" / "marlin-tiny-trained"
FROM_FOLDER = "from the models folder"


@pytest.fixture(scope="module")
def pulled_data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A data folder whose models folder holds NemoStation/Marlin-2B, pulled --from the
    trained tiny model's folder (which has no manifest): once for the module."""
    data = tmp_path_factory.mktemp("pulled") / "data"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("MARLIN_DESK_DATA", str(data))
        assert main(["models", "pull", "--from", str(TRAINED), DEFAULT_MODEL, "--json"]) == 0
    return data


@pytest.fixture(scope="module")
def video(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo video (20 s: one 20 s window), alone in a folder for batch."""
    folder = tmp_path_factory.mktemp("videos")
    target = folder / "demo.mp4"
    target.write_bytes(demo_video().read_bytes())
    return target


@pytest.fixture(params=["pulled", "nothing"])
def situation(request: pytest.FixtureRequest, pulled_data: Path, tmp_path: Path,
              monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """The app's data folder: with Marlin-2B pulled, or with nothing; a fresh analysis cache."""
    data = pulled_data if request.param == "pulled" else tmp_path / "data"
    monkeypatch.setenv("MARLIN_DESK_DATA", str(data))
    monkeypatch.setenv("MARLIN_DESK_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # demo sets it; restored after the test
    yield request.param


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[dict[str, Any], str]:
    assert main(list(args)) == 0, capsys.readouterr().err
    out = capsys.readouterr()
    return json.loads(out.out), out.err


def check_engine(engine: dict[str, Any], situation: str, notes: list[str] | str) -> None:
    """The engine's model and why, and the notes, say which model the app chose and why."""
    if situation == "pulled":
        folder = ModelManager().folder_for(DEFAULT_MODEL)
        assert engine["model"] == DEFAULT_MODEL
        assert engine["why"].startswith(f"{DEFAULT_MODEL} {FROM_FOLDER} ({folder})")
        assert f"{DEFAULT_MODEL} {FROM_FOLDER} ({folder})" in notes
        assert DEMO_SENTENCE not in engine["why"]
    else:
        assert Path(engine["model"]) == demo_model()
        assert engine["why"].startswith(DEMO_SENTENCE)
        assert DEMO_SENTENCE in notes
        assert FROM_FOLDER not in engine["why"]


def test_pull_from_a_folder_without_a_manifest_registers_marlin_2b(pulled_data: Path,
                                                                   monkeypatch) -> None:
    monkeypatch.setenv("MARLIN_DESK_DATA", str(pulled_data))
    manager = ModelManager()
    folder = manager.folder_for(DEFAULT_MODEL)
    assert manager.installed_folder(DEFAULT_MODEL) == folder  # a copy, not a link
    manifest = json.loads((folder / MANIFEST).read_text())
    assert manifest["reference"] == "none" and manifest["complete"]
    assert (folder / "model.safetensors").read_bytes() == \
        (TRAINED / "model.safetensors").read_bytes()
    assert not (TRAINED / MANIFEST).exists()  # the source is left alone
    choice = choose_model()
    assert (choice.source, choice.model) == ("pulled", DEFAULT_MODEL)


def test_analyze(situation: str, video: Path, capsys) -> None:
    doc, err = run(capsys, "analyze", str(video), "--window", "20", "--no-cache", "--json")
    check_engine(doc["engine"], situation, doc["notes"])
    assert f"model: {doc['notes'][0]}" in err  # the terminal says it too
    assert len(doc["windows"]) == 1 and doc["events"]  # the chosen model really answered


def test_find(situation: str, video: Path, capsys) -> None:
    doc, _ = run(capsys, "find", str(video), "the red screen", "--window", "20", "--no-cache",
                 "--json")
    check_engine(doc["engine"], situation, doc["notes"])
    assert doc["model"] == doc["engine"]["model"]
    assert doc["queries"][0]["spans"]


def test_demo(situation: str, capsys) -> None:
    doc, _ = run(capsys, "demo", "--json")
    check_engine(doc["engine"], situation, doc["note"])
    assert doc["note"] == f"using {choose_model().why}"
    assert doc["analysis"]["events"] and doc["find"][0]["spans"]


def test_batch(situation: str, video: Path, tmp_path: Path, capsys) -> None:
    doc, _ = run(capsys, "batch", str(video.parent), "--out", str(tmp_path / "out"), "--window",
                 "20", "--no-cache", "--json")
    assert doc["summary"]["done"] == 1
    check_engine(doc["engine"], situation, doc["notes"])
    written = json.loads((tmp_path / "out" / "demo.analysis.json").read_text())
    assert written["model"] == choose_model().model
