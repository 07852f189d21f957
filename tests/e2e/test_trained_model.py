"""End to end with the trained tiny model (resources/models/marlin-tiny-trained, also the demo
model): its answers come from the pixels and the query, so these tests can tell a right
timestamp from a wrong one. The model card (its README.md) says how it was made and what it
scores; the eval_*.json files beside it hold the numbers these tests reproduce."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from marlin_desk.core.timeline import Span
from marlin_desk.dev.videos import make_video
from marlin_desk.resources import DEMO_QUERY, demo_model, demo_video
from marlin_desk.workflows import JobSettings, analyze, find, open_video
from training.data import COLOURS
from training.demo_video import DEMO_SEGMENTS

MODEL = Path(__file__).resolve().parents[2] / "resources" / "models" / "marlin-tiny-trained"
# (report file, training.evaluate arguments): the card's numbers
EVALUATIONS = {
    "eval_find.json": ["--task", "find", "-n", "50"],
    "eval_find_d20.json": ["--task", "find", "-n", "50", "--max-duration", "20",
                           "--two-segment-share", "0.6", "--max-count", "3", "--absent"],
    "eval_caption_d20.json": ["--task", "caption", "-n", "50", "--max-duration", "20",
                              "--two-segment-share", "0.6", "--max-count", "3"],
}
Parts = list[tuple[float, str]]  # (seconds, colour name), in order


def card(report: str) -> dict:
    return json.loads((MODEL / report).read_text())["summary"]


def iou(span: Span, truth: tuple[float, float]) -> float:
    inter = max(0.0, min(span.end, truth[1]) - max(span.start, truth[0]))
    union = max(span.end, truth[1]) - min(span.start, truth[0])
    return inter / union if union > 0 else 0.0


def write(path: Path, parts: Parts, **kw: object) -> Path:
    return make_video(path, segments=[(d, COLOURS[c]) for d, c in parts], size=(64, 64), fps=10,
                      frame_code=False, **kw)


def bench_for(video: Path, **settings: object):  # noqa: ANN201 - a workflows.Workbench
    return open_video(str(video), JobSettings(model=str(MODEL), device="cpu", **settings),
                      use_cache=False)


def test_the_demo_model_is_the_trained_model() -> None:
    assert demo_model().resolve() == MODEL.resolve()


@pytest.mark.parametrize("report", list(EVALUATIONS))
def test_the_committed_weights_reproduce_the_cards_numbers(tmp_path: Path, report: str) -> None:
    """training.evaluate on the same 50 held-out files (it writes its report into the model
    folder, so it runs on a copy)."""
    from training import evaluate

    folder = shutil.copytree(MODEL, tmp_path / "model")
    evaluate.main([str(folder), *EVALUATIONS[report]])
    got, want = json.loads((folder / report).read_text())["summary"], card(report)
    assert got["format_ok"] == 1.0
    if "mean_iou" in want:
        assert got["mean_iou"] == pytest.approx(want["mean_iou"], abs=0.03)
        assert got["mean_iou"] >= 0.8  # the issue's target
        for kind, numbers in want["by_kind"].items():
            assert got["by_kind"][kind]["mean_iou"] == pytest.approx(numbers["mean_iou"],
                                                                     abs=0.07)
    if "present_scores_higher" in want:
        assert got["present_scores_higher"] == pytest.approx(want["present_scores_higher"],
                                                             abs=0.05)
    if "boundaries_within_half_second" in want:  # the issue's caption target
        assert got["boundaries_within_half_second"] == pytest.approx(
            want["boundaries_within_half_second"], abs=0.05)


@pytest.mark.parametrize("variant", [{}, {"vfr": True}, {"start_offset": 1.5},
                                     {"vfr": "jitter", "start_offset": 2.0}],
                         ids=["cfr", "vfr", "start-offset", "vfr-and-offset"])
def test_find_gives_the_true_spans_in_video_time(tmp_path: Path, variant: dict) -> None:
    """The whole app path (probe, sampling, prompt timestamps, the model, parsing, ranking):
    the asked segment is found where it is, whatever the file's frame timing."""
    parts = [(3.0, "black"), (4.0, "green"), (2.0, "black"), (3.0, "blue")]
    video = write(tmp_path / "clip «1».mp4", parts, **variant)
    green, blue = find(bench_for(video), ["the green screen", "the blue screen"])
    assert iou(green.spans[0], (3.0, 7.0)) >= 0.8, green.spans
    assert iou(blue.spans[0], (9.0, 12.0)) >= 0.8, blue.spans


@pytest.mark.parametrize(("parts", "truth"), [
    ([(130, "black"), (10, "red"), (160, "black")], (130.0, 140.0)),
    ([(135, "black"), (10, "red"), (155, "black")], (135.0, 145.0)),
], ids=["at-130-140s", "across-the-140s-window-boundary"])
def test_an_event_in_a_five_minute_video_is_found_where_it_is(tmp_path: Path, parts: Parts,
                                                              truth: tuple[float, float]) -> None:
    """20 s windows (what the model was trained on): the window offset is added back, and an
    event split by a window boundary comes back whole (the two windows' halves merge). The
    model answers a span in every window (as Marlin does): the black windows' guesses must rank
    below the real moment and must not stretch it."""
    bench = bench_for(write(tmp_path / "five minutes.mp4", parts), window=20.0)
    assert bench.total_windows == 15
    red = find(bench, ["the red screen"])[0]
    best = red.spans[0]
    assert iou(best, truth) >= 0.8, red.spans[:3]


def test_the_caption_timeline_matches_the_segments(tmp_path: Path) -> None:
    parts = [(1.0, "black"), (4.0, "blue"), (2.0, "black"), (5.0, "red"), (2.0, "black"),
             (3.0, "yellow"), (1.0, "black")]
    analysis, _ = analyze(bench_for(write(tmp_path / "clip.mp4", parts, vfr=True)))
    got = [(e.start, e.end, e.description) for e in analysis.events]
    truth = [(1.0, 5.0, "blue"), (7.0, 12.0, "red"), (14.0, 17.0, "yellow")]
    assert len(got) == len(truth), got
    for (start, end, text), (a, b, colour) in zip(got, truth, strict=True):
        assert colour in text and abs(start - a) <= 0.5 and abs(end - b) <= 0.5, got


# The model's time resolution in a 20 s window: a frame every ~0.51 s and two frames per time
# step, so a cut that falls inside a step is placed at either of its ends (the held-out caption
# boundaries, on whole seconds, are within 0.5 s for 98 % of the clips: the model card).
STEP = 1.05


def test_the_gui_selftest_on_the_demo_video_shows_the_right_events(tmp_path: Path) -> None:
    """The packaged app's self-test: the real window, the bundled demo video and demo model,
    the whole caption and the demo's query; what the timeline's lanes hold is the truth (the
    right events in the right order, each boundary within one time step)."""
    assert demo_video().is_file()
    shot = tmp_path / "selftest.png"
    out = subprocess.run(
        [sys.executable, "-m", "marlin_desk", "selftest", "--json", "--max-tokens", "0",
         "--query", DEMO_QUERY, "--screenshot", str(shot)],
        capture_output=True, text=True, timeout=300, env={**os.environ,
                                                          "QT_QPA_PLATFORM": "offscreen"})
    assert out.returncode == 0, out.stdout + out.stderr
    summary = json.loads(out.stdout)
    assert summary["video_source"] == "demo" and shot.is_file()
    events = summary["timeline"]["events"]
    assert len(events) == len(DEMO_SEGMENTS), events
    for event, (a, b, colour) in zip(events, DEMO_SEGMENTS, strict=True):
        assert colour in event["label"], events
        assert abs(event["start"] - a) <= STEP and abs(event["end"] - b) <= STEP, events
    blue = summary["timeline"]["results"]  # a 20 s video is one window: one span
    assert len(blue) == 1 and abs(blue[0]["start"] - 8.0) <= STEP \
        and abs(blue[0]["end"] - 13.0) <= STEP, blue
