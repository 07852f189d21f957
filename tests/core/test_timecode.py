"""SMPTE timecode without files: seconds ↔ frames ↔ labels at the common rates, drop-frame at
29.97 and 59.94, partial forms as editors type them, and clear refusals."""

from __future__ import annotations

from fractions import Fraction

import pytest

from marlin_desk.core.timecode import (
    frame_seconds,
    frame_to_timecode,
    parse_rate,
    seconds_to_timecode,
    timebase,
    timecode_to_frame,
    timecode_to_seconds,
    to_frame,
)

NTSC = Fraction(30000, 1001)
NTSC60 = Fraction(60000, 1001)


@pytest.mark.parametrize("rate", ["24000/1001", "24", "25", "30000/1001", "30", "60000/1001",
                                  "60"])
def test_round_trips(rate: str) -> None:
    r = parse_rate(rate)
    for k in [*range(0, 4000, 13), *range(17_960, 18_010), 107_892, 215_784, 1_000_003]:
        label = frame_to_timecode(k, r)
        assert timecode_to_frame(label, r) == k, label
        t = frame_seconds(k, r)
        assert to_frame(float(t), r) == k and seconds_to_timecode(float(t), r) == label
        assert timecode_to_seconds(label, r) == t


def test_labels_at_each_rate() -> None:
    assert frame_to_timecode(1800, NTSC) == "00:01:00;02"  # ;00 and ;01 do not exist
    assert frame_to_timecode(17982, NTSC) == "00:10:00;00"  # every tenth minute keeps them
    assert timecode_to_frame("00:10:00;00", NTSC) == 17982
    assert timecode_to_frame("00:01:00;02", NTSC) == 1800
    assert frame_to_timecode(3600, NTSC60) == "00:01:00;04"
    assert frame_to_timecode(1800, NTSC, drop_frame=False) == "00:01:00:00"
    assert frame_to_timecode(24 * 3600 + 1, Fraction(24)) == "01:00:00:01"
    assert frame_to_timecode(62, Fraction(25)) == "00:00:02:12"
    assert timebase(parse_rate("24000/1001")) == 24 and timebase(NTSC60) == 60
    assert seconds_to_timecode(-1.0, Fraction(25)) == "00:00:00:00"
    assert to_frame(0.02, Fraction(25)) == 1 and to_frame(0.0199, Fraction(25)) == 0  # half up


def test_full_and_partial_forms() -> None:
    r = Fraction(25)
    expected = ((1 * 60 + 2) * 60 + 3) * 25 + 4
    for text in ("01:02:03:04", "1:02:03:04", " 01:02:03:04 ", "62:03:04"):
        assert timecode_to_frame(text, r) == expected, text
    assert timecode_to_frame("02:03:04", r) == (2 * 60 + 3) * 25 + 4  # MM:SS:FF
    assert timecode_to_frame("03:04", r) == 3 * 25 + 4  # SS:FF
    assert timecode_to_frame("01:02:03;04", NTSC) == timecode_to_frame("01:02:03:04", NTSC)
    assert timecode_to_frame("01:02:03:04", NTSC, drop_frame=False) \
        == ((1 * 60 + 2) * 60 + 3) * 30 + 4
    assert timecode_to_frame("01:00:00.00", NTSC) == 107_892  # '.' is drop-frame too


@pytest.mark.parametrize(("text", "rate", "message"), [
    ("102", Fraction(25), "not a timecode"),
    ("01:02:03:04:05", Fraction(25), "not a timecode"),
    ("aa:bb:cc:dd", Fraction(25), "not a timecode"),
    ("", Fraction(25), "not a timecode"),
    ("00:00:01:25", Fraction(25), "frame 25 does not exist at 25 fps"),
    ("00:00:60:00", Fraction(25), "seconds must be 00 to 59"),
    ("01:60:00:00", Fraction(25), "minutes must be 00 to 59"),
    ("00:00:01;00", Fraction(25), "drop-frame timecode exists only at 29.97 and 59.94"),
    ("00:01:00;01", NTSC, "not a drop-frame label"),
    ("00:01:00;03", NTSC60, "not a drop-frame label"),
])
def test_refusals_say_why(text: str, rate: Fraction, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        timecode_to_frame(text, rate)
