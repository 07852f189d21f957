"""YouTube chapters: first at 0:00, at least three, at least 10 s apart."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from marlin_desk.core.errors import BadInput
from marlin_desk.core.timeline import Event
from marlin_desk.media.chapters import format_chapters, youtube_chapters


def test_chapters_from_events() -> None:
    events = [Event(1.5, 8, "Arrival"), Event(4, 9, "Too close"), Event(15.2, 30, "Kick-off"),
              Event(31, 40, "Kick-off"), Event(44, 70, "First goal"), Event(85, 90, "Too late")]
    text = format_chapters(youtube_chapters(events, 92.0))
    assert text == "0:00 Arrival\n0:15 Kick-off\n0:44 First goal\n"


def test_long_videos_use_hours() -> None:
    events = [Event(0, 1, "A"), Event(1800, 1801, "B"), Event(3700, 3701, "C")]
    assert format_chapters(youtube_chapters(events, 4000)).splitlines() == [
        "0:00:00 A", "0:30:00 B", "1:01:40 C"]


def test_too_few_chapters_is_a_plain_error() -> None:
    with pytest.raises(BadInput, match="at least 3"):
        youtube_chapters([Event(0, 5, "A"), Event(5, 9, "B")], 20)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.floats(0, 600), st.sampled_from("ABCDE")), min_size=1,
                max_size=40), st.floats(30, 700))
def test_rules_always_hold(items, duration) -> None:
    events = [Event(t, t + 1, title) for t, title in items]
    try:
        chapters = youtube_chapters(events, duration)
    except BadInput:
        return
    assert chapters[0].start == 0 and len(chapters) >= 3
    starts = [c.start for c in chapters] + [int(duration)]
    assert all(b - a >= 10 for a, b in zip(starts, starts[1:], strict=False))
