"""Window planning, shifting to video time, merging across windows, ranking and summaries."""

from __future__ import annotations

import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from marlin_desk.core.timeline import Event, Span
from marlin_desk.core.windows import (
    MIN_WINDOW_SECONDS,
    Window,
    close_boundary_gaps,
    drop_guesses_beside_sure_spans,
    merge_events,
    merge_spans,
    plan_windows,
    rank_spans,
    shift_events,
    shift_span,
    summarize_scenes,
    text_similarity,
)


def _ranges(windows: list[Window]) -> list[tuple[float, float]]:
    return [(round(w.start, 9), round(w.end, 9)) for w in windows]


def _assert_valid_plan(windows: list[Window], duration: float, window: float,
                       overlap: float) -> None:
    """Complete, ordered, contiguous-or-overlapping coverage; no window longer than asked."""
    assert [w.index for w in windows] == list(range(len(windows)))
    assert windows[0].start == 0.0
    assert windows[-1].end == pytest.approx(duration)
    for prev, cur in zip(windows, windows[1:], strict=False):
        assert cur.start > prev.start
        assert cur.start <= prev.end + 1e-9  # no gap
        assert cur.end > prev.end  # each window brings new footage
    if len(windows) > 1:
        for w in windows:
            assert w.duration <= window + 1e-6
        # no sliver: the last window is full, or brings >= 2 s the previous one did not see
        last, prev = windows[-1], windows[-2]
        new = last.end - prev.end
        assert (last.duration == pytest.approx(window)
                or new >= MIN_WINDOW_SECONDS + overlap - (prev.end - last.start) - 1e-6)
        assert last.duration >= min(window, MIN_WINDOW_SECONDS) - 1e-6
    # Windows before the last are spaced exactly by the step.
    step = window - overlap
    for i, w in enumerate(windows[:-1]):
        assert w.start == pytest.approx(i * step)


# --------------------------------------------------------------------------------------------
# plan_windows

@pytest.mark.parametrize(("duration", "window", "overlap", "expected"), [
    (0.5, 120, 0, [(0, 0.5)]),
    (1.9, 120, 0, [(0, 1.9)]),
    (2.0, 120, 0, [(0, 2.0)]),
    (1.9, 1.0, 0, [(0, 1.9)]),  # under 2 s: one window, whatever the window size
    (119.999, 120, 0, [(0, 119.999)]),
    (120.0, 120, 0, [(0, 120.0)]),
    (120.0000001, 120, 0, [(0, 120.0000001)]),
    (121.0, 120, 0, [(0, 120), (1, 121)]),  # a 1 s tail would be a sliver: full window instead
    (122.0, 120, 0, [(0, 120), (120, 122)]),  # 2 s tail: enough for the model
    (150.0, 120, 0, [(0, 120), (120, 150)]),
    (240.0, 120, 0, [(0, 120), (120, 240)]),
    (600.0, 120, 0, [(0, 120), (120, 240), (240, 360), (360, 480), (480, 600)]),
    (600.0, 120, 30, [(0, 120), (90, 210), (180, 300), (270, 390), (360, 480), (450, 570),
                      (540, 600)]),
    (610.0, 120, 0, [(0, 120), (120, 240), (240, 360), (360, 480), (480, 600), (600, 610)]),
    (601.0, 120, 0, [(0, 120), (120, 240), (240, 360), (360, 480), (480, 600), (481, 601)]),
    (181.0, 120, 60, [(0, 120), (60, 180), (61, 181)]),
    (183.0, 120, 60, [(0, 120), (60, 180), (120, 183)]),
    (100.0, 60, 0, [(0, 60), (60, 100)]),
    (10.0, 3, 2, [(0, 3), (1, 4), (2, 5), (3, 6), (4, 7), (5, 8), (6, 9), (7, 10)]),
])
def test_plan_windows_cases(duration: float, window: float, overlap: float,
                            expected: list[tuple[float, float]]) -> None:
    windows = plan_windows(duration, window, overlap)
    assert _ranges(windows) == [(float(a), float(b)) for a, b in expected]
    _assert_valid_plan(windows, duration, window, overlap)


def test_three_hours_is_90_windows_and_fast() -> None:
    t0 = time.perf_counter()
    windows = plan_windows(3 * 3600.0)
    assert time.perf_counter() - t0 < 0.1
    assert len(windows) == 90
    assert all(w.duration == pytest.approx(120.0) for w in windows)
    _assert_valid_plan(windows, 3 * 3600.0, 120.0, 0.0)


def test_three_hours_with_overlap() -> None:
    windows = plan_windows(3 * 3600.0, 120.0, 20.0)
    assert len(windows) == 108  # ceil((10800 - 120) / 100) + 1
    _assert_valid_plan(windows, 3 * 3600.0, 120.0, 20.0)


def test_max_window_allows_longer_windows() -> None:
    with pytest.raises(ValueError, match="max_window"):
        plan_windows(600, window=180)
    windows = plan_windows(600, window=180, max_window=300)
    assert _ranges(windows) == [(0, 180), (180, 360), (360, 540), (540, 600)]


@pytest.mark.parametrize(("args", "kwargs", "match"), [
    ((0,), {}, "duration"),
    ((-5,), {}, "duration"),
    ((float("nan"),), {}, "finite"),
    ((float("inf"),), {}, "finite"),
    ((60, 0), {}, "window"),
    ((60, -1), {}, "window"),
    ((60, 120.5), {}, "max_window"),
    ((60, 60, 60), {}, "overlap"),
    ((60, 60, -1), {}, "overlap"),
    ((60, 60, 70), {}, "overlap"),
    ((10_000, 100, 99.9999), {}, "too close"),
])
def test_plan_windows_validation(args: tuple[float, ...], kwargs: dict[str, float],
                                 match: str) -> None:
    with pytest.raises(ValueError, match=match):
        plan_windows(*args, **kwargs)


@settings(max_examples=300, deadline=None)
@given(st.floats(0.01, 20_000), st.floats(2.0, 120.0), st.floats(0.0, 0.9))
def test_plan_windows_property(duration: float, window: float, overlap_fraction: float) -> None:
    overlap = window * overlap_fraction
    windows = plan_windows(duration, window, overlap)
    _assert_valid_plan(windows, duration, window, overlap)


def test_window_json_and_duration() -> None:
    w = Window(3, 360.0, 480.00049)
    assert w.duration == pytest.approx(120.00049)
    assert w.to_json() == {"index": 3, "start": 360.0, "end": 480.0}


# --------------------------------------------------------------------------------------------
# shifting

def test_shift_to_video_time() -> None:
    w = plan_windows(600)[2]
    events = [Event(0.0, 2.5, "a"), Event(100.0, 120.0, "b")]
    assert shift_events(events, w.start) == [Event(240.0, 242.5, "a"), Event(340.0, 360.0, "b")]
    span = Span(1.0, 2.0, score=0.7, window=2, low_confidence=True)
    assert shift_span(span, w.start) == Span(241.0, 242.0, 0.7, 2, True)


# --------------------------------------------------------------------------------------------
# similarity and merge_events

@pytest.mark.parametrize(("a", "b", "low", "high"), [
    ("a dog runs", "A dog runs.", 1.0, 1.0),
    ("a man opens the door", "the man slowly opens a door", 0.7, 0.8),
    ("a dog runs", "a dog is running across the field", 0.5, 0.5),
    ("a dog barks", "a man opens the door", 0.0, 0.0),
    ("a man sits down", "a man stands up", 0.0, 0.2),
    ("the", "a", 0.0, 0.0),
    ("...", "!!", 1.0, 1.0),
])
def test_text_similarity(a: str, b: str, low: float, high: float) -> None:
    assert low - 1e-9 <= text_similarity(a, b) <= high + 1e-9
    assert text_similarity(a, b) == text_similarity(b, a)


def test_event_cut_by_window_boundary_is_merged() -> None:
    w0, w1 = plan_windows(240)
    window0 = shift_events([Event(100.0, 120.0, "a dog runs")], w0.start)
    window1 = shift_events([Event(0.0, 5.0, "a dog runs")], w1.start)
    assert merge_events(window0 + window1) == [Event(100.0, 125.0, "a dog runs")]


def test_event_seen_by_overlapping_windows_is_merged_with_the_richer_description() -> None:
    events = [Event(95.0, 110.0, "a man opens the door"),
              Event(96.0, 112.0, "The man slowly opens a wooden door.")]
    assert merge_events(events) == [Event(95.0, 112.0, "The man slowly opens a wooden door.")]


def test_different_events_at_the_same_time_stay_apart() -> None:
    events = [Event(10.0, 20.0, "a dog barks in the yard"),
              Event(12.0, 18.0, "a man opens the door"),
              Event(19.0, 25.0, "rain starts falling")]
    assert merge_events(events) == events


def test_same_text_far_apart_stays_apart() -> None:
    events = [Event(10.0, 12.0, "a man claps"), Event(13.5, 15.0, "a man claps")]
    assert merge_events(events) == events
    assert merge_events(events, max_gap=2.0) == [Event(10.0, 15.0, "a man claps")]


def test_min_similarity_controls_merging() -> None:
    events = [Event(1.0, 3.0, "a dog runs"), Event(2.0, 4.0, "a brown dog runs across grass")]
    assert len(merge_events(events)) == 2  # 2 of 5 words shared: 0.4
    assert merge_events(events, min_similarity=0.4) == [
        Event(1.0, 4.0, "a brown dog runs across grass")]
    assert len(merge_events(events, min_similarity=1.0)) == 2


def test_merge_is_sorted_and_chains_through_a_bridging_event() -> None:
    # A and B share too few words (0.4) to merge; C is like both, so all three become one.
    events = [Event(50.0, 52.0, "a car passes"),
              Event(0.0, 5.0, "a brown dog runs"),
              Event(1.0, 6.0, "dog runs across the beach"),
              Event(4.0, 8.0, "a brown dog runs across the beach")]
    assert text_similarity(events[1].description, events[2].description) < 0.5
    assert merge_events(events) == [Event(0.0, 8.0, "a brown dog runs across the beach"),
                                    Event(50.0, 52.0, "a car passes")]


def test_merge_validation() -> None:
    with pytest.raises(ValueError):
        merge_events([], min_similarity=1.5)
    with pytest.raises(ValueError):
        merge_events([], max_gap=-1)
    assert merge_events([]) == []


_DESCRIPTIONS = ["a dog runs on the beach", "the chef slices onions quickly",
                 "rain falls over empty streets", "two children kick a football",
                 "an old car drives past slowly", "fireworks burst above the river"]


@st.composite
def _true_timeline(draw: st.DrawFn) -> tuple[float, list[Event]]:
    """Sequential events with dissimilar neighbours and gaps wider than max_gap."""
    t = draw(st.floats(0, 30))
    events = []
    for i in range(draw(st.integers(1, 12))):
        length = draw(st.floats(0.5, 150))
        events.append(Event(round(t, 1), round(t + length, 1),
                            _DESCRIPTIONS[i % len(_DESCRIPTIONS)]))
        t += length + draw(st.floats(1.5, 40))
    return t + draw(st.floats(0, 30)), events


@settings(max_examples=150)
@given(_true_timeline(), st.sampled_from([0.0, 10.0, 30.0]))
def test_windowed_analysis_recovers_the_true_timeline(timeline: tuple[float, list[Event]],
                                                      overlap: float) -> None:
    duration, truth = timeline
    seen: list[Event] = []
    for w in plan_windows(duration, 120.0, overlap):
        local = [Event(max(e.start, w.start) - w.start, min(e.end, w.end) - w.start,
                       e.description)
                 for e in truth if e.start < w.end and e.end > w.start]
        seen += shift_events(local, w.start)
    merged = merge_events(seen)
    assert [e.description for e in merged] == [e.description for e in truth]
    assert [t for e in merged for t in (e.start, e.end)] == pytest.approx(
        [t for e in truth for t in (e.start, e.end)])


_any_event = st.builds(lambda s, d, text: Event(s, s + d, text), st.floats(0, 500),
                       st.floats(0, 60), st.sampled_from(_DESCRIPTIONS + ["a dog runs",
                                                                         "the dog is running"]))


@given(st.lists(_any_event, max_size=30))
def test_merge_properties(events: list[Event]) -> None:
    merged = merge_events(events)
    assert merge_events(merged) == merged  # a fixed point
    assert len(merged) <= len(events)
    assert [e.start for e in merged] == sorted(e.start for e in merged)
    for e in events:  # every input range lies inside a merged event that kept a real text
        assert any(m.start <= e.start and e.end <= m.end for m in merged)
    assert {m.description for m in merged} <= {e.description for e in events}


# --------------------------------------------------------------------------------------------
# spans

def test_merge_spans_unions_and_keeps_the_best() -> None:
    spans = [Span(10.0, 14.0, 0.4, window=0), Span(12.0, 18.0, 0.9, window=1, low_confidence=True),
             Span(30.0, 31.0, 0.5, window=2), Span(17.0, 19.0, None, window=1)]
    assert merge_spans(spans) == [Span(10.0, 19.0, 0.9, 1, True), Span(30.0, 31.0, 0.5, 2)]


def test_merge_spans_touching_and_gaps() -> None:
    spans = [Span(0.0, 5.0, 0.2, 0), Span(5.0, 8.0, 0.3, 1), Span(9.0, 10.0, 0.1, 1)]
    assert merge_spans(spans) == [Span(0.0, 8.0, 0.3, 1), Span(9.0, 10.0, 0.1, 1)]
    assert merge_spans(spans, max_gap=1.0) == [Span(0.0, 10.0, 0.3, 1)]


def test_merge_spans_without_scores_keeps_the_first() -> None:
    assert merge_spans([Span(3.0, 6.0, None, 1), Span(1.0, 4.0, None, 0)]) == [
        Span(1.0, 6.0, None, 0)]
    assert merge_spans([]) == []


_span = st.builds(lambda s, d, score, w: Span(s, s + d, score, w), st.floats(0, 1000),
                  st.floats(0, 50), st.one_of(st.none(), st.floats(-5, 5)), st.integers(0, 9))


@given(st.lists(_span, max_size=30))
def test_merge_spans_properties(spans: list[Span]) -> None:
    merged = merge_spans(spans)
    for a, b in zip(merged, merged[1:], strict=False):
        assert a.end < b.start  # disjoint and sorted
    for s in spans:
        assert any(m.start <= s.start and s.end <= m.end for m in merged)
    scores = [s.score for s in spans if s.score is not None]
    if scores:
        assert max(m.score for m in merged if m.score is not None) == max(scores)


def test_rank_spans() -> None:
    spans = [Span(1, 2, 0.3), Span(5, 6, None), Span(3, 4, 0.9), Span(0, 1, 0.3), Span(7, 8, -1)]
    assert rank_spans(spans) == [Span(3, 4, 0.9), Span(0, 1, 0.3), Span(1, 2, 0.3),
                                 Span(7, 8, -1), Span(5, 6, None)]
    assert rank_spans(spans, top=2) == [Span(3, 4, 0.9), Span(0, 1, 0.3)]
    assert rank_spans(spans, top=0) == []
    assert len(rank_spans(spans, top=99)) == 5
    with pytest.raises(ValueError):
        rank_spans(spans, top=-1)


def test_find_across_windows_end_to_end() -> None:
    """Per-window answers shifted, merged across an overlap, then the top one picked."""
    windows = plan_windows(300, 120, 20)
    answers = {0: Span(105.0, 118.0, 0.8), 1: Span(5.0, 9.0, 0.6), 2: Span(40.0, 50.0, 0.95)}
    spans = [Span(s.start, s.end, s.score, w.index).shifted(w.start)
             for w in windows for i, s in answers.items() if i == w.index]
    merged = merge_spans(spans)
    assert merged == [Span(105.0, 118.0, 0.8, 0), Span(240.0, 250.0, 0.95, 2)]
    assert rank_spans(merged, top=1) == [Span(240.0, 250.0, 0.95, 2)]


# --------------------------------------------------------------------------------------------
# summarize_scenes

def test_summary_takes_first_sentences_and_drops_near_duplicates() -> None:
    scenes = ["A kitchen with white cabinets. A woman cooks pasta.",
              "A kitchen with white cabinets and a window. She drains the pot.",
              "", "   ",
              "A quiet street at night. Cars pass."]
    assert summarize_scenes(scenes) == "A kitchen with white cabinets. A quiet street at night."


def test_summary_is_cut_at_a_sentence_boundary() -> None:
    scenes = ["A kitchen with white cabinets.", "A quiet street at night.", "A beach at dawn."]
    assert summarize_scenes(scenes, max_chars=60) == (
        "A kitchen with white cabinets. A quiet street at night.")
    assert summarize_scenes(scenes, max_chars=30) == "A kitchen with white cabinets."


def test_summary_of_one_long_sentence_is_cut_at_a_word() -> None:
    out = summarize_scenes(["A very long description of a crowded market full of people"],
                           max_chars=25)
    assert out == "A very long description\u2026"
    assert len(out) <= 25


def test_summary_adds_a_full_stop_and_handles_nothing() -> None:
    assert summarize_scenes(["A park\nwith trees"]) == "A park with trees."
    assert summarize_scenes([]) == ""
    with pytest.raises(ValueError):
        summarize_scenes(["A park."], max_chars=0)


@given(st.lists(st.text(max_size=200), max_size=10), st.integers(1, 500))
def test_summary_never_exceeds_max_chars(scenes: list[str], max_chars: int) -> None:
    assert len(summarize_scenes(scenes, max_chars)) <= max_chars


def test_a_guess_beside_a_sure_span_does_not_stretch_it() -> None:
    """Marlin answers a span in every window: the next window's unsure guess touching the real
    moment is dropped before merging; unsure guesses elsewhere stay (ranked last)."""
    real = Span(130.0, 140.0, -0.01, window=6)
    touching_guess = Span(140.0, 152.0, -2.3, window=7, low_confidence=True)
    overlapping_guess = Span(125.0, 131.0, -1.9, window=6, low_confidence=True)
    far_guess = Span(40.0, 47.0, -2.0, window=2, low_confidence=True)
    kept = drop_guesses_beside_sure_spans([far_guess, real, touching_guess, overlapping_guess])
    assert kept == [far_guess, real]
    assert rank_spans(merge_spans(kept)) == [real, far_guess]
    # two sure halves of one event split by a window boundary still merge whole
    halves = [Span(135.0, 140.0, -0.02, 6), Span(140.0, 145.0, -0.03, 7)]
    assert merge_spans(drop_guesses_beside_sure_spans(halves)) == [Span(135.0, 145.0, -0.02, 6)]
    # nothing sure: every guess stays
    assert drop_guesses_beside_sure_spans([touching_guess, far_guess]) == [touching_guess,
                                                                          far_guess]


def test_a_moment_cut_by_a_window_boundary_is_joined_across_a_small_gap() -> None:
    """Each window sees frames up to ~1 s before its end: 135-139 in window 6 and 140-145 in
    window 7 are one moment; spans that stop short of the boundary, or unsure ones, are not."""
    plan = plan_windows(300.0, 20.0)
    halves = [Span(135.0, 139.0, -0.05, 6), Span(140.0, 145.0, -0.02, 7)]
    assert merge_spans(close_boundary_gaps(halves, plan)) == [Span(135.0, 145.0, -0.02, 7)]
    apart = [Span(135.0, 138.5, -0.05, 6), Span(140.0, 145.0, -0.02, 7)]
    assert len(merge_spans(close_boundary_gaps(apart, plan))) == 2
    unsure = [Span(135.0, 139.0, -0.05, 6), Span(140.0, 145.0, -2.0, 7, low_confidence=True)]
    assert close_boundary_gaps(unsure, plan) == unsure
