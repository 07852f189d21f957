"""Frame and timecode arithmetic without files: labels agree with OpenTimelineIO's where it has
them, and rates SMPTE does not list (15 fps screen recordings, 120 fps slow motion) still hand
off where the format allows."""

from __future__ import annotations

from fractions import Fraction

import pytest
from opentimelineio import opentime

from marlin_desk.core.project import Clip
from marlin_desk.core.timeline import Event
from marlin_desk.handoff import HandoffRequest, SourceVideo, parse_rate, render_timeline
from marlin_desk.handoff.frames import frame_to_timecode, timecode_to_frame, to_frame


@pytest.mark.parametrize(("rate", "drop"), [(Fraction(30000, 1001), True),
                                            (Fraction(60000, 1001), True),
                                            (Fraction(30000, 1001), False), (Fraction(25), False)])
def test_timecode_labels_match_otio(rate: Fraction, drop: bool) -> None:
    for k in [*range(0, 20_000, 7), *range(107_800, 108_100), 2_000_000]:
        label = frame_to_timecode(k, rate, drop)
        assert label == opentime.to_timecode(opentime.RationalTime(k, float(rate)), float(rate),
                                              drop)
        assert timecode_to_frame(label, rate, drop) == k
    day = timecode_to_frame("23:59:59:00", rate, drop) + round(rate)
    sep = ";" if drop else ":"
    assert frame_to_timecode(day - 1, rate, drop) == f"23:59:59{sep}{round(rate) - 1}"
    assert frame_to_timecode(day, rate, drop) == f"00:00:00{sep}00"  # wraps at midnight


def test_drop_frame_skips_labels_not_frames() -> None:
    ntsc = Fraction(30000, 1001)
    assert frame_to_timecode(1799, ntsc, True) == "00:00:59;29"
    assert frame_to_timecode(1800, ntsc, True) == "00:01:00;02"  # ;00 and ;01 do not exist
    assert frame_to_timecode(17982, ntsc, True) == "00:10:00;00"  # every tenth minute keeps them
    assert timecode_to_frame("01:00:00;00", ntsc, True) == 107_892


def test_rounding_and_rates() -> None:
    assert to_frame(0.02, Fraction(25)) == 1 and to_frame(0.0199, Fraction(25)) == 0
    assert parse_rate("30000/1001") == parse_rate(29.97) == Fraction(30000, 1001)
    assert parse_rate(25.0) == 25


@pytest.mark.parametrize(("rate", "marker", "label"), [(Fraction(15), 24, "01:00:00:09"),
                                                     (Fraction(120), 192, "01:00:00:72")])
def test_rates_smpte_does_not_list(rate: Fraction, marker: int, label: str) -> None:
    source = SourceVideo("/media/screen.mp4", rate, 4.0)
    request = HandoffRequest(source, [Clip(1.0, 2.0, "c")], [Event(1.6, 1.7, "e")])
    fcpx, plan = render_timeline("fcpx", request)
    assert f'frameDuration="1/{rate}s"' in fcpx.decode()
    assert plan.clips[0].source_in == rate and plan.markers[0].source_frame == marker
    markers = render_timeline("resolve-markers", request)[0].decode()
    assert f"{label} " in markers and "|M:e |D:" in markers
    assert render_timeline("otio", request)[0]
    for target in ("premiere", "edl"):
        with pytest.raises(ValueError, match="hand it off as fcpx or otio"):
            render_timeline(target, request)
