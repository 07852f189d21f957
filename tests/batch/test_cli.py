"""`marlin-desk batch`: the JSON document, the exit codes, progress and Ctrl-C."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from marlin_desk.cli.main import main
from marlin_desk.store.cache import AnalysisCache
from tests.batch.conftest import garbage, video

ROOT = Path(__file__).resolve().parents[2]
VIDEO_KEYS = {"video", "status", "seconds", "error", "duration", "windows", "windows_cached",
              "events", "analysis_cached", "outputs", "notes"}


def batch(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    rc = main(["batch", *args])
    out, err = capsys.readouterr()
    return rc, out, err


def model_args(tiny: Path) -> list[str]:
    return ["--model", str(tiny), "--device", "cpu", "--window", "2"]


def test_json_document_and_exit_codes(tiny_model: Path, tmp_path: Path, fast_cli: None,
                                      capsys: pytest.CaptureFixture[str],
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    lib = tmp_path / "my lib"
    good = video(lib / "ok 'one' \"ü\".mp4")
    bad = garbage(lib / "broken.mp4")
    queries = tmp_path / "queries.txt"
    queries.write_text("# looking for\na red frame\n", encoding="utf-8")

    rc, out, err = batch(capsys, str(lib), *model_args(tiny_model), "--queries", str(queries),
                         "--subtitles", "vtt", "--videos-at-once", "2", "--json")
    assert rc == 6, err  # finished, but a video failed
    doc = json.loads(out)
    assert {"videos", "summary", "stopped", "fatal", "videos_at_once", "seconds", "engine",
            "notes"} <= set(doc)
    assert doc["summary"] == {"total": 2, "done": 1, "cached": 0, "failed": 1, "cancelled": 0,
                              "pending": 0}
    assert doc["videos_at_once"] == 1 and any("one video at a time" in n for n in doc["notes"])
    broken, ok = doc["videos"]  # natural order: "broken" before "ok"
    assert set(ok) == VIDEO_KEYS == set(broken)
    assert broken["status"] == "failed" and "not a video file" in broken["error"]
    assert ok["status"] == "done" and ok["error"] is None and ok["video"] == str(good)
    assert set(ok["outputs"]) >= {"analysis", "find"}
    assert all(Path(p).parent == lib for p in ok["outputs"].values())
    assert "[1/2 done] ok 'one' \"ü\".mp4: window 1/1" in err
    assert "failed: " + str(bad) in err and "1 failed" in err

    # Without the bad file everything is already done: exit 0, no model, the paths on stdout.
    bad.unlink()
    monkeypatch.setattr("marlin_desk.engine.backends.load_best", _no_model)
    rc, out, err = batch(capsys, str(lib), *model_args(tiny_model), "--queries", str(queries),
                         "--subtitles", "vtt")
    assert rc == 0, err
    assert out.splitlines() == list(ok["outputs"].values())
    assert "1 already done" in err


def _no_model(*args: Any, **kwargs: Any) -> Any:
    raise AssertionError("the model was loaded although every video is cached")


def test_bad_arguments_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "empty").mkdir()
    assert batch(capsys, str(tmp_path / "empty"))[0] == 2
    assert batch(capsys, str(tmp_path / "missing"))[0] == 2
    v = video(tmp_path / "v.mp4")
    rc, _, err = batch(capsys, str(v), "--queries", str(tmp_path / "none.txt"))
    assert rc == 2 and "cannot read" in err
    rc, _, err = batch(capsys, str(v), "--window", "500")
    assert rc == 2 and "longer than" in err
    assert batch(capsys, str(v), "--videos-at-once", "0")[0] == 2


def test_ctrl_c_stops_cleanly_and_a_rerun_resumes(tiny_model: Path, tmp_path: Path,
                                                  own_cache: Path, fast_cli: None,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    lib = tmp_path / "lib ü"
    video(lib / "v1.mp4")
    video(lib / "v2.mp4", 10.0, colour=(30, 180, 40))
    video(lib / "v3.mp4", colour=(30, 40, 200))
    todo = tmp_path / "todo.txt"
    todo.write_text("# tonight\nlib ü/v1.mp4\nlib ü/v2.mp4\n\nlib ü/v3.mp4\n", encoding="utf-8")
    out_dir = tmp_path / "results"
    args = ["batch", str(todo), *model_args(tiny_model), "--out", str(out_dir), "--json"]
    proc = subprocess.Popen([sys.executable, "-m", "tests.batch.fast_cli", *args], cwd=ROOT,
                            env=dict(os.environ, HF_HUB_OFFLINE="1"), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    db = own_cache / "analyses.sqlite3"
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and proc.poll() is None:
        if db.exists():
            with AnalysisCache(db) as cache:
                entries = cache.entries()
            if any(e.complete for e in entries) and any(
                    not e.complete and e.windows_done >= 1 for e in entries):
                break
        time.sleep(0.1)
    assert proc.poll() is None, "the batch finished before it could be interrupted"
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert "stopped after" in err and "run the same command again" in err
    stopped = json.loads(out)
    statuses = [v["status"] for v in stopped["videos"]]
    assert statuses[0] == "done" and stopped["stopped"] is True
    assert statuses[1:] in (["cancelled", "pending"], ["done", "cancelled"], ["done", "pending"])
    assert not list(out_dir.rglob("*.partial*"))

    rc, out, err = batch(capsys, *args[1:])
    assert rc == 0, err
    doc = json.loads(out)
    assert [v["status"] for v in doc["videos"]] == [
        "cached", "cached" if statuses[1] == "done" else "done", "done"]
    if statuses[1] == "cancelled":
        assert doc["videos"][1]["windows_cached"] >= 1  # the partial video went on
    assert sorted(p.name for p in out_dir.rglob("*.json")) == [
        "v1.analysis.json", "v2.analysis.json", "v3.analysis.json"]
