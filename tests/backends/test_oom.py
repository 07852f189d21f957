"""GPU out-of-memory during a window, simulated on CPU: the model call raises
torch.cuda.OutOfMemoryError; the window is retried with a smaller frame budget, and when nothing
fits a clear MarlinError stops the job without losing the windows already finished."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import torch

from marlin_desk.core.budget import TRAINING_BUDGET
from marlin_desk.core.errors import MarlinError
from marlin_desk.core.windows import plan_windows
from marlin_desk.engine.pipeline import Progress, analyze, caption_window
from marlin_desk.engine.session import OutOfMemory, VideoSession, is_out_of_memory, smaller_budgets


@pytest.fixture(scope="module")
def engine(tiny_src: Path):  # noqa: ANN201 - LoadedModel
    from marlin_desk.engine.loader import load_model

    return load_model(str(tiny_src), device="cpu")


def fail_prefills(monkeypatch: pytest.MonkeyPatch, engine: Any, when: Any) -> list[int]:
    """Make the video prefill (the big step) raise CUDA OOM whenever `when(call_no)` is true."""
    inner = engine.model.model
    real = inner.forward
    calls: list[int] = []

    def forward(*args: Any, **kwargs: Any) -> Any:
        if kwargs.get("pixel_values_videos") is not None:
            calls.append(len(calls))
            if when(len(calls) - 1):
                raise torch.cuda.OutOfMemoryError("CUDA out of memory. Tried to allocate 2 GiB")
        return real(*args, **kwargs)

    monkeypatch.setattr(inner, "forward", forward)
    return calls


def test_oom_detection_and_the_smaller_budgets() -> None:
    assert is_out_of_memory(torch.cuda.OutOfMemoryError("x"))
    assert is_out_of_memory(RuntimeError("MPS backend out of memory (MPS allocated: 8 GB)"))
    assert not is_out_of_memory(RuntimeError("shape mismatch"))
    half_pixels, half_frames = smaller_budgets(TRAINING_BUDGET)
    assert half_pixels.max_pixels == TRAINING_BUDGET.max_pixels // 2
    assert half_pixels.min_pixels <= half_pixels.max_pixels
    assert half_frames.max_frames == TRAINING_BUDGET.max_frames // 2


def test_one_oom_retries_the_window_smaller(engine: Any, clip: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    session = VideoSession(engine, str(clip))
    window = plan_windows(session.info.duration, 4.0)[0]
    calls = fail_prefills(monkeypatch, engine, lambda n: n == 0)
    notes: list[str] = []
    result = caption_window(session, window, max_new_tokens=4, on_note=notes.append)
    assert len(calls) == 2 and result.frames > 0
    assert session.budget.max_pixels == TRAINING_BUDGET.max_pixels // 2
    assert session.window_budgets[0] == session.budget
    assert len(notes) == 1 and "out of memory" in notes[0] and "retrying" in notes[0]
    assert session.notes == notes


def test_persistent_oom_is_a_marlin_error_and_keeps_finished_windows(
        engine: Any, clip: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    session = VideoSession(engine, str(clip))
    calls = fail_prefills(monkeypatch, engine, lambda n: n >= 1)  # window 1 fits, window 2 never
    finished: list[Any] = []
    progress: list[Progress] = []
    with pytest.raises(OutOfMemory) as err:
        analyze(session, 4.0, on_window=finished.append, on_progress=progress.append,
                max_new_tokens=4)
    assert isinstance(err.value, MarlinError) and err.value.exit_code == 4
    assert "window 2" in str(err.value) and "--backend" in str(err.value)
    assert [r.index for r in finished] == [0]
    assert len(calls) == 4  # window 1 once; window 2 at full, half pixels, half frames
    assert sum("retrying" in p.message for p in progress) == 2


def test_workflow_stores_windows_before_an_oom(tiny_src: Path, clip: Path, engine: Any,
                                               monkeypatch: pytest.MonkeyPatch,
                                               tmp_path: Path) -> None:
    from marlin_desk.store.cache import AnalysisCache
    from marlin_desk.workflows import JobSettings, open_video
    from marlin_desk.workflows import analyze as run

    monkeypatch.setenv("MARLIN_DESK_CACHE", str(tmp_path / "cache"))
    settings = JobSettings(model=str(tiny_src), device="cpu", window=4.0, caption_tokens=4)
    bench = open_video(str(clip), settings, engine=engine)
    fail_prefills(monkeypatch, engine, lambda n: n >= 1)
    with pytest.raises(OutOfMemory):
        run(bench)
    assert sorted(AnalysisCache().windows_done(bench.key)) == [0]
    assert bench.key.precision == "float32"
