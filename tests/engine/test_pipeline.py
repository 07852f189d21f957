"""Whole-video jobs: streaming windows, progress, cancel, prefill sharing and the memory budget."""

from __future__ import annotations

from pathlib import Path

import pytest

from marlin_desk.core.errors import Cancelled
from marlin_desk.core.prompts import find_prompt
from marlin_desk.core.windows import plan_windows
from marlin_desk.dev.videos import make_video
from marlin_desk.engine import pipeline
from marlin_desk.engine import session as session_mod
from marlin_desk.engine.prefills import PrefillStore, cache_bytes
from marlin_desk.engine.session import VideoSession


@pytest.fixture(scope="module")
def video(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_video(tmp_path_factory.mktemp("pipe") / "v.mp4", size=(96, 64), fps=10,
                      segments=[(3.0, (255, 0, 0)), (3.0, (0, 0, 255)), (3.0, (0, 255, 0))])


def test_analysis_streams_window_by_window(tiny_engine, video: Path) -> None:  # noqa: ANN001
    session = VideoSession(tiny_engine, str(video))
    seen, progress = [], []
    analysis = pipeline.analyze(session, window=3.0, on_window=seen.append,
                                on_progress=progress.append, max_new_tokens=16)
    assert [w.index for w in seen] == [0, 1, 2]
    assert [(w.start, w.end) for w in analysis.windows] == [(0, 3), (3, 6), (6, 9)]
    assert [p.done for p in progress] == [1, 2, 3] and progress[-1].total == 3
    assert progress[0].eta is not None and progress[-1].eta == 0
    assert progress[-1].tokens == sum(w.new_tokens for w in analysis.windows) > 0
    for w in analysis.windows:  # frames belong to their window, events are in video time
        assert all(w.start <= t < w.end + 1e-6 for t in w.frame_times)
        assert all(w.start <= e.start <= e.end <= w.end + 0.1 for e in w.events)


def test_cancel_between_windows_keeps_finished_ones(tiny_engine, video: Path) -> None:  # noqa: ANN001
    session = VideoSession(tiny_engine, str(video))
    seen = []
    with pytest.raises(Cancelled):
        pipeline.analyze(session, window=3.0, on_window=seen.append,
                         should_stop=lambda: len(seen) >= 1, max_new_tokens=8)
    assert len(seen) == 1


def test_resume_skips_done_windows(tiny_engine, video: Path) -> None:  # noqa: ANN001
    session = VideoSession(tiny_engine, str(video))
    first = pipeline.analyze(session, window=3.0, max_new_tokens=8)
    seen = []
    again = pipeline.analyze(session, window=3.0, done={0: first.windows[0]},
                             on_window=seen.append, max_new_tokens=8)
    assert [w.index for w in seen] == [1, 2]
    assert again.windows[0] is first.windows[0]


def test_queries_share_each_window_prefill(tiny_engine, video: Path,  # noqa: ANN001
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []
    real = session_mod.sample_window

    def counting(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        calls.append(args[1:3])
        return real(*args, **kwargs)

    monkeypatch.setattr(session_mod, "sample_window", counting)
    session = VideoSession(tiny_engine, str(video))
    results = pipeline.find(session, ["red", "blue", "green"], window=3.0, top=2)
    assert len(calls) == 3  # one prefill per window, shared by the three queries
    assert [r.query for r in results] == ["red", "blue", "green"]
    for r in results:
        assert len(r.spans) <= 2 and len(r.windows) == 3
        scores = [s.score for s in r.spans]
        assert scores == sorted(scores, reverse=True)


def test_memory_budget_evicts_and_recomputes(tiny_engine, video: Path) -> None:  # noqa: ANN001
    probe_session = VideoSession(tiny_engine, str(video))
    windows = plan_windows(probe_session.info.duration, 3.0)
    one = cache_bytes(probe_session.prefill(windows[0]).cache)
    store = PrefillStore("cpu", host_bytes=int(one * 1.5))  # room for one window only
    session = VideoSession(tiny_engine, str(video), prefills=store)
    before = session.ask(windows[0], find_prompt("red"), 8)
    session.ask(windows[1], find_prompt("red"), 8)
    assert 0 not in store and 1 in store and len(store) == 1
    after = session.ask(windows[0], find_prompt("red"), 8)  # recomputed, same answer
    assert after.token_ids == before.token_ids


def test_two_tier_budget_moves_before_dropping(tiny_engine, video: Path) -> None:  # noqa: ANN001
    """With a separate compute device, old prefills move to host memory first, then drop.
    ("cpu:0" stands in for the GPU so the bookkeeping runs on this machine.)"""
    probe_session = VideoSession(tiny_engine, str(video))
    windows = plan_windows(probe_session.info.duration, 3.0)
    one = cache_bytes(probe_session.prefill(windows[0]).cache)
    store = PrefillStore("cpu:0", device_bytes=int(one * 1.5), host_bytes=int(one * 1.5))
    session = VideoSession(tiny_engine, str(video), prefills=store)
    for w in windows:
        session.prefill(w)
    usage = store.usage()
    assert usage["windows"] == 2 and 0 not in store
    assert usage["device_bytes"] == usage["host_bytes"] == one
    assert store.get(1) is not None and store.usage()["device_bytes"] == one
