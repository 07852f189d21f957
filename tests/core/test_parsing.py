"""Parsing Marlin-2B's answers: real-looking outputs, broken ones, properties over random text."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from marlin_desk.core.parsing import (
    CaptionParse,
    FindParse,
    parse_caption,
    parse_find,
    parse_time,
    strip_think,
)
from marlin_desk.core.timeline import Event, Span

CANON = (
    "Scene: A small kitchen with white cabinets and a window on the left.\n"
    "Events:\n"
    "<0.0 - 2.5> a woman opens the fridge\n"
    "<2.5 - 5.0> she takes out a bottle of milk\n"
)
CANON_EVENTS = [(0.0, 2.5, "a woman opens the fridge"),
                (2.5, 5.0, "she takes out a bottle of milk")]
SCENE = "A small kitchen with white cabinets and a window on the left."


def _tuples(events: list[Event]) -> list[tuple[float, float, str]]:
    return [(round(e.start, 3), round(e.end, 3), e.description) for e in events]


# --------------------------------------------------------------------------------------------
# strip_think

@pytest.mark.parametrize(("text", "expected"), [
    ("<think>\n\n</think>\n\nScene: a room", "Scene: a room"),
    ("<think>Scene: a room", "Scene: a room"),
    ("<think>\nFrom 1.0 to 2.0.", "From 1.0 to 2.0."),
    ("  <think>\nI see a dog.\n</think>\nFrom 3 to 4.", "From 3 to 4."),
    ("I look at the frames.</think>\n\nFrom 3 to 4.", "From 3 to 4."),
    ("<think>From 5 to 6.</think>", "From 5 to 6."),
    ("<think></think><think>\nFrom 7 to 8.", "From 7 to 8."),
    ("From 1 to 2.", "From 1 to 2."),
    ("<think>\n\n</think>", ""),
    ("", ""),
], ids=["empty-block", "unclosed-scene", "unclosed-find", "reasoning-then-answer",
        "template-opened", "answer-inside-block", "two-blocks", "no-think", "only-block", "empty"])
def test_strip_think(text: str, expected: str) -> None:
    assert strip_think(text) == expected


@given(st.sampled_from(["<think>", "<think>\n", "<think>\n\n</think>\n\n", "<think></think>",
                        "<think>\nhmm, a dog.\n</think>\n", ""]),
       st.sampled_from(["Scene: A park.\nEvents:\n<0.0 - 1.0> a dog runs", "From 1.5 to 3.0.",
                        "<1.0 - 2.0> a cat sits"]))
def test_strip_think_never_loses_the_answer(prefix: str, answer: str) -> None:
    assert strip_think(prefix + answer) == answer


# --------------------------------------------------------------------------------------------
# parse_time

@pytest.mark.parametrize(("text", "seconds"), [
    ("12.5", 12.5), ("12,5", 12.5), ("12.5s", 12.5), ("12.5 s", 12.5), ("12.5 seconds", 12.5),
    ("12 sec", 12.0), ("1:05", 65.0), ("1:05.5", 65.5), ("1:05,5", 65.5), ("01:02:03.5", 3723.5),
    ("0:00:07", 7.0), ("75:30", 4530.0), ("0", 0.0), (" 7 ", 7.0), (".5", 0.5), ("12.", 12.0),
    ("-1.5", -1.5),
])
def test_parse_time(text: str, seconds: float) -> None:
    assert parse_time(text) == pytest.approx(seconds)


@pytest.mark.parametrize("text", ["", "abc", "1:75", "1:2:3:4", "12.5.5", "1,2,3", "nan", "inf",
                                  "1e5", "twelve", "12 minutes", "1:05:", "--1", "9" * 400])
def test_parse_time_rejects(text: str) -> None:
    with pytest.raises(ValueError):
        parse_time(text)


@given(st.integers(0, 30), st.integers(0, 59), st.integers(0, 59), st.integers(0, 9))
def test_parse_time_clock_forms_round_trip(h: int, m: int, s: int, tenth: int) -> None:
    total = h * 3600 + m * 60 + s + tenth / 10
    assert parse_time(f"{h}:{m:02d}:{s:02d}.{tenth}") == pytest.approx(total)
    assert parse_time(f"{h * 60 + m}:{s:02d},{tenth}") == pytest.approx(total)


@given(st.text(max_size=40))
def test_parse_time_raises_only_value_error(text: str) -> None:
    try:
        value = parse_time(text)
    except ValueError:
        return
    assert math.isfinite(value)


# --------------------------------------------------------------------------------------------
# parse_caption: parametrised real-looking and broken answers

CaptionCase = tuple[str, float | None, list[tuple[float, float, str]], bool, str | None, list[str]]

CAPTION_CASES: dict[str, CaptionCase] = {
    "canonical": (CANON, None, CANON_EVENTS, True, SCENE, []),
    "think-empty-block": ("<think>\n\n</think>\n\n" + CANON, None, CANON_EVENTS, True, SCENE, []),
    "think-unclosed": ("<think>" + CANON, None, CANON_EVENTS, True, SCENE, []),
    "think-opened-by-template": ("Let me look.\n</think>\n\n" + CANON, None, CANON_EVENTS, True,
                                 SCENE, []),
    "answer-inside-think": ("<think>" + CANON + "</think>", None, CANON_EVENTS, False, SCENE,
                            ["inside the <think> block"]),
    "special-tokens": (CANON + "<|im_end|>", None, CANON_EVENTS, True, SCENE, []),
    "crlf": (CANON.replace("\n", "\r\n"), None, CANON_EVENTS, True, SCENE, []),
    "multi-line-scene": (
        "Scene: A small kitchen.\nThe window is on the left.\n\nA radio plays.\nEvents:\n"
        "<0.0 - 1.0> a kettle boils\n", None, [(0.0, 1.0, "a kettle boils")], True,
        "A small kitchen. The window is on the left. A radio plays.", []),
    "scene-on-next-line": ("Scene:\nA beach at dusk.\nEvents:\n<1.0 - 2.0> a gull lands\n", None,
                           [(1.0, 2.0, "a gull lands")], True, "A beach at dusk.", []),
    "no-scene-header": ("A beach at dusk.\nEvents:\n<1.0 - 2.0> a gull lands\n", None,
                        [(1.0, 2.0, "a gull lands")], False, "A beach at dusk.",
                        ["no 'Scene:' header"]),
    "no-events-header": ("Scene: A beach.\n<1.0 - 2.0> a gull lands\n<3.0 - 4.0> a wave breaks",
                         None, [(1.0, 2.0, "a gull lands"), (3.0, 4.0, "a wave breaks")], False,
                         "A beach.", ["no 'Events:' header"]),
    "no-headers": ("A beach.\n<1.0 - 2.0> a gull lands\n", None, [(1.0, 2.0, "a gull lands")],
                   False, "A beach.", ["no 'Scene:' header", "no 'Events:' header"]),
    "extra-spaces": ("Scene:   A road.  \nEvents:\n  <  12.5   -  17.0 >   a car   passes  \n",
                     None, [(12.5, 17.0, "a car passes")], True, "A road.", []),
    "decimal-comma": ("Scene: A road.\nEvents:\n<12,5 - 17,0> a car passes\n", None,
                      [(12.5, 17.0, "a car passes")], False, "A road.", ["decimal comma"]),
    "m-ss": ("Scene: A road.\nEvents:\n<1:05 - 1:10> a car passes\n", None,
             [(65.0, 70.0, "a car passes")], False, "A road.", ["m:ss"]),
    "h-mm-ss": ("Scene: A road.\nEvents:\n<0:01:05.5 - 0:01:10> a car passes\n", None,
                [(65.5, 70.0, "a car passes")], False, "A road.", ["m:ss"]),
    "units": ("Scene: A road.\nEvents:\n<12.5s - 17s> a car passes\n", None,
              [(12.5, 17.0, "a car passes")], False, "A road.", ["units"]),
    "en-dash": ("Scene: A road.\nEvents:\n<12.5 \u2013 17.0> a car passes\n", None,
                [(12.5, 17.0, "a car passes")], False, "A road.", ["dash"]),
    "em-dash": ("Scene: A road.\nEvents:\n<12.5\u201417.0> a car passes\n", None,
                [(12.5, 17.0, "a car passes")], False, "A road.", ["dash"]),
    "word-to": ("Scene: A road.\nEvents:\n<12.5 to 17.0> a car passes\n", None,
                [(12.5, 17.0, "a car passes")], False, "A road.", ["dash"]),
    "dash-bullets": ("Scene: A road.\nEvents:\n- <1.0 - 2.0> a car passes\n- <3.0 - 4.0> a bus "
                     "stops\n", None, [(1.0, 2.0, "a car passes"), (3.0, 4.0, "a bus stops")],
                     False, "A road.", ["bullets or numbers before the range (2 lines)"]),
    "star-and-dot-bullets": ("Scene: A road.\nEvents:\n* <1.0 - 2.0> a car passes\n\u2022 <3.0 - "
                             "4.0> a bus stops\n", None,
                             [(1.0, 2.0, "a car passes"), (3.0, 4.0, "a bus stops")], False,
                             "A road.", ["bullets"]),
    "numbered": ("Scene: A road.\nEvents:\n1. <1.0 - 2.0> a car passes\n2) <3.0 - 4.0> a bus "
                 "stops\n", None, [(1.0, 2.0, "a car passes"), (3.0, 4.0, "a bus stops")], False,
                 "A road.", ["bullets"]),
    "no-brackets-colon": ("Scene: A road.\nEvents:\n12.5 - 17.0: a car passes\n", None,
                          [(12.5, 17.0, "a car passes")], False, "A road.",
                          ["not written as <start - end>"]),
    "no-brackets-decimal": ("Scene: A road.\nEvents:\n12.5 - 17.0 a car passes\n", None,
                            [(12.5, 17.0, "a car passes")], False, "A road.",
                            ["not written as <start - end>"]),
    "square-brackets": ("Scene: A road.\nEvents:\n[12.5 - 17.0] a car passes\n", None,
                        [(12.5, 17.0, "a car passes")], False, "A road.", ["not written"]),
    "markdown": ("**Scene:** A road.\n**Events:**\n**<1.0 - 2.0>** a car passes\n", None,
                 [(1.0, 2.0, "a car passes")], False, "A road.", ["Scene header", "Events header"]),
    "lowercase-headers": ("scene: A road.\nevents:\n<1.0 - 2.0> a car passes\n", None,
                          [(1.0, 2.0, "a car passes")], False, "A road.", ["Scene header"]),
    "event-on-events-line": ("Scene: A road.\nEvents: <1.0 - 2.0> a car passes\n", None,
                             [(1.0, 2.0, "a car passes")], False, "A road.", ["Events header"]),
    "reversed": ("Scene: A road.\nEvents:\n<17.0 - 12.5> a car passes\n", None,
                 [(12.5, 17.0, "a car passes")], False, "A road.", ["reversed"]),
    "zero-length-kept": ("Scene: A road.\nEvents:\n<5.0 - 5.0> a horn sounds\n", None,
                         [(5.0, 5.0, "a horn sounds")], True, "A road.", []),
    "past-clip-end-clamped": ("Scene: A road.\nEvents:\n<25.0 - 40.0> a car passes\n", 30.0,
                              [(25.0, 30.0, "a car passes")], False, "A road.",
                              ["past the clip's end"]),
    "rounding-at-end-silent": ("Scene: A road.\nEvents:\n<25.0 - 30.0> a car passes\n", 29.96,
                               [(25.0, 29.96, "a car passes")], True, "A road.", []),
    "start-after-end-dropped": ("Scene: A road.\nEvents:\n<1.0 - 2.0> a car passes\n"
                                "<30.0 - 35.0> a bus stops\n<31.0 - 33.0> rain\n", 30.0,
                                [(1.0, 2.0, "a car passes")], False, "A road.",
                                ["at or after the clip's end dropped (2x)"]),
    "negative-clamped": ("Scene: A road.\nEvents:\n<-0.5 - 2.0> a car passes\n", None,
                         [(0.0, 2.0, "a car passes")], False, "A road.", ["negative"]),
    "wholly-negative-dropped": ("Scene: A road.\nEvents:\n<-3.0 - -1.0> a car passes\n"
                                "<1.0 - 2.0> a bus stops\n", None, [(1.0, 2.0, "a bus stops")],
                                False, "A road.", ["before the clip's start"]),
    "overlapping-kept": ("Scene: A road.\nEvents:\n<1.0 - 5.0> a car passes\n<2.0 - 3.0> a dog "
                         "barks\n", None, [(1.0, 5.0, "a car passes"), (2.0, 3.0, "a dog barks")],
                         True, "A road.", []),
    "unsorted-sorted": ("Scene: A road.\nEvents:\n<5.0 - 6.0> b\n<1.0 - 2.0> a\n", None,
                        [(1.0, 2.0, "a"), (5.0, 6.0, "b")], True, "A road.", []),
    "duplicates-dropped": ("Scene: A road.\nEvents:\n" + "<1.0 - 2.0> a car passes\n" * 40
                           + "<3.0 - 4.0> a bus stops\n", None,
                           [(1.0, 2.0, "a car passes"), (3.0, 4.0, "a bus stops")], False,
                           "A road.", ["duplicate event dropped (39x)"]),
    "junk-line": ("Scene: A road.\nEvents:\n<1.0 - 2.0> a car passes\nNote: times are rough.\n",
                  None, [(1.0, 2.0, "a car passes")], False, "A road.",
                  ['ignored 1 non-event line: "Note: times are rough."']),
    "many-junk-lines-capped": ("Scene: A road.\nEvents:\n<1.0 - 2.0> a car passes\n"
                               + "".join(f"blah {i}\n" for i in range(20)), None,
                               [(1.0, 2.0, "a car passes")], False, "A road.",
                               ["ignored 20 non-event lines", "and 17 more"]),
    "truncated-last-line": ("Scene: A road.\nEvents:\n<1.0 - 2.0> a car passes\n<118.5 - 12",
                            None, [(1.0, 2.0, "a car passes")], False, "A road.", ["ignored"]),
    "range-without-description": ("Scene: A road.\nEvents:\n<1.0 - 2.0>\n<3.0 - 4.0> rain\n",
                                  None, [(3.0, 4.0, "rain")], False, "A road.", ["ignored"]),
    "prose-number-range-not-event": ("Scene: 2 - 3 people wait at a stop.\nEvents:\n"
                                     "<1.0 - 2.0> a bus stops\n", None,
                                     [(1.0, 2.0, "a bus stops")], True,
                                     "2 - 3 people wait at a stop.", []),
    "prose-range-without-header": ("2 - 3 people wait.\n<1.0 - 2.0> a bus stops\n", None,
                                   [(1.0, 2.0, "a bus stops")], False, "2 - 3 people wait.",
                                   ["no 'Scene:' header"]),
    "scene-after-events": ("Events:\n<1.0 - 2.0> a bus stops\nScene: A road.\n", None,
                           [(1.0, 2.0, "a bus stops")], False, "A road.", ["after the events"]),
    "empty-scene": ("Scene:\nEvents:\n<1.0 - 2.0> a bus stops\n", None,
                    [(1.0, 2.0, "a bus stops")], False, "", ["scene description is empty"]),
    "empty-answer": ("", None, [], False, "", ["empty"]),
    "only-think": ("<think>\n\n</think>\n\n", None, [], False, "", ["empty"]),
    "prose-only": ("I cannot describe this video.", None, [], False,
                   "I cannot describe this video.", ["no events"]),
}


@pytest.mark.parametrize("case", list(CAPTION_CASES.values()), ids=list(CAPTION_CASES))
def test_parse_caption_cases(case: CaptionCase) -> None:
    text, clip, events, ok, scene, problem_parts = case
    result = parse_caption(text, clip)
    assert _tuples(result.events) == events
    assert result.format_ok is ok
    assert result.format_ok == (not result.problems)
    if scene is not None:
        assert result.scene == scene
    for part in problem_parts:
        assert any(part in p for p in result.problems), (part, result.problems)


def test_caption_clip_duration_must_be_positive() -> None:
    with pytest.raises(ValueError):
        parse_caption(CANON, clip_duration=0)
    with pytest.raises(ValueError):
        parse_caption(CANON, clip_duration=float("nan"))


def test_caption_parse_is_frozen() -> None:
    result = parse_caption(CANON)
    assert isinstance(result, CaptionParse)
    with pytest.raises(AttributeError):
        result.scene = "x"  # type: ignore[misc]


# --------------------------------------------------------------------------------------------
# parse_caption: properties

_word = st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=1, max_size=8)
_description = st.lists(_word, min_size=1, max_size=8).map(" ".join)
_event = st.tuples(st.integers(0, 20_000), st.integers(0, 600), _description).map(
    lambda t: Event(t[0] / 10, (t[0] + t[1]) / 10, t[2]))


@given(st.lists(_event, max_size=25), st.lists(_word, min_size=1, max_size=30))
def test_caption_round_trip(events: list[Event], scene_words: list[str]) -> None:
    scene = " ".join(scene_words).capitalize() + "."
    text = f"Scene: {scene}\nEvents:\n" + "".join(
        f"<{e.start:.1f} - {e.end:.1f}> {e.description}\n" for e in events)
    result = parse_caption(text)
    unique = list({(e.start, e.end, e.description): e for e in events}.values())
    key = lambda e: (e.start, e.end, e.description)  # noqa: E731
    assert len(result.events) == len(unique)
    for got, want in zip(sorted(result.events, key=key), sorted(unique, key=key), strict=True):
        assert got.start == pytest.approx(want.start, abs=0.1)
        assert got.end == pytest.approx(want.end, abs=0.1)
        assert got.description == want.description
    assert result.scene == scene
    assert result.format_ok == (len(unique) == len(events))
    assert [e.start for e in result.events] == sorted(e.start for e in result.events)


_FRAGMENTS = ["Scene:", "Events:", "<think>", "</think>", "<1.0 - 2.0> a dog", "<2,5 - 1:05> x",
              "- 3 - 4: y", "12.5 - 17.0 z", "<-1 - -2> w", "<1e9 - 2> v", "**Events:**",
              "<|im_end|>", "From 1 to 2.", "<99999999999999999999999 - 1> q", "<1:99 - 2> r",
              "\u2022", "\n"]


def _check_caption_invariants(result: CaptionParse, clip: float | None) -> None:
    assert result.format_ok == (not result.problems)
    starts = [e.start for e in result.events]
    assert starts == sorted(starts)
    for e in result.events:
        assert 0 <= e.start <= e.end
        assert math.isfinite(e.end)
        assert e.description.strip()
        if clip is not None:
            assert e.start < clip and e.end <= clip


@given(st.text(max_size=400), st.one_of(st.none(), st.floats(0.5, 500)))
def test_caption_never_raises_on_arbitrary_text(text: str, clip: float | None) -> None:
    _check_caption_invariants(parse_caption(text, clip), clip)


@given(st.lists(st.one_of(st.sampled_from(_FRAGMENTS), st.text(max_size=12)), max_size=30),
       st.one_of(st.none(), st.floats(0.5, 500)))
def test_caption_never_raises_on_answer_like_text(parts: list[str], clip: float | None) -> None:
    _check_caption_invariants(parse_caption("\n".join(parts), clip), clip)
    _check_caption_invariants(parse_caption(" ".join(parts), clip), clip)


@given(st.lists(_event, min_size=1, max_size=10), st.floats(1.0, 2000.0))
def test_caption_clamps_to_clip(events: list[Event], clip: float) -> None:
    text = "Scene: A field.\nEvents:\n" + "".join(
        f"<{e.start:.1f} - {e.end:.1f}> {e.description}\n" for e in events)
    result = parse_caption(text, clip)
    _check_caption_invariants(result, clip)
    kept_inputs = {(e.start, e.description) for e in events if e.start < clip}
    assert {(e.start, e.description) for e in result.events} == kept_inputs


# --------------------------------------------------------------------------------------------
# parse_find

FindCase = tuple[str, float | None, tuple[float, float] | None, bool, list[str]]

FIND_CASES: dict[str, FindCase] = {
    "canonical": ("From 14.3 to 18.2.", None, (14.3, 18.2), True, []),
    "integers": ("From 14 to 18.", None, (14.0, 18.0), True, []),
    "no-full-stop": ("From 14.3 to 18.2", None, (14.3, 18.2), True, []),
    "think-closed": ("<think>\n\n</think>\n\nFrom 14.3 to 18.2.", None, (14.3, 18.2), True, []),
    "think-unclosed": ("<think>\nFrom 1.0 to 2.0.", None, (1.0, 2.0), True, []),
    "template-opened": ("The dog appears late.</think>\nFrom 1.0 to 2.0.", None, (1.0, 2.0),
                        True, []),
    "decimal-comma": ("From 14,3 to 18,2.", None, (14.3, 18.2), False, ["decimal comma"]),
    "m-ss": ("From 1:05 to 1:10.", None, (65.0, 70.0), False, ["m:ss"]),
    "h-mm-ss": ("From 0:00:14.3 to 0:00:18.2.", None, (14.3, 18.2), False, ["m:ss"]),
    "units": ("from 14.3s to 18.2s", None, (14.3, 18.2), False, ["units"]),
    "seconds-word": ("From 14.3 to 18.2 seconds.", None, (14.3, 18.2), False, ["units"]),
    "lowercase": ("from 14.3 to 18.2.", None, (14.3, 18.2), False, ["From <start> to <end>"]),
    "from-dash": ("From 14.3 - 18.2.", None, (14.3, 18.2), False, ["dash instead of 'to'"]),
    "bare-range": ("14.3 - 18.2", None, (14.3, 18.2), False, ["no 'From <start> to <end>.'"]),
    "angle-range": ("<14.3 - 18.2>", None, (14.3, 18.2), False, ["no 'From"]),
    "en-dash-range": ("The dog runs at 14.3\u201318.2.", None, (14.3, 18.2), False, ["no 'From"]),
    "between": ("It happens between 3 and 4 seconds.", None, (3.0, 4.0), False, ["no 'From"]),
    "extra-text": ("The man jumps from 14.3 to 18.2 in the video.", None, (14.3, 18.2), False,
                   ["extra text"]),
    "reversed": ("From 18.2 to 14.3.", None, (14.3, 18.2), False, ["reversed"]),
    "past-end-clamped": ("From 25.0 to 45.0.", 30.0, (25.0, 30.0), False, ["clamped"]),
    "rounding-at-end-silent": ("From 25.0 to 30.0.", 29.95, (25.0, 29.95), True, []),
    "start-past-end": ("From 35.0 to 40.0.", 30.0, None, False, ["after the clip's end"]),
    "negative-start": ("From -1.0 to 2.0.", None, (0.0, 2.0), False, ["negative"]),
    "wholly-negative": ("From -3 to -1.", None, None, False, ["before the clip's start"]),
    "two-ranges": ("From 1 to 2. From 5 to 6.", None, (1.0, 2.0), False, ["more than one"]),
    "from-wins-over-earlier-bare": ("Around 3 - 4 maybe. From 10 to 12.", None, (10.0, 12.0),
                                    False, ["more than one"]),
    "nothing": ("The event does not occur.", None, None, False, ["no time range"]),
    "empty": ("", None, None, False, ["empty"]),
    "only-think": ("<think>\n</think>", None, None, False, ["empty"]),
    "single-number": ("At 14.3.", None, None, False, ["no time range"]),
    "special-token": ("From 14.3 to 18.2.<|im_end|>", None, (14.3, 18.2), True, []),
}


@pytest.mark.parametrize("case", list(FIND_CASES.values()), ids=list(FIND_CASES))
def test_parse_find_cases(case: FindCase) -> None:
    text, clip, span, ok, problem_parts = case
    result = parse_find(text, clip)
    if span is None:
        assert result.span is None
    else:
        assert result.span is not None
        assert (result.span.start, result.span.end) == pytest.approx(span)
        assert result.span.score is None and result.span.window is None
    assert result.format_ok is ok
    assert result.format_ok == (not result.problems)
    for part in problem_parts:
        assert any(part in p for p in result.problems), (part, result.problems)


def test_find_parse_type() -> None:
    result = parse_find("From 1 to 2.")
    assert isinstance(result, FindParse)
    assert result.span == Span(1.0, 2.0)


@given(st.integers(0, 20_000), st.integers(0, 20_000),
       st.sampled_from(["", "<think>\n\n</think>\n\n", "<think>\n"]))
def test_find_round_trip(a: int, b: int, prefix: str) -> None:
    result = parse_find(f"{prefix}From {a / 10:.1f} to {b / 10:.1f}.")
    assert result.span is not None
    assert result.span.start == pytest.approx(min(a, b) / 10)
    assert result.span.end == pytest.approx(max(a, b) / 10)
    assert result.format_ok == (a <= b)


@given(st.text(max_size=300), st.one_of(st.none(), st.floats(0.5, 500)))
def test_find_never_raises(text: str, clip: float | None) -> None:
    result = parse_find(text, clip)
    assert result.format_ok == (not result.problems)
    if result.span is None:
        assert not result.format_ok
    else:
        assert 0 <= result.span.start <= result.span.end
        assert math.isfinite(result.span.end)
        if clip is not None:
            assert result.span.start < clip and result.span.end <= clip


@settings(max_examples=50)
@given(st.lists(st.one_of(st.sampled_from(_FRAGMENTS), st.text(max_size=12)), max_size=20))
def test_find_never_raises_on_answer_like_text(parts: list[str]) -> None:
    result = parse_find(" ".join(parts), 60.0)
    assert result.format_ok == (not result.problems)
