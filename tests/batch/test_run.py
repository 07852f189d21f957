"""run_batch with the tiny random model: statuses, files, bad files, the cache, stop and resume,
concurrency. The model's answers are noise, so only the plumbing is checked."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from marlin_desk.batch_analysis import BatchSettings, run_batch, runner
from marlin_desk.core.errors import ModelUnavailable
from marlin_desk.core.timeline import Analysis, Event, WindowResult
from tests.batch.conftest import audio_only, garbage, job, truncated, video


def _no_model(*args: Any, **kwargs: Any) -> Any:
    raise AssertionError("the model was loaded although every video is cached")


def test_a_folder_with_bad_files_then_a_rerun_from_the_cache(tiny_model: Path,
                                                             tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch,
                                                             ) -> None:
    lib = tmp_path / "my footage"
    videos = [video(lib / "a.mp4"), garbage(lib / "b broken.mp4"), audio_only(lib / "c.mp4"),
              truncated(lib / "d.mp4"), video(lib / "e" / "l'été \"x\" «y».mkv", 4.0)]
    settings = BatchSettings(job=job(tiny_model), queries=["a red frame"], subtitles="srt")
    seen: list[Any] = []
    results: list[tuple[int, str]] = []
    report = run_batch([str(v) for v in videos], settings, on_progress=seen.append,
                       on_result=lambda i, r: results.append((i, r.status)))

    statuses = [r.status for r in report.results]
    assert statuses == ["done", "failed", "failed", "failed", "done"]
    assert results == list(enumerate(statuses))  # each video reported once, in order
    assert "not a video file" in report.results[1].error
    assert "no video stream" in report.results[2].error
    assert "truncated" in report.results[3].error
    assert len(report.failed) == 3
    assert report.engine is not None and report.engine["device"] == "cpu"
    good = report.results[4]
    assert good.windows == 2 and good.windows_cached == 0 and not good.analysis_cached
    assert Path(good.outputs["analysis"]) == videos[4].with_name("l'été \"x\" «y».analysis.json")
    doc = json.loads(Path(good.outputs["analysis"]).read_text(encoding="utf-8"))
    assert doc["video"] == str(videos[4]) and len(doc["windows"]) == 2
    found = json.loads(Path(good.outputs["find"]).read_text(encoding="utf-8"))
    assert [q["query"] for q in found["queries"]] == ["a red frame"]
    for r in report.results[1:4]:
        assert r.outputs == {}
    stages = {p.stage for p in seen}
    assert {"check", "plan", "analyze", "find"} <= stages
    plan = next(p for p in seen if p.stage == "plan")
    assert "5 videos" in plan.message and "3 unreadable" in plan.message
    window_reports = [p for p in seen if p.stage == "analyze" and p.index == 4 and p.done]
    assert [p.done for p in window_reports] == [1, 2] and window_reports[-1].of == 2
    assert window_reports[-1].finished == 4 and window_reports[-1].total == 5
    assert window_reports[-1].eta is not None  # measured by then
    files_before = sorted(p.name for p in lib.rglob("*"))

    # Everything is cached now: no model is loaded, the same files are found, nothing added.
    monkeypatch.setattr("marlin_desk.engine.backends.load_best", _no_model)
    again = run_batch([str(v) for v in videos], settings)
    assert [r.status for r in again.results] == ["cached", "failed", "failed", "failed",
                                                  "cached"]
    assert again.engine is None
    assert again.results[4].outputs == good.outputs
    assert again.results[4].windows_cached == 2 and again.results[4].analysis_cached
    assert sorted(p.name for p in lib.rglob("*")) == files_before


def test_stop_mid_batch_then_resume(tiny_model: Path, tmp_path: Path) -> None:
    videos = [str(video(tmp_path / "v1.mp4")), str(video(tmp_path / "v2.mp4", 6.0)),
              str(video(tmp_path / "v3.mp4", colour=(20, 200, 20)))]  # v1's twin would hit
    settings = BatchSettings(job=job(tiny_model), out=str(tmp_path / "out"), chapters=False)
    stop = threading.Event()

    def progress(p: Any) -> None:  # stop once the second video has a window stored
        if p.stage == "analyze" and p.index == 1 and p.done >= 1:
            stop.set()

    report = run_batch(videos, settings, on_progress=progress, should_stop=stop.is_set)
    assert [r.status for r in report.results] == ["done", "cancelled", "pending"]
    assert report.stopped and report.fatal is None
    assert list((tmp_path / "out").iterdir()) == [tmp_path / "out" / "v1.analysis.json"]

    resumed = run_batch(videos, settings)
    assert [r.status for r in resumed.results] == ["cached", "done", "done"]
    assert not resumed.stopped
    second = resumed.results[1]
    assert second.windows == 3 and 1 <= second.windows_cached < 3  # finished windows kept
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [
        "v1.analysis.json", "v2.analysis.json", "v3.analysis.json"]


def test_a_model_that_cannot_load_ends_the_batch(tmp_path: Path) -> None:
    videos = [str(video(tmp_path / "v1.mp4")), str(garbage(tmp_path / "v2.mp4")),
              str(video(tmp_path / "v3.mp4"))]
    settings = BatchSettings(job=job(tmp_path / "no-such-model"))
    report = run_batch(videos, settings)
    assert report.fatal and "no-such-model" in report.fatal
    assert report.fatal_code == ModelUnavailable.exit_code
    assert [r.status for r in report.results] == ["pending", "pending", "pending"]
    assert not report.stopped


# ---------------------------------------------------------------- concurrency (no model)


def _fake_analysis(bench: Any, *, on_progress: Any = None, should_stop: Any = None,
                   **_: Any) -> tuple[Analysis, bool]:
    windows = []
    for i in range(bench.total_windows):
        time.sleep(0.05)
        windows.append(WindowResult(i, i * 2.0, i * 2.0 + 2.0, "raw", True, "scene",
                                    [Event(i * 2.0, i * 2.0 + 1.0, f"event {i}")]))
        if on_progress:
            on_progress(_Progress(i + 1, bench.total_windows, 0.05 * (i + 1)))
    return Analysis(bench.info.duration, "m", "scene",
                    [e for w in windows for e in w.events], windows, bench.video), False


class _Progress:
    def __init__(self, done: int, total: int, elapsed: float) -> None:
        self.done, self.total, self.elapsed, self.message = done, total, elapsed, ""


def test_several_videos_at_once_only_where_the_backend_allows(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch,
                                                              ) -> None:
    videos = [str(video(tmp_path / f"v{i}.mp4")) for i in range(4)]
    running, peak, lock = [0], [0], threading.Lock()

    def fake(bench: Any, **kw: Any) -> tuple[Analysis, bool]:
        with lock:
            running[0] += 1
            peak[0] = max(peak[0], running[0])
        try:
            return _fake_analysis(bench, **kw)
        finally:
            with lock:
                running[0] -= 1

    monkeypatch.setattr(runner, "analyze", fake)
    settings = BatchSettings(job=job(tmp_path / "m"), videos_at_once=3, use_cache=False,
                             chapters=False)
    engine = SimpleNamespace(precision="fp32", describe=lambda: {"backend": "fake"})
    local = run_batch(videos, settings, engine=engine)
    assert local.videos_at_once == 1 and peak[0] == 1
    assert any("one video at a time" in n for n in local.notes)
    assert [r.status for r in local.results] == ["done"] * 4

    monkeypatch.setattr(runner, "concurrency_allowed", lambda s: True)
    seen: list[Any] = []
    remote = run_batch(videos, BatchSettings(job=job(tmp_path / "m"), videos_at_once=3,
                                             use_cache=False, chapters=False, overwrite=True),
                       on_progress=seen.append, engine=engine)
    assert remote.videos_at_once == 3 and peak[0] > 1 and not remote.notes
    assert [r.video for r in remote.results] == videos
    assert [r.status for r in remote.results] == ["done"] * 4
    assert [r.outputs for r in remote.results] == [r.outputs for r in local.results]
    assert any(p.eta is not None for p in seen if p.stage == "analyze")
