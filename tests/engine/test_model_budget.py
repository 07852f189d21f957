"""A model folder trained with another video budget (budget.json) is fed with that budget."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from marlin_desk.core.budget import TRAINING_BUDGET, VideoBudget
from marlin_desk.core.errors import ModelUnavailable
from marlin_desk.dev.videos import make_video
from marlin_desk.engine.loader import model_budget
from marlin_desk.workflows import JobSettings, analyze, open_video

SMALL = VideoBudget(min_pixels=32 * 32, max_pixels=64 * 64)


def test_budget_json_round_trip_and_default(tmp_path: Path) -> None:
    assert model_budget(str(tmp_path)) == TRAINING_BUDGET
    assert model_budget("NemoStation/Marlin-2B") == TRAINING_BUDGET
    (tmp_path / "budget.json").write_text(json.dumps({**SMALL.to_dict(), "note": "x"}))
    assert model_budget(str(tmp_path)) == SMALL
    (tmp_path / "budget.json").write_text("{not json")
    with pytest.raises(ModelUnavailable):
        model_budget(str(tmp_path))


def test_analysis_uses_the_models_own_budget(tiny_model_dir: Path, tmp_path: Path) -> None:
    model = tmp_path / "small-budget-model"
    shutil.copytree(tiny_model_dir, model)
    (model / "budget.json").write_text(json.dumps(SMALL.to_dict()))
    video = make_video(tmp_path / "v.mp4", size=(320, 240), fps=10, duration=4.0)
    bench = open_video(str(video), JobSettings(model=str(model), device="cpu"), use_cache=False)
    assert bench.settings.budget == SMALL and bench.key.settings["budget"] == SMALL.to_dict()
    bench.settings.caption_tokens = 8
    analysis, _ = analyze(bench)
    t, h, w = analysis.windows[0].grid
    assert (h * 16) * (w * 16) <= SMALL.max_pixels  # 64x64 at most, not 448x448


def test_a_model_trained_on_short_clips_gets_windows_it_knows(tiny_model_dir: Path,
                                                               tmp_path: Path) -> None:
    """budget.json caps the frames at 40 (20 s at 2 fps, like the demo model): the app's
    default 120 s windows become 20 s windows, with a note, instead of an error."""
    model = tmp_path / "short-clip-model"
    shutil.copytree(tiny_model_dir, model)
    short = VideoBudget(min_pixels=32 * 32, max_pixels=64 * 64, max_frames=40)
    (model / "budget.json").write_text(json.dumps(short.to_dict()))
    video = make_video(tmp_path / "v.mp4", size=(64, 64), fps=5, duration=50.0,
                       frame_code=False)
    bench = open_video(str(video), JobSettings(model=str(model), device="cpu", window=120.0,
                                               overlap=30.0), use_cache=False)
    assert (bench.settings.window, bench.settings.overlap) == (20.0, 0.0)
    assert bench.total_windows == 3
    assert any("up to 20 s" in note for note in bench.notes)
    kept = open_video(str(video), JobSettings(model=str(model), device="cpu", window=10.0,
                                              overlap=2.0), use_cache=False)
    assert (kept.settings.window, kept.settings.overlap, kept.notes) == (10.0, 2.0, [])
