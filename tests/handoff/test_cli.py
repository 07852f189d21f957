"""`marlin-desk handoff` end to end (in process) and `handoff_export.write_timeline`: where
the clips come from, never overwriting, the targets defined once."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import opentimelineio as otio
import pytest

from marlin_desk.cli.main import build_parser, main
from marlin_desk.core import project as projfile
from marlin_desk.core.project import Clip, Project
from marlin_desk.core.timeline import Event
from marlin_desk.handoff import TARGET_NAMES
from marlin_desk.handoff_export import write_timeline
from tests.handoff.conftest import SOURCES, Source

pytestmark = pytest.mark.timeout(120)

SRC = SOURCES[0]  # 25 fps, no timecode


@pytest.fixture
def video(tmp_path: Path, source_files: Callable[[Source], Path]) -> Path:
    """A private copy (a project file is written beside it)."""
    copy = tmp_path / "shoot.mp4"
    copy.write_bytes(source_files(SRC).read_bytes())
    return copy


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict]:
    rc = main(["handoff", *argv, "--json"])
    out = capsys.readouterr().out
    return rc, json.loads(out) if rc == 0 else {}


def test_choices_come_from_the_target_list() -> None:
    sub = next(a for a in build_parser()._actions if a.dest == "command")
    to = next(a for a in sub.choices["handoff"]._actions if a.dest == "target")
    assert tuple(to.choices) == TARGET_NAMES


def test_clips_from_the_command_line_and_never_overwrite(
        tmp_path: Path, video: Path, capsys: pytest.CaptureFixture[str]) -> None:
    events = tmp_path / "analysis.json"
    events.write_text(json.dumps({"events": [{"start": 0.5, "end": 0.7, "description": "a"}]}))
    out = tmp_path / "cut.otio"
    out.write_text("keep me")
    rc, doc = _run(capsys, str(video), "--to", "otio", "--clip", "0.2-0.6", "--clip", "1-1.4",
                   "--events", str(events), "--out", str(out))
    assert rc == 0 and doc["clips_from"] == "--clip"
    assert doc["path"] == str(tmp_path / "cut (2).otio") and out.read_text() == "keep me"
    assert [(c["in_frame"], c["out_frame"]) for c in doc["clips"]] == [(5, 15), (25, 35)]
    assert doc["markers"] == 1 and doc["frame_rate"] == "25/1"
    timeline = otio.adapters.read_from_file(doc["path"])
    assert [m.name for c in timeline.find_clips() for m in c.markers] == ["a"]
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temp file left


def test_clips_from_the_saved_project_with_its_edited_events(
        video: Path, capsys: pytest.CaptureFixture[str]) -> None:
    proj = Project(video=str(video), events=[Event(1.0, 1.2, "edited «event»")],
                   clips=[Clip(0.8, 1.6, "from the bin")])
    projfile.save(proj, video.with_suffix(projfile.SUFFIX))
    rc, doc = _run(capsys, str(video), "--to", "resolve-markers")
    assert rc == 0 and doc["clips_from"] == "project"
    assert doc["path"] == str(video.with_name("shoot.resolve-markers.edl"))
    assert [c["name"] for c in doc["clips"]] == ["from the bin"]
    assert "|M:edited «event» |D:5" in Path(doc["path"]).read_text(encoding="utf-8")


def test_events_become_clips_without_a_bin(
        tmp_path: Path, video: Path, capsys: pytest.CaptureFixture[str]) -> None:
    events = tmp_path / "analysis.json"
    events.write_text(json.dumps({"events": [
        {"start": 1.0, "end": 1.5, "description": "second"},
        {"start": 0.1, "end": 0.5, "description": "first"}]}))
    rc, doc = _run(capsys, str(video), "--to", "fcpx", "--events", str(events),
                   "--out", str(tmp_path))
    assert rc == 0 and doc["clips_from"] == "events"
    assert [(c["name"], c["in_frame"], c["out_frame"], c["markers"]) for c in doc["clips"]] == [
        ("first", 3, 13, 1), ("second", 25, 38, 1)]
    assert Path(doc["path"]).parent == tmp_path


def test_nothing_to_hand_off_is_one_plain_line(
        video: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["handoff", str(video), "--to", "edl"]) == 2
    assert "no clips to hand off" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exit_:
        main(["handoff", str(video), "--to", "avid"])
    assert exit_.value.code == 2


def test_write_timeline_for_the_app(tmp_path: Path, video: Path) -> None:
    first = write_timeline(str(video), "premiere", tmp_path / "x.xml", clips=[Clip(0, 1)])
    second = write_timeline(str(video), "premiere", tmp_path / "x.xml", clips=[Clip(0, 1)])
    assert (first.path.name, second.path.name) == ("x.xml", "x (2).xml")
    assert first.path.read_bytes() == second.path.read_bytes()
