"""GUI tests with the tiny random model on the worker thread. Its answers are noise, so these
check the plumbing: windows arrive, progress and results are reported, cancel works."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from marlin_desk.gui.worker_protocol import AnalyseRequest
from tests.gui.conftest import open_and_wait


def test_analysis_fills_the_timeline_from_the_worker_then_a_query_runs(
        qtbot, make_window, tiny_model, sample_video) -> None:
    w = make_window(model=str(tiny_model))
    progress: list[tuple[int, int]] = []
    w.engine.progress.connect(lambda _j, done, total, _eta, _m: progress.append((done, total)))
    with qtbot.waitSignal(w.engine.modelReady, timeout=180_000):
        w.model_jobs.load_model()
    assert "tiny-model" in w.model_label.text() and "cpu" in w.model_label.text()
    open_and_wait(qtbot, w, sample_video)
    with qtbot.waitSignal(w.analysisFinished, timeout=300_000) as done:
        w.model_jobs.analyse()
    analysis = done.args[0]
    assert len(analysis.windows) == 1 and w.model_jobs.windows_done == 1
    assert (1, 1) in progress
    assert len(w.timeline.data.events.items) == len(analysis.events) == len(w.doc.events)
    assert w.doc.analysis_ref and w.doc.analysis_ref["model_id"] == str(tiny_model)
    assert not w.jobs.jobs  # the progress bar is gone
    with qtbot.waitSignal(w.findFinished, timeout=300_000) as found:
        w.model_jobs.run_query("a red screen")
    assert found.args[0] == "a red screen"
    assert w.search_panel.results.topLevelItemCount() == len(w.doc.results)
    assert "a red screen" in w.search_panel.status.text()
    assert w.settings.recent_queries()[0] == "a red screen"
    assert not w.errors

    # Reopening the analysed video takes its timeline from the cache: no model job.
    w2 = make_window(model=str(tiny_model))
    open_and_wait(qtbot, w2, sample_video)
    assert w2.doc.analysis is not None and w2.engine.model_info is None
    assert len(w2.doc.analysis.windows) == 1


def test_cancel_stops_a_running_analysis(qtbot, make_window, settings, tiny_model,
                                         sample_video) -> None:
    settings.set("caption_tokens", 4000)  # long enough to be caught running
    w = make_window(model=str(tiny_model), cache=False)
    with qtbot.waitSignal(w.engine.modelReady, timeout=180_000):
        w.model_jobs.load_model()
    open_and_wait(qtbot, w, sample_video)
    with qtbot.waitSignal(w.engine.jobStarted, timeout=60_000):
        job = w.model_jobs.analyse()
    qtbot.waitUntil(lambda: ("model", job) in w.jobs.jobs, timeout=10_000)
    with qtbot.waitSignal(w.engine.cancelled, timeout=120_000) as cancelled:
        w.jobs.cancel_button.click()
    assert cancelled.args[0] == job and isinstance(cancelled.args[1], AnalyseRequest)
    assert w.model_jobs.analysis_job is None and not w.jobs.jobs and not w.errors
    assert w.doc.analysis is None


def test_a_failed_model_load_is_shown_and_the_app_lives_on(qtbot, make_window, tmp_path,
                                                           sample_video) -> None:
    w = make_window(model=str(tmp_path / "no-such-model"))
    with qtbot.waitSignal(w.errorShown, timeout=120_000) as err:
        w.model_jobs.load_model()
    assert "could not be loaded" in err.args[0]
    open_and_wait(qtbot, w, sample_video)
    assert w.doc.video


def test_selftest_command_reports_json_and_a_screenshot(tiny_model, sample_video,
                                                        tmp_path) -> None:
    shot = tmp_path / "shot.png"
    out = subprocess.run(
        [sys.executable, "-m", "marlin_desk", "selftest", str(sample_video), "--model",
         str(tiny_model), "--screenshot", str(shot), "--json", "--max-tokens", "6"],
        capture_output=True, text=True, timeout=600, cwd=Path(__file__).resolve().parents[2])
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
    summary = json.loads(out.stdout[out.stdout.index("{"):])
    assert summary["ok"] and summary["windows"] == 1 and summary["query"]
    assert shot.is_file() and shot.stat().st_size > 10_000


def test_selftest_fails_with_a_reason(tmp_path, sample_video) -> None:
    out = subprocess.run(
        [sys.executable, "-m", "marlin_desk", "selftest", str(sample_video), "--model",
         str(tmp_path / "missing"), "--json"],
        capture_output=True, text=True, timeout=300, cwd=Path(__file__).resolve().parents[2])
    assert out.returncode == 1
    summary = json.loads(out.stdout[out.stdout.index("{"):])
    assert not summary["ok"] and "model" in summary["reason"]
