"""`export` and `subtitles` with --transcript, --source and --captions, end to end in process."""

from __future__ import annotations

import json
from pathlib import Path

import pysubs2
import pytest

from marlin_desk.cli.main import main

from .conftest import Talking

EVENTS = {"events": [{"start": 0.0, "end": 3.0, "description": "A dark screen"},
                     {"start": 3.0, "end": 8.0, "description": "Still a dark screen"}]}


@pytest.fixture()
def files(talking: Talking, tmp_path: Path) -> tuple[Path, Path]:
    transcript, events = tmp_path / "transcript.json", tmp_path / "analysis.json"
    transcript.write_text(json.dumps(talking.transcript.to_json()))
    events.write_text(json.dumps(EVENTS))
    return transcript, events


def test_subtitles_default_to_speech_with_a_transcript(talking: Talking, files, tmp_path: Path,
                                                       capsys) -> None:
    transcript, _ = files
    out = tmp_path / "talk.srt"
    assert main(["subtitles", str(talking.video), "--transcript", str(transcript), "--out",
                 str(out), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["source"] == "speech" and doc["path"] == str(out)
    subs = pysubs2.load(str(out))
    said = " ".join(e.plaintext.replace("\n", " ") for e in subs)
    assert said == talking.transcript.text
    assert subs[0].start == round(talking.transcript.words[0].start * 1000)


def test_subtitles_from_both_are_two_files(talking: Talking, files, tmp_path: Path,
                                           capsys) -> None:
    transcript, events = files
    assert main(["subtitles", str(talking.video), "--transcript", str(transcript), "--events",
                 str(events), "--source", "both", "--format", "vtt", "--out", str(tmp_path),
                 "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    paths = [Path(f["path"]) for f in doc["files"]]
    assert [p.name for p in paths] == ["talking.vtt", "talking.events.vtt"]
    assert [e.plaintext for e in pysubs2.load(str(paths[1]))] == [
        "A dark screen", "Still a dark screen"]


def test_speech_without_a_transcript_is_a_plain_error(talking: Talking, files, capsys) -> None:
    _, events = files
    assert main(["subtitles", str(talking.video), "--events", str(events), "--source",
                 "speech"]) == 2
    assert "--source speech needs a transcript" in capsys.readouterr().err
    assert main(["export", str(talking.video), "--clip", "0-1", "--captions", "bold"]) == 2
    assert "needs a transcript" in capsys.readouterr().err


def test_export_with_captions_and_both_tracks(talking: Talking, files, tmp_path: Path,
                                              capsys) -> None:
    transcript, events = files
    out = tmp_path / "clips"
    assert main(["export", str(talking.video), "--clip", "0.5-2.5", "--preset", "reels",
                 "--captions", "pop", "--subtitles", "srt", "--source", "both", "--speed",
                 "superfast", "--transcript", str(transcript), "--events", str(events),
                 "--out", str(out), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    (clip,) = doc["clips"]
    assert doc["subtitle_source"] == "both" and clip["captions"] == "pop"
    assert clip["status"] == "done" and clip["mode_used"] == "exact"
    speech, seen = (Path(p) for p in clip["subtitle_paths"])
    assert speech.name == Path(clip["path"]).with_suffix(".srt").name
    assert seen.name.endswith(".events.srt")
    first = pysubs2.load(str(speech))[0]
    assert first.start < 400  # the words said from the clip's start (0.5 s) on
    assert pysubs2.load(str(seen))[0].plaintext == "A dark screen"
