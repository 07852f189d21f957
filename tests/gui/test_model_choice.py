"""The app loads the model the commands would choose: Marlin-2B from the models folder (the
trained tiny model, registered with `models pull --from`), and says why in the status bar;
`marlin-desk selftest --json` reports the same."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from marlin_desk.cli.main import main
from marlin_desk.models import DEFAULT_MODEL, ModelManager

REPO = Path(__file__).resolve().parents[2]
TRAINED = REPO / "resources" / "models" / "marlin-tiny-trained"
FROM_FOLDER = "from the models folder"


@pytest.fixture
def pulled(capsys: pytest.CaptureFixture[str]) -> Path:
    """Marlin-2B in this test's own data folder (gui/conftest.py's own_data_folder)."""
    assert main(["models", "pull", "--from", str(TRAINED), DEFAULT_MODEL]) == 0
    capsys.readouterr()
    folder = ModelManager().installed_folder(DEFAULT_MODEL)
    assert folder is not None
    return folder


def test_the_window_loads_the_pulled_model_and_says_why(qtbot, make_window, pulled) -> None:
    w = make_window()  # no model override, and the settings name none: the app chooses
    with qtbot.waitSignal(w.engine.modelReady, timeout=120_000):
        w.model_jobs.load_model()
    assert w.model_jobs.model_info["model"] == DEFAULT_MODEL
    label = w.model_label.text()  # short: which model, where from, how it runs
    assert f"{DEFAULT_MODEL} {FROM_FOLDER}" in label and "fp32 · cpu · float32" in label
    assert f"{DEFAULT_MODEL} {FROM_FOLDER} ({pulled})" in w.model_label.toolTip()  # the why
    assert not w.errors


def test_selftest_reports_the_pulled_model(pulled, tmp_path: Path) -> None:
    env = {**os.environ, "MARLIN_DESK_DATA": os.environ["MARLIN_DESK_DATA"],
           "MARLIN_DESK_CACHE": str(tmp_path / "cache"), "QT_QPA_PLATFORM": "offscreen",
           "HF_HUB_OFFLINE": "1",
           "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    out = subprocess.run([sys.executable, "-m", "marlin_desk", "selftest", "--json",
                          "--max-tokens", "6"],
                         capture_output=True, text=True, timeout=300, cwd=REPO, env=env)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
    summary = json.loads(out.stdout[out.stdout.index("{"):])
    assert summary["ok"]
    assert summary["model"]["model"] == DEFAULT_MODEL
    assert summary["model"]["why"].startswith(f"{DEFAULT_MODEL} {FROM_FOLDER} ({pulled})")
