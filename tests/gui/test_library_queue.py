"""The analysis queue in the app: library videos analysed one after another by the model
worker, in the editor's order, paused and resumed, cancelled, yielding to the editor's own
search, a bad file failing alone, and the queue going on after a restart from the cache's
finished windows. The tiny random model does the analysing (real model classes, real cache)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from marlin_desk.dev.videos import make_video
from marlin_desk.gui.worker_protocol import LibraryAnalyseRequest, LibraryAnalyseResult
from marlin_desk.store.library import ANALYSED


@pytest.fixture(scope="module")
def footage(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """Three different 12 s videos (three windows each at 5 s) and a truncated one."""
    folder = tmp_path_factory.mktemp("footage")
    base = make_video(folder / "a take.mp4", segments=[(6.0, (200, 30, 30)),
                                                        (6.0, (30, 60, 200))],
                      size=(160, 96), fps=10, audio=False)
    videos = [base]
    for name in ("b take.mp4", "c take.mp4"):
        target = folder / name
        shutil.copy(base, target)
        with open(target, "ab") as fh:  # other content, the same pictures
            fh.write(name.encode())
        videos.append(target)
    broken = folder / "d broken.mp4"
    broken.write_bytes(base.read_bytes()[:3000])
    videos.append(broken)
    return videos


def _window(make_window, settings, tiny_model):  # noqa: ANN001, ANN202
    settings.set("window_seconds", 5.0)
    return make_window(model=str(tiny_model))


def _states(w) -> dict[str, str]:  # noqa: ANN001
    tree = w.library_panel.videos
    return {tree.topLevelItem(i).text(0): tree.topLevelItem(i).text(1)
            for i in range(tree.topLevelItemCount())}


def _fp(w, name: str) -> str:  # noqa: ANN001
    view = w.library_panel.video_list
    return next(fp for fp, v in view.videos.items() if Path(v.path).name == name)


def _add_folder(qtbot, w, folder: Path, n: int) -> None:  # noqa: ANN001
    w.library.add_folder(str(folder))
    qtbot.waitUntil(lambda: w.library_panel.videos.topLevelItemCount() == n, timeout=30_000)


def test_the_queue_runs_in_order_fails_alone_and_yields_to_the_editor(
        qtbot, make_window, settings, tiny_model, footage) -> None:
    w = _window(make_window, settings, tiny_model)
    _add_folder(qtbot, w, footage[0].parent, 4)
    view = w.library_panel.video_list
    view.pauseRequested.emit(True)  # set the order first
    qtbot.waitUntil(lambda: w.queue.paused, timeout=10_000)
    view.queueAllRequested.emit()
    qtbot.waitUntil(lambda: len(w.queue.queue) == 4, timeout=10_000)
    assert all(s.startswith("paused (") for s in _states(w).values()), _states(w)
    view.moveRequested.emit(_fp(w, "c take.mp4"), -5)
    qtbot.waitUntil(lambda: w.queue.queue[0].fingerprint == _fp(w, "c take.mp4"),
                    timeout=10_000)
    started: list[str] = []
    w.engine.jobStarted.connect(lambda _j, r: isinstance(r, LibraryAnalyseRequest)
                                and started.append(Path(r.video).name))
    finished: list[str] = []
    w.queue.videoAnalysed.connect(finished.append)
    with qtbot.waitSignal(w.engine.modelReady, timeout=120_000):
        w.model_jobs.load_model()
    view.pauseRequested.emit(False)
    qtbot.waitUntil(lambda: w.queue.running is not None, timeout=30_000)
    # the editor searches the open video: the queue stops after its window and waits
    open_video = footage[1]
    with qtbot.waitSignal(w.videoOpened, timeout=30_000):
        w.open_video(str(open_video))
    # the video the editor opens goes to the front of the queue
    qtbot.waitUntil(lambda: w.queue.queue[0].fingerprint == _fp(w, open_video.name),
                    timeout=10_000)
    stopped: list[str] = []
    w.engine.cancelled.connect(lambda _j, r: isinstance(r, LibraryAnalyseRequest)
                               and stopped.append(Path(r.video).name))
    with qtbot.waitSignal(w.findFinished, timeout=120_000):
        w.model_jobs.run_query("a red screen")
    qtbot.waitUntil(lambda: not w.queue.queue or all(not q.waiting for q in w.queue.queue),
                    timeout=240_000)
    states = _states(w)
    assert states["d broken.mp4"].startswith("failed: "), states
    assert all(states[n] == "analysed" for n in ("a take.mp4", "b take.mp4", "c take.mp4"))
    assert started[0] == "c take.mp4"  # the editor's order
    for name in stopped:  # stopped for the search, then taken up again
        assert started.count(name) == 2, (started, stopped)
    assert len(set(finished)) == 3
    assert len(w.queue.queue) == 1 and w.queue.queue[0].failed  # the broken one, with its reason
    assert any(v.state == ANALYSED for v in view.videos.values())
    # the window's own video and its session were never replaced by the queue's
    assert w.doc.video == str(open_video)


def test_the_queue_survives_a_restart_and_resumes_from_finished_windows(
        qtbot, make_window, settings, tiny_model, footage, tmp_path) -> None:
    folder = tmp_path / "two"
    folder.mkdir()
    for video in footage[:2]:
        shutil.copy(video, folder / video.name)
    w = _window(make_window, settings, tiny_model)
    _add_folder(qtbot, w, folder, 2)
    windows: list[int] = []
    w.engine.progress.connect(lambda job, done, _t, _e, _m: job == w.queue.job
                              and windows.append(done))
    with qtbot.waitSignal(w.engine.modelReady, timeout=120_000):
        w.model_jobs.load_model()
    w.library_panel.video_list.queueAllRequested.emit()
    qtbot.waitUntil(lambda: bool(windows) and max(windows) >= 1, timeout=120_000)
    w.library_panel.video_list.pauseRequested.emit(True)  # after its first window
    qtbot.waitUntil(lambda: w.queue.paused and w.queue.job is None, timeout=60_000)
    assert len(w.queue.queue) == 2
    w.shutdown()
    w.close()

    again = _window(make_window, settings, tiny_model)  # the same cache file: a restart
    qtbot.waitUntil(lambda: len(again.queue.queue) == 2 and again.queue.paused, timeout=30_000)
    qtbot.waitUntil(lambda: again.library_panel.videos.topLevelItemCount() == 2,
                    timeout=30_000)
    assert all(s.startswith("paused") for s in _states(again).values()), _states(again)
    results: list[LibraryAnalyseResult] = []
    again.engine.finished.connect(lambda _j, _r, res: isinstance(res, LibraryAnalyseResult)
                                  and results.append(res))
    with qtbot.waitSignal(again.engine.modelReady, timeout=120_000):
        again.model_jobs.load_model()
    again.library_panel.video_list.pauseRequested.emit(False)
    qtbot.waitUntil(lambda: len(results) == 2, timeout=240_000)
    assert results[0].resumed >= 1  # the first video went on from its finished window
    qtbot.waitUntil(lambda: not again.queue.queue, timeout=10_000)
    assert set(_states(again).values()) == {"analysed"}


def test_removing_the_running_video_stops_it_and_keeps_the_rest(
        qtbot, make_window, settings, tiny_model, footage, tmp_path) -> None:
    folder = tmp_path / "one"
    folder.mkdir()
    shutil.copy(footage[0], folder / footage[0].name)
    w = _window(make_window, settings, tiny_model)
    _add_folder(qtbot, w, folder, 1)
    with qtbot.waitSignal(w.engine.modelReady, timeout=120_000):
        w.model_jobs.load_model()
    view = w.library_panel.video_list
    view.tree.topLevelItem(0).setSelected(True)
    view.queue_button.click()
    qtbot.waitUntil(lambda: w.queue.running is not None, timeout=30_000)
    with qtbot.waitSignal(w.engine.cancelled, timeout=60_000):
        view.remove_button.click()
    qtbot.waitUntil(lambda: not w.queue.queue and w.queue.job is None, timeout=10_000)
    assert not w.queue.paused  # taken out, not paused
    assert _states(w)["a take.mp4"] in ("not analysed", "partly analysed", "analysed")
