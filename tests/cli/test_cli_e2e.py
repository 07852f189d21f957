"""The CLI end to end on real videos with the tiny model: the JSON contract, exit codes, cache."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

DATA = Path(__file__).resolve().parents[1] / "data"


def run_cli(*args: str, env_extra: dict[str, str] | None = None,
            cache: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, HF_HUB_OFFLINE="1", **(env_extra or {}))
    if cache is not None:
        env["MARLIN_DESK_CACHE"] = str(cache)
    return subprocess.run([sys.executable, "-m", "marlin_desk", *args], capture_output=True,
                          text=True, env=env, timeout=600)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> str:
    from marlin_desk.dev.tiny_model import build_tiny_model

    return str(build_tiny_model(tmp_path_factory.mktemp("cli-tiny")))


def test_probe_contract() -> None:
    out = run_cli("probe", str(DATA / "bikes.mp4"), "--json")
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert {"duration", "width", "height", "fps", "rotation", "has_audio", "start_time"} <= set(doc)
    assert (doc["width"], doc["height"]) == (640, 272)
    assert doc["duration"] == pytest.approx(10.0, abs=0.1)


@pytest.mark.parametrize("name", ["bigbuckbunny.mp4", "bikes.mp4"])
def test_analyze_then_find_on_real_videos(tiny: str, name: str, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    video = tmp_path / f"my clip 'ü' $(x) {name}"
    shutil.copy(DATA / name, video)
    out = run_cli("analyze", str(video), "--model", tiny, "--device", "cpu", "--window", "4",
                  "--json", cache=cache)
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert {"duration", "model", "scene", "events", "windows"} <= set(doc)
    assert doc["cached"] is False and doc["engine"]["device"] == "cpu"
    windows = doc["windows"]
    assert len(windows) >= 2 and windows[0]["start"] == 0.0
    assert windows[-1]["end"] == pytest.approx(doc["duration"], abs=0.05)
    for w in windows:
        assert {"start", "end", "raw", "format_ok", "frames", "frame_times", "grid",
                "video_tokens", "prompt_tokens", "seconds"} <= set(w)
        assert w["frames"] == len(w["frame_times"]) and w["frames"] % 2 == 0
        assert all(w["start"] <= t <= w["end"] for t in w["frame_times"])
        assert w["grid"][0] * 2 == w["frames"]
        assert w["video_tokens"] == w["grid"][0] * w["grid"][1] * w["grid"][2] // 4
        assert w["prompt_tokens"] > w["video_tokens"]

    # the same file, renamed: the cache answers without loading the model
    moved = tmp_path / "renamed.mp4"
    video.rename(moved)
    again = run_cli("analyze", str(moved), "--model", tiny, "--device", "cpu", "--window", "4",
                    "--json", cache=cache)
    assert again.returncode == 0, again.stderr
    cached = json.loads(again.stdout)
    assert cached["cached"] is True and cached["engine"] is None
    assert cached["windows"] == windows

    found = run_cli("find", str(moved), "a person rides a bike", "the sky", "--model", tiny,
                    "--device", "cpu", "--window", "4", "--top", "2", "--json", cache=cache)
    assert found.returncode == 0, found.stderr
    queries = json.loads(found.stdout)["queries"]
    assert [q["query"] for q in queries] == ["a person rides a bike", "the sky"]
    for q in queries:
        assert q["seconds"] >= 0 and len(q["spans"]) <= 2
        for s in q["spans"]:
            assert {"start", "end", "score", "window"} <= set(s)
            assert 0 <= s["start"] <= s["end"] <= cached["duration"] + 0.05


def test_exit_codes(tiny: str, tmp_path: Path) -> None:
    missing = run_cli("analyze", str(tmp_path / "nope.mp4"), "--model", tiny)
    assert missing.returncode == 2 and "does not exist" in missing.stderr
    assert "Traceback" not in missing.stderr
    text = tmp_path / "notes.mp4"
    text.write_text("not a video")
    assert run_cli("probe", str(text)).returncode == 2
    offline = run_cli("analyze", str(DATA / "bikes.mp4"), "--model", "NemoStation/Marlin-2B",
                      env_extra={"HF_HOME": str(tmp_path / "hf")})
    assert offline.returncode == 3
    assert "marlin-desk models pull NemoStation/Marlin-2B" in offline.stderr
    usage = run_cli("analyze")
    assert usage.returncode == 2 and "Traceback" not in usage.stderr
    bad_window = run_cli("analyze", str(DATA / "bikes.mp4"), "--model", tiny, "--window", "500")
    assert bad_window.returncode == 2


def test_demo_works_offline_and_says_how_to_get_the_real_model(tmp_path: Path) -> None:
    out = run_cli("demo", "--json", env_extra={"HF_HOME": str(tmp_path / "hf"),
                                               "MARLIN_DESK_DATA": str(tmp_path / "data")},
                  cache=tmp_path / "cache")
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert "marlin-desk models pull NemoStation/Marlin-2B" in doc["note"]
    assert doc["engine"]["device"] in {"cpu", "cuda", "mps"}
    assert doc["probe"]["duration"] == pytest.approx(20.0, abs=0.1)
    assert len(doc["analysis"]["windows"]) == 1 and doc["analysis"]["windows"][0]["frames"] == 40
    assert doc["find"][0]["query"]
