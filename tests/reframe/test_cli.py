"""`marlin-desk export --reframe` end to end (in process): the JSON report, burned subtitles
in a reframed clip, and the modes' choices."""

from __future__ import annotations

import json
from pathlib import Path

import av
import pytest

from marlin_desk.cli.main import main
from marlin_desk.paths import cache_dir

from .conftest import Footage


def test_export_reports_shots_subjects_and_pins(footage: Footage, tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    video, _ = footage("two_shots")
    events = tmp_path / "analysis.json"
    events.write_text(json.dumps({"events": [
        {"start": 0.0, "end": 2.5, "description": "The astronaut looks at the camera"}]}))
    rc = main(["export", str(video), "--clip", "0-3", "--preset", "reels", "--encoder", "x264",
               "--subtitles", "burn", "--events", str(events), "--out", str(tmp_path / "out"),
               "--json"])
    captured = capsys.readouterr()
    doc = json.loads(captured.out)
    assert rc == 0
    (clip,) = doc["clips"]
    reframe = clip["reframe"]
    assert reframe["mode"] == "auto" and reframe["applied"]
    assert reframe["shots"] == 2 and reframe["shots_with_subject"] == 2
    assert reframe["pins"] == [] and reframe["detector"].startswith("yuface")
    assert "reframed, 2 shot(s), 2 with a subject" in captured.err
    with av.open(clip["path"]) as container:
        stream = container.streams.video[0]
        assert (stream.width, stream.height) == (1080, 1920)
    assert list((cache_dir() / "reframe").glob("*.json"))  # the detections were cached


def test_off_and_centre_and_bad_choices(footage: Footage, tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    video, _ = footage("still")
    for mode, expected in (("off", None), ("centre", "centre")):
        rc = main(["export", str(video), "--clip", "0-1", "--preset", "square", "--encoder",
                   "x264", "--reframe", mode, "--out", str(tmp_path / mode), "--json"])
        doc = json.loads(capsys.readouterr().out)
        assert rc == 0
        report = doc["clips"][0]["reframe"]
        assert (report or {}).get("mode") == expected
    rc = main(["export", str(video), "--clip", "0-1", "--encoder", "x264",
               "--out", str(tmp_path / "orig"), "--json"])
    assert rc == 0 and json.loads(capsys.readouterr().out)["clips"][0]["reframe"] is None
    with pytest.raises(SystemExit):
        main(["export", str(video), "--clip", "0-1", "--reframe", "left"])
