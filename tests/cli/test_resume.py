"""An analysis killed mid-way resumes from its last finished window."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

from marlin_desk.dev.videos import make_video
from marlin_desk.store.cache import AnalysisCache


def test_killed_analysis_resumes_from_the_last_finished_window(tmp_path: Path) -> None:
    from marlin_desk.dev.tiny_model import build_tiny_model

    model = build_tiny_model(tmp_path / "tiny")
    video = make_video(tmp_path / "v.mp4", size=(96, 64), fps=10, duration=12.0)
    cache_dir = tmp_path / "cache"
    env = dict(os.environ, MARLIN_DESK_CACHE=str(cache_dir), HF_HUB_OFFLINE="1")
    cmd = [sys.executable, "-m", "marlin_desk", "analyze", str(video), "--model", str(model),
           "--device", "cpu", "--window", "2", "--json"]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    db = cache_dir / "analyses.sqlite3"
    deadline = time.monotonic() + 300
    done = 0
    while time.monotonic() < deadline and proc.poll() is None:
        if db.exists():
            with AnalysisCache(db) as cache:
                entries = cache.entries()
                done = entries[0].windows_done if entries else 0
            if done >= 2:
                break
        time.sleep(0.2)
    assert proc.poll() is None, "the analysis finished before it could be killed"
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    assert 2 <= done < 6

    again = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
    assert again.returncode == 0, again.stderr
    doc = json.loads(again.stdout)
    assert [w["index"] for w in doc["windows"]] == [0, 1, 2, 3, 4, 5]
    computed = [line for line in again.stderr.splitlines() if re.match(r"\[\d+/6\]", line)]
    assert computed and not computed[0].startswith("[1/6]")  # finished windows were not redone
    assert len(computed) <= 6 - done
