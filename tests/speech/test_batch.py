"""`marlin-desk batch --transcribe`: the transcription runs in the batch's queue, after each
video's analysis, and its transcript file sits beside the other results."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from marlin_desk.dev.speech import make_speech_video
from tests.batch.conftest import CAPTION_TOKENS, WINDOW, tiny_model  # noqa: F401 - fixture
from tests.speech.conftest import needs_speech

pytestmark = needs_speech


def test_batch_writes_the_transcript_beside_the_analysis(
        tmp_path: Path, tiny_model: Path, monkeypatch: pytest.MonkeyPatch,  # noqa: F811
        capsys: pytest.CaptureFixture[str]) -> None:
    import dataclasses

    from marlin_desk.cli import batch_cmd
    from marlin_desk.cli.main import main

    monkeypatch.setenv("MARLIN_DESK_CACHE", str(tmp_path / "cache"))
    original = batch_cmd._job_settings
    monkeypatch.setattr(batch_cmd, "_job_settings", lambda args: dataclasses.replace(
        original(args), caption_tokens=CAPTION_TOKENS))
    clip = make_speech_video(tmp_path / "videos" / "talk.mp4", ["our launch date moves"])
    args = ["batch", str(clip.path.parent), "--model", str(tiny_model), "--device", "cpu",
            "--window", str(WINDOW), "--no-chapters", "--transcribe", "--json"]
    assert main(args) == 0
    report = json.loads(capsys.readouterr().out)
    outputs = report["videos"][0]["outputs"]
    doc = json.loads(Path(outputs["transcript"]).read_text())
    assert Path(outputs["transcript"]).name == "talk.transcript.json"
    assert doc["video"] == str(clip.path) and "launch" in doc["segments"][0]["text"].lower()
    assert "seconds" not in doc and "cached" not in doc  # the same bytes on a re-run
    before = Path(outputs["transcript"]).read_bytes()
    assert main(args) == 0  # all cached: nothing new is written
    again = json.loads(capsys.readouterr().out)["videos"][0]["outputs"]["transcript"]
    assert again == outputs["transcript"] and Path(again).read_bytes() == before
