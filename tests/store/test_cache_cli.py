"""`marlin-desk cache list|clear|path` as a user or a script runs it: a real process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from marlin_desk.store import AnalysisCache, fingerprint

from .conftest import make_analysis, make_key, make_window

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def cache_home(tmp_path: Path) -> Path:
    return tmp_path / "cache-home"


def run_cli(cache_home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "MARLIN_DESK_CACHE": str(cache_home),
           "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    env.pop("MARLIN_DESK_LOGS", None)
    return subprocess.run([sys.executable, "-m", "marlin_desk", *args], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=60)


@pytest.fixture
def filled(cache_home: Path, make_video) -> dict[str, Path]:
    """Two videos: a complete analysis and a half-done one of the first, a complete second."""
    a, b = make_video("alpha.mp4"), make_video("beta.mov")
    with AnalysisCache(cache_home / "analyses.sqlite3") as cache:
        for i in range(2):
            cache.put_window(make_key(a), 2, a, make_window(i))
        cache.complete(make_key(a), make_analysis(2, str(a)))
        cache.put_window(make_key(a, precision="fp32"), 5, a, make_window(0))
        cache.complete(make_key(b), make_analysis(1, str(b)))
    return {"a": a, "b": b}


def test_path_prints_the_database_path(cache_home: Path) -> None:
    done = run_cli(cache_home, "cache", "path")
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"{cache_home / 'analyses.sqlite3'}\n"


def test_list_json_is_one_document(cache_home: Path, filled: dict[str, Path]) -> None:
    done = run_cli(cache_home, "cache", "list", "--json")
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["path"] == str(cache_home / "analyses.sqlite3")
    assert doc["recovered_from"] is None
    rows = {(e["video"], e["precision"]): e for e in doc["entries"]}
    assert set(rows) == {("alpha.mp4", "bf16"), ("alpha.mp4", "fp32"), ("beta.mov", "bf16")}
    half = rows["alpha.mp4", "fp32"]
    assert (half["windows_done"], half["windows_total"], half["complete"]) == (1, 5, False)
    full = rows["alpha.mp4", "bf16"]
    assert (full["windows_done"], full["windows_total"], full["complete"]) == (2, 2, True)
    assert full["fingerprint"] == fingerprint(filled["a"])
    assert full["model_id"] == "marlin/Marlin-2B" and full["size_bytes"] > 0
    assert full["settings"]["window_s"] == 120


def test_list_table(cache_home: Path, filled: dict[str, Path]) -> None:
    done = run_cli(cache_home, "cache", "list")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].split() == ["VIDEO", "FINGERPRINT", "MODEL", "PRECISION", "WINDOWS",
                                "COMPLETE", "SIZE"]
    assert len(lines) == 4
    assert any("alpha.mp4" in line and "1/5" in line and " no " in line for line in lines)
    assert fingerprint(filled["b"])[:12] in done.stdout


def test_list_empty(cache_home: Path) -> None:
    done = run_cli(cache_home, "cache", "list")
    assert done.returncode == 0 and "no cached analyses" in done.stdout
    assert json.loads(run_cli(cache_home, "cache", "list", "--json").stdout)["entries"] == []


def test_clear_one_video_then_all(cache_home: Path, filled: dict[str, Path]) -> None:
    moved = filled["a"].with_name("renamed.mp4")
    filled["a"].rename(moved)  # found by content, not by name
    done = run_cli(cache_home, "cache", "clear", "--video", str(moved))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "removed 2 cached analyses"
    entries = json.loads(run_cli(cache_home, "cache", "list", "--json").stdout)["entries"]
    assert [e["video"] for e in entries] == ["beta.mov"]
    reframe = cache_home / "reframe"  # workflows.reframe's span files: cleared with "all"
    reframe.mkdir(parents=True)
    (reframe / "0123.json").write_text("{}")
    done = run_cli(cache_home, "cache", "clear")
    assert done.returncode == 0 and done.stdout.splitlines() == [
        "removed 1 cached analysis", "removed 1 cached reframing analysis"]
    assert not list(reframe.iterdir())
    assert json.loads(run_cli(cache_home, "cache", "list", "--json").stdout)["entries"] == []


def test_clear_by_fingerprint_when_the_file_is_gone(cache_home: Path,
                                                    filled: dict[str, Path]) -> None:
    fp = fingerprint(filled["b"])
    filled["b"].unlink()
    done = run_cli(cache_home, "cache", "clear", "--fingerprint", fp)
    assert done.returncode == 0 and "removed 1 cached analysis" in done.stdout


def test_clear_a_missing_video_is_bad_input(cache_home: Path, tmp_path: Path) -> None:
    done = run_cli(cache_home, "cache", "clear", "--video", str(tmp_path / "nope.mp4"))
    assert done.returncode == 2
    assert "nope.mp4" in done.stderr and done.stdout == ""


def test_list_reports_a_recovered_cache(cache_home: Path) -> None:
    cache_home.mkdir(parents=True)
    (cache_home / "analyses.sqlite3").write_bytes(b"garbage" * 1000)
    done = run_cli(cache_home, "cache", "list", "--json")
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["recovered_from"] and Path(doc["recovered_from"]).exists()
    assert "moved to" in done.stderr


def test_cache_without_action_is_a_usage_error(cache_home: Path) -> None:
    done = run_cli(cache_home, "cache")
    assert done.returncode == 2 and "marlin-desk:" in done.stderr
