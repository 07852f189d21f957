"""Each target written for real sources (25, 29.97 recorded from 01:00:00;00 drop-frame and
from 01:00:00:00 non-drop, 60, and 25 fps recorded from 10:00:00:00) and read back with the
OpenTimelineIO adapters editors' tools use: every subclip and marker lands on its expected
frame, names (non-ASCII, quotes) survive."""

from __future__ import annotations

import re
from fractions import Fraction
from pathlib import Path
from xml.etree import ElementTree as ET

import opentimelineio as otio
import pytest
from opentimelineio import opentime

from marlin_desk.handoff import SourceVideo, render_timeline
from tests.handoff.conftest import (
    CLIP_FRAMES,
    EXPECTED_CLIPS,
    EXPECTED_MARKERS,
    Source,
    request_for,
)

pytestmark = pytest.mark.timeout(120)

Case = tuple[Source, SourceVideo]


def _write(tmp_path: Path, target: str, video: SourceVideo, suffix: str) -> Path:
    data, plan = render_timeline(target, request_for(video))
    assert plan.unplaced == 1  # the event outside every clip
    path = tmp_path / f"out{suffix}"
    path.write_bytes(data)
    return path


def _video_clips(timeline: otio.schema.Timeline) -> list[otio.schema.Clip]:
    (track,) = [t for t in timeline.tracks if t.kind == otio.schema.TrackKind.Video]
    return list(track.find_clips())


def test_source_facts(source: Case) -> None:
    s, video = source
    assert video.rate == s.rate and video.drop_frame == s.drop
    assert video.start_timecode == s.timecode
    assert video.start_frame == s.tc0 and video.timeline_start_frame == s.timeline0


def test_otio_native(tmp_path: Path, source: Case) -> None:
    s, video = source
    timeline = otio.adapters.read_from_file(str(_write(tmp_path, "otio", video, ".otio")))
    assert timeline.name == "Timeline «one»"
    assert timeline.global_start_time.value == s.timeline0
    clips = _video_clips(timeline)
    assert [(c.source_range.start_time.value, c.source_range.end_time_exclusive().value)
            for c in clips] == [(s.tc0 + a, s.tc0 + b) for a, b, _ in EXPECTED_CLIPS]
    assert [c.name for c in clips] == [name for _, _, name in CLIP_FRAMES]
    assert all(c.source_range.start_time.rate == pytest.approx(float(s.rate)) for c in clips)
    assert clips[0].media_reference.target_url == Path(video.path).as_uri()
    assert clips[0].media_reference.available_range.start_time.value == s.tc0
    got = [(i, m.metadata["marlin_desk"]["kind"], m.name, m.marked_range.start_time.value,
            m.marked_range.duration.value, m.color)
           for i, c in enumerate(clips) for m in c.markers]
    colours = {"event": "BLUE", "search": "GREEN"}
    assert got == [(i, k, n, s.tc0 + f, d, colours[k]) for i, k, n, f, d, _ in EXPECTED_MARKERS]
    audio = [t for t in timeline.tracks if t.kind == otio.schema.TrackKind.Audio]
    assert len(audio) == 1 and len(list(audio[0].find_clips())) == 2  # the source has sound


@pytest.mark.parametrize("target", ["premiere", "resolve"])
def test_fcp7_xml(tmp_path: Path, source: Case, target: str) -> None:
    s, video = source
    path = _write(tmp_path, target, video, ".xml")
    timeline = otio.adapters.read_from_file(str(path))  # otio-fcp-adapter
    assert timeline.global_start_time.value == s.timeline0
    clips = _video_clips(timeline)
    assert [(c.name, c.source_range.start_time.value, c.source_range.duration.value)
            for c in clips] == [(n, s.tc0 + a, b - a)
                                for (a, b, _), (_, _, n) in zip(EXPECTED_CLIPS, CLIP_FRAMES,
                                                                strict=True)]
    assert [c.range_in_parent().start_time.value for c in clips] == [0, 17]
    markers = [(m.name, m.marked_range.start_time.value, m.marked_range.duration.value)
               for m in timeline.tracks.markers]  # sequence markers, timeline frames
    assert markers == [(n, rec, d) for _, _, n, _, d, rec in EXPECTED_MARKERS]
    root = ET.parse(path).getroot()
    assert root.tag == "xmeml"
    file_tc = root.find(".//clipitem/file/timecode")
    assert file_tc is not None
    assert file_tc.findtext("displayformat") == ("DF" if s.drop else "NDF")
    assert file_tc.findtext("frame") == str(s.tc0)
    assert file_tc.findtext("string") == (s.timecode or "00:00:00:00")
    assert file_tc.findtext("rate/ntsc") == ("TRUE" if s.rate.denominator == 1001 else "FALSE")
    comments = [m.findtext("comment") for m in root.iterfind(".//sequence/marker")]
    assert comments[1] == "search result, score 0.750"


def _fraction(text: str) -> Fraction:
    assert text.endswith("s"), text
    return Fraction(text[:-1])


def _frames(text: str, rate: Fraction) -> int:
    """Rational seconds to frames; they must lie exactly on the frame grid."""
    frames = _fraction(text) * rate
    assert frames.denominator == 1, f"{text} is not on the {rate} fps grid"
    return int(frames)


def test_fcpxml_structure(tmp_path: Path, source: Case) -> None:
    s, video = source
    path = _write(tmp_path, "fcpx", video, ".fcpxml")
    text = path.read_text(encoding="utf-8")
    assert text.startswith('<?xml version="1.0" encoding="UTF-8"?>\n<!DOCTYPE fcpxml>')
    root = ET.fromstring(text)
    assert root.tag == "fcpxml" and root.get("version") == "1.8"
    fmt = root.find("resources/format")
    asset = root.find("resources/asset")
    assert fmt is not None and asset is not None
    assert fmt.get("frameDuration") == {Fraction(25): "1/25s", Fraction(60): "1/60s",
                                        Fraction(30000, 1001): "1001/30000s"}[s.rate]
    assert (fmt.get("width"), fmt.get("height")) == ("32", "32")
    assert asset.get("format") == fmt.get("id") and asset.get("src") == Path(video.path).as_uri()
    assert _frames(asset.get("start", ""), s.rate) == s.tc0
    assert asset.get("hasVideo") == "1" and asset.get("hasAudio") == "1"
    sequence = root.find("library/event/project/sequence")
    assert sequence is not None and root.find("library/event/project").get("name") == (
        "Timeline «one»")
    assert sequence.get("tcFormat") == ("DF" if s.drop else "NDF")
    assert _frames(sequence.get("tcStart", ""), s.rate) == s.timeline0
    assert _frames(sequence.get("duration", ""), s.rate) == 28
    clips = sequence.findall("spine/asset-clip")
    assert [c.get("name") for c in clips] == [n for _, _, n in CLIP_FRAMES]
    assert all(c.get("ref") == asset.get("id") for c in clips)
    assert [(_frames(c.get("offset", ""), s.rate), _frames(c.get("start", ""), s.rate),
             _frames(c.get("duration", ""), s.rate)) for c in clips] == [
        (s.timeline0 + rec, s.tc0 + a, b - a) for a, b, rec in EXPECTED_CLIPS]
    markers = [(i, m.get("value"), _frames(m.get("start", ""), s.rate),
                _frames(m.get("duration", ""), s.rate), m.get("completed"))
               for i, c in enumerate(clips) for m in c.findall("marker")]
    assert markers == [(i, n, s.tc0 + f, 1, "0" if k == "search" else None)
                       for i, k, n, f, _, _ in EXPECTED_MARKERS]


def test_fcpxml_read_back_by_otio(tmp_path: Path, source: Case) -> None:
    """otio-fcpx-xml-adapter reads the file: names and counts exactly; its times only to a
    frame on whole-number rates (it truncates seconds x rate), and at 29.97 it counts 29 fps,
    so the frames are checked on the XML itself above."""
    s, video = source
    collection = otio.adapters.read_from_file(str(_write(tmp_path, "fcpx", video, ".fcpxml")))
    (timeline,) = collection
    clips = list(timeline.find_clips())
    assert [c.name for c in clips] == [n for _, _, n in CLIP_FRAMES]
    assert [m.name for c in clips for m in c.markers] == [n for _, _, n, _, _, _ in
                                                          EXPECTED_MARKERS]
    assert clips[0].media_reference.target_url == Path(video.path).as_uri()
    if s.rate.denominator == 1:
        starts = [c.source_range.start_time.value for c in clips]
        for got, (a, _, _) in zip(starts, EXPECTED_CLIPS, strict=True):
            assert s.tc0 + a - 1 <= got <= s.tc0 + a


def _edl_locators(text: str) -> list[tuple[str, str, str]]:
    return re.findall(r"^\* LOC: (\S+) (\w+)\s+(.*)$", text, flags=re.M)


def test_cmx3600_edl(tmp_path: Path, source: Case) -> None:
    s, video = source
    path = _write(tmp_path, "edl", video, ".edl")
    text = path.read_text(encoding="utf-8")
    assert text.splitlines()[1] == ("FCM: DROP FRAME" if s.drop else "FCM: NON-DROP FRAME")
    timeline = otio.adapters.read_from_file(str(path), rate=float(s.rate))
    clips = _video_clips(timeline)
    assert [(c.source_range.start_time.value, c.source_range.duration.value) for c in clips] == [
        (s.tc0 + a, b - a) for a, b, _ in EXPECTED_CLIPS]
    assert [c.name for c in clips] == [n for _, _, n in CLIP_FRAMES]
    record = [timeline.tracks[0].range_of_child(c).start_time.value for c in clips]
    assert record == [rec for _, _, rec in EXPECTED_CLIPS]  # the reader counts from zero...
    rec_in = re.findall(r"^\d{3}  \S+\s+V\s+C\s+\S+ \S+ (\S+) \S+$", text, flags=re.M)
    assert [round(opentime.from_timecode(tc, float(s.rate)).value) for tc in rec_in] == [
        s.timeline0 + rec for _, _, rec in EXPECTED_CLIPS]  # ...the file from 01:00:00:00
    assert re.search(r"^001  SRC", text, flags=re.M)  # the reel: the file's stem
    expected = [(video.timecode(s.tc0 + f), "BLUE" if k == "event" else "GREEN", n.upper())
                for _, k, n, f, _, _ in EXPECTED_MARKERS]
    assert _edl_locators(text) == expected
    if not s.drop:  # the adapter reads LOC lines only with ':' timecodes
        got = [(m.marked_range.start_time.value, m.color, m.name) for c in clips
               for m in c.markers]
        assert got == [(s.tc0 + f, "BLUE" if k == "event" else "GREEN", n.upper())
                       for _, k, n, f, _, _ in EXPECTED_MARKERS]


def read_resolve_markers(text: str, rate: Fraction) -> list[tuple[int, str, str, int]]:
    """A small reader of Resolve's marker EDL: (timeline frame, colour, name, frames)."""
    events = re.findall(r"^\d{3}  \S+\s+V\s+C\s+(\S+) (\S+) (\S+) (\S+)\s*\n"
                        r" \|C:(\w+) \|M:(.*) \|D:(\d+)$", text, flags=re.M)
    return [(round(opentime.from_timecode(rec_in, float(rate)).value), colour, name,
             int(length)) for _, _, rec_in, _, colour, name, length in events]


def test_resolve_marker_edl(tmp_path: Path, source: Case) -> None:
    s, video = source
    text = _write(tmp_path, "resolve-markers", video, ".edl").read_text(encoding="utf-8")
    assert text.startswith("TITLE: Timeline «one»\nFCM: ")
    assert (";" in text) == s.drop
    colours = {"event": "ResolveColorBlue", "search": "ResolveColorGreen"}
    assert read_resolve_markers(text, s.rate) == [
        (s.timeline0 + rec, colours[k], n, d) for _, k, n, _, d, rec in EXPECTED_MARKERS]
