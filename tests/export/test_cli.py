"""`marlin-desk export` and `marlin-desk subtitles` end to end (in process)."""

from __future__ import annotations

import json
from pathlib import Path

import pysubs2
import pytest

from marlin_desk.cli.export_cmd import parse_clip, parse_time
from marlin_desk.cli.main import main
from marlin_desk.core.errors import BadInput

from .conftest import Videos

EVENTS = {"events": [{"start": 0.0, "end": 12.0, "description": "Teams walk out"},
                     {"start": 14.5, "end": 20.0, "description": "Kick-off"},
                     {"start": 31.0, "end": 40.0, "description": "First goal"}]}
FIND = {"queries": [{"query": "goal", "spans": [
    {"start": 1.0, "end": 1.5, "score": 0.4, "window": 0},
    {"start": 3.0, "end": 3.5, "score": 0.9, "window": 0},
    {"start": 5.0, "end": 5.5, "score": None, "window": 0}]}]}


@pytest.fixture()
def events_json(tmp_path: Path) -> Path:
    p = tmp_path / "analysis.json"
    p.write_text(json.dumps(EVENTS))
    return p


def test_export_clips_as_json(videos: Videos, out_dir: Path, events_json: Path, capsys) -> None:
    rc = main(["export", str(videos.main), "--clip", "0.5-1.5", "--clip", "0:02-0:02.5",
               "--subtitles", "srt", "--events", str(events_json), "--out", str(out_dir),
               "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert rc == 0 and doc["ffmpeg"]["source"] in ("system", "bundled", "env")
    clips = doc["clips"]
    assert [c["status"] for c in clips] == ["done", "done"]
    assert clips[0]["description"] == "Teams walk out"
    assert Path(clips[0]["path"]).name == "main_01_00m00.500s-00m01.500s_teams-walk-out.mp4"
    subs = pysubs2.load(clips[1]["subtitle_path"])
    assert [(e.start, e.end, e.plaintext) for e in subs] == [(0, 520, "Teams walk out")]


def test_export_from_find_takes_the_best_spans(videos: Videos, out_dir: Path, tmp_path: Path,
                                               capsys) -> None:
    find = tmp_path / "find.json"
    find.write_text(json.dumps(FIND))
    rc = main(["export", str(videos.main), "--from-find", "goal", "--top", "2",
               "--find-json", str(find), "--mode", "fast", "--out", str(out_dir), "--json"])
    clips = json.loads(capsys.readouterr().out)["clips"]
    assert rc == 0 and [(c["start"], c["description"]) for c in clips] == [(3.0, "goal"),
                                                                          (1.0, "goal")]
    assert clips[0]["real_start"] == 2.0 and clips[1]["real_start"] == 0.0


def test_missing_analysis_is_a_plain_usage_error(videos: Videos, out_dir: Path, capsys) -> None:
    rc = main(["export", str(videos.main), "--clip", "1-2", "--subtitles", "srt",
               "--out", str(out_dir)])
    assert rc == 2
    assert "run `marlin-desk analyze VIDEO` first or pass --events FILE" in capsys.readouterr().err
    rc = main(["export", str(videos.main), "--from-find", "goal", "--out", str(out_dir)])
    assert rc == 2 and "--find-json" in capsys.readouterr().err
    rc = main(["export", str(videos.main), "--clip", "2-1"])
    assert rc == 2 and "end must be after" in capsys.readouterr().err
    rc = main(["export", str(videos.main), "--clip", "1-2", "--preset", "reels", "--mode",
               "fast", "--out", str(out_dir)])
    assert rc == 2 and "exact mode" in capsys.readouterr().err
    assert list(out_dir.iterdir()) == []


def test_subtitles_command(videos: Videos, tmp_path: Path, events_json: Path, capsys) -> None:
    out = tmp_path / "all.vtt"
    rc = main(["subtitles", str(videos.long), "--format", "vtt", "--events", str(events_json),
               "--out", str(out)])
    assert rc == 0 and capsys.readouterr().out.strip() == str(out)
    subs = pysubs2.load(str(out))
    # The 12 s event is split (at most 7 s a cue); numbering is 1..n.
    assert [e.plaintext for e in subs] == ["Teams walk out", "Teams walk out", "Kick-off",
                                           "First goal", "First goal"]
    assert max(e.end - e.start for e in subs) <= 7000


def test_chapters_command(videos: Videos, events_json: Path, capsys) -> None:
    rc = main(["subtitles", str(videos.long), "--format", "chapters", "--events",
               str(events_json), "--out", "-"])
    assert rc == 0
    assert capsys.readouterr().out == "0:00 Teams walk out\n0:14 Kick-off\n0:31 First goal\n"


def test_chapters_need_enough_events(videos: Videos, tmp_path: Path, capsys) -> None:
    few = tmp_path / "few.json"
    few.write_text(json.dumps({"events": EVENTS["events"][:2]}))
    rc = main(["subtitles", str(videos.long), "--format", "chapters", "--events", str(few)])
    assert rc == 2 and "at least 3" in capsys.readouterr().err


@pytest.mark.parametrize(("text", "seconds"), [("12.5", 12.5), ("1:02.5", 62.5),
                                               ("1:00:03", 3603.0), (".5", 0.5)])
def test_parse_time(text: str, seconds: float) -> None:
    assert parse_time(text) == seconds


@pytest.mark.parametrize("bad", ["12", "a-b", "5-5", "1:2:3:4-5", "-1-2"])
def test_parse_clip_rejects(bad: str) -> None:
    with pytest.raises(BadInput):
        parse_clip(bad)


def test_bad_events_file_is_a_plain_error(videos: Videos, tmp_path: Path, capsys) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    assert main(["subtitles", str(videos.long), "--events", str(bad)]) == 2
    assert "not valid JSON" in capsys.readouterr().err
    bad.write_text(json.dumps({"events": [{"start": 1}]}))
    assert main(["subtitles", str(videos.long), "--events", str(bad)]) == 2
    assert "lacks start, end or description" in capsys.readouterr().err
