"""`marlin-desk models ...` as a user or a script runs it."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from marlin_desk.cli.main import main
from marlin_desk.cli.models_cmd import StderrProgress, format_progress
from marlin_desk.models import Progress

from .conftest import MODEL, FakeHub, model_files, write_folder

REPO = Path(__file__).resolve().parents[2]


def run_cli(data: Path, *args: str, offline: bool = True) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "MARLIN_DESK_DATA": str(data),
           "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    env.pop("MARLIN_DESK_LOGS", None)
    if offline:
        env["HF_HUB_OFFLINE"] = "1"
    return subprocess.run([sys.executable, "-m", "marlin_desk", "models", *args], cwd=REPO,
                          env=env, capture_output=True, text=True, timeout=120)


def test_offline_pull_exits_3_with_one_line_saying_what_to_do(tmp_path: Path) -> None:
    result = run_cli(tmp_path, "pull", "NemoStation/Marlin-2B-GPTQ")
    assert result.returncode == 3
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1
    line = lines[0]
    assert "marlin-desk models pull NemoStation/Marlin-2B-GPTQ" in line
    assert "marlin-desk models where NemoStation/Marlin-2B-GPTQ" in line
    assert str(tmp_path / "models" / "NemoStation--Marlin-2B-GPTQ") in line
    assert "--model DIR" in line


def test_list_where_verify_json_in_a_real_process(tmp_path: Path) -> None:
    listed = run_cli(tmp_path, "list", "--json")
    assert listed.returncode == 0, listed.stderr
    doc = json.loads(listed.stdout)
    assert doc["models_folder"] == str(tmp_path / "models")
    assert {m["id"]: m["state"] for m in doc["models"]}[MODEL] == "not-downloaded"

    where = run_cli(tmp_path, "where")
    assert where.returncode == 0
    assert where.stdout.strip() == str(tmp_path / "models" / "NemoStation--Marlin-2B")

    src = write_folder(tmp_path / "usb", model_files())
    pulled = run_cli(tmp_path, "pull", "--from", str(src), MODEL, "--json")
    assert pulled.returncode == 0, pulled.stderr
    assert json.loads(pulled.stdout)["state"] == "downloaded"
    assert "copy" in pulled.stderr  # progress went to stderr

    verified = run_cli(tmp_path, "verify", "--json")
    assert verified.returncode == 0 and json.loads(verified.stdout)["ok"] is True
    weights = tmp_path / "models" / "NemoStation--Marlin-2B" / "model-00001-of-00002.safetensors"
    data = bytearray(weights.read_bytes())
    data[7] ^= 1
    weights.write_bytes(bytes(data))
    damaged = run_cli(tmp_path, "verify", "--json")
    assert damaged.returncode == 3
    assert json.loads(damaged.stdout)["problems"][0]["file"] == weights.name
    assert "models pull" in damaged.stderr

    removed = run_cli(tmp_path, "remove", MODEL, "--json")
    assert removed.returncode == 0 and json.loads(removed.stdout)["removed"] is True
    refused = run_cli(tmp_path, "remove", str(src))
    assert refused.returncode == 2 and src.is_dir()


def test_pull_from_the_hub_prints_json_and_progress(hub: FakeHub, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    hub.add(MODEL, model_files())
    monkeypatch.setenv("MARLIN_DESK_DATA", str(tmp_path))
    assert main(["models", "pull", "--json"]) == 0
    captured = capsys.readouterr()
    doc = json.loads(captured.out)
    assert doc["state"] == "verified" and doc["id"] == MODEL and doc["usable"]
    assert doc["folder"] == str(tmp_path / "models" / "NemoStation--Marlin-2B")
    assert "100%" in captured.err.splitlines()[-1]


def test_progress_lines_are_throttled_and_readable() -> None:
    stream = io.StringIO()
    printer = StderrProgress(stream, interval=3600)
    for done in range(0, 1001, 100):
        printer(Progress("a/b", "download", "w.safetensors", 0, 2, done, 1000, 5e6, 1.5))
    printer(Progress("a/b", "done", "", 2, 2, 1000, 1000, 5e6, 0.0))
    lines = stream.getvalue().splitlines()
    assert len(lines) == 2  # the first report, then the final one
    assert lines[0] == "a/b download w.safetensors (1/2) 0 B/1000 B 0% 4.8 MB/s ETA 0m02s"
    assert lines[1].startswith("a/b done 1000 B/1000 B 100%")
    assert format_progress(Progress("a/b", "verify", "x", 0, 1, 5 * 2**30, 10 * 2**30)) == \
        "a/b verify x (1/1) 5.0 GB/10.0 GB 50%"
