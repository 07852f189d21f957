"""Subtitle layout and timing rules (hypothesis), per-clip shifting, files that parse back with
pysubs2 and FFmpeg, the soft track and burn-in."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pysubs2
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from marlin_desk.core.timeline import Event
from marlin_desk.media.clip_export import ClipSpec, ExportOptions, export_clip
from marlin_desk.media.ffmpeg_bin import find_ffmpeg
from marlin_desk.media.subtitles import (
    SubtitleStyle,
    build_cues,
    clip_events,
    paginate,
    render,
    write_subtitles,
)

from .conftest import Videos
from .verify import diff, ffprobe_json, frames

STYLE = SubtitleStyle()
WORDS = st.text(alphabet="abcdefghijklmnopqrstuvwxyzé", min_size=1, max_size=14)
EVENTS = st.lists(
    st.builds(lambda s, d, words: Event(s, s + d, " ".join(words)),
              st.floats(0, 120, allow_nan=False), st.floats(0.01, 40, allow_nan=False),
              st.lists(WORDS, min_size=1, max_size=30)),
    max_size=25)


@settings(max_examples=200, deadline=None)
@given(EVENTS, st.sampled_from([23.976, 25.0, 30.0, 60.0]), st.sampled_from([None, 90.0]))
def test_cues_obey_the_style_guide(events, fps, limit) -> None:
    cues = build_cues(events, STYLE, fps=fps, limit=limit)
    gap_ms = 2 * 1000 / fps
    for cue in cues:
        assert 0 <= cue.start_ms < cue.end_ms
        assert cue.end_ms - cue.start_ms <= 7000
        assert cue.end_ms - cue.start_ms >= 300
        assert 1 <= len(cue.lines) <= 2
        assert all(0 < len(line) <= 42 for line in cue.lines)
        if limit is not None:
            assert cue.end_ms <= limit * 1000
    for a, b in zip(cues, cues[1:], strict=False):
        assert b.start_ms - a.end_ms >= gap_ms - 1e-9  # no overlap, 2 frames apart


def test_short_event_is_held_for_the_minimum() -> None:
    (cue,) = build_cues([Event(1.0, 1.2, "Door slams")])
    assert (cue.start_ms, cue.end_ms) == (1000, 1833)


def test_reading_speed_lengthens_a_cue_when_there_is_room() -> None:
    text = "A long caption that needs a little time to read comfortably"
    (cue,) = build_cues([Event(0.0, 1.0, text)])
    assert len(text) == 59 and cue.end_ms == 2950  # 59 characters at 20 per second


def test_long_event_is_split_into_repeats_or_truncated() -> None:
    cues = build_cues([Event(0, 20, "A crowd cheers")], fps=25)
    assert len(cues) == 3 and all(c.text == "A crowd cheers" for c in cues)
    assert cues[0].start_ms == 0 and cues[-1].end_ms == 20000
    assert all(80 <= b.start_ms - a.end_ms <= 81 for a, b in zip(cues, cues[1:], strict=False))
    (cut,) = build_cues([Event(0, 20, "A crowd cheers")], SubtitleStyle(long_events="truncate"))
    assert (cut.start_ms, cut.end_ms) == (0, 7000)


def test_overlapping_events_are_trimmed_then_delayed() -> None:
    cues = build_cues([Event(0, 5, "First"), Event(3, 8, "Second"), Event(3.2, 3.5, "Inside"),
                       Event(8.5, 9, "Third"), Event(8.6, 12, "Fourth")], fps=25)
    assert [c.text for c in cues] == ["First", "Second", "Third", "Fourth"]
    assert (cues[0].end_ms, cues[1].start_ms, cues[1].end_ms) == (2920, 3000, 8000)
    # "Inside" would be left 120 ms: dropped. "Third" keeps its own 0.5 s, "Fourth" waits.
    assert (cues[2].start_ms, cues[2].end_ms, cues[3].start_ms) == (8500, 9000, 9080)


def test_a_long_text_in_a_short_event_is_not_squeezed() -> None:
    text = " ".join(f"word{i}" for i in range(40))
    cues = build_cues([Event(10, 11, text), Event(12, 16, "Next")], fps=25)
    assert len(cues) >= 3 and " ".join(" ".join(c.lines) for c in cues[:-1]) == text
    assert all(c.end_ms - c.start_ms >= 833 for c in cues)
    assert cues[-1].text == "Next" and cues[-1].start_ms == cues[-2].end_ms + 80


def test_text_is_balanced_over_two_lines_and_paged() -> None:
    pages = paginate("The quick brown fox jumps over the lazy dog near the river bank", STYLE)
    assert pages == [("The quick brown fox jumps over", "the lazy dog near the river bank")]
    long = " ".join(["word"] * 40)
    assert all(len(p) <= 2 and all(len(x) <= 42 for x in p) for p in paginate(long, STYLE))
    assert paginate("x" * 100, STYLE)[0][0] == "x" * 42  # an unbreakable word is cut


def test_braces_and_backslashes_survive_as_text(tmp_path: Path) -> None:
    path = write_subtitles([Event(0, 2, r"Score {2-1} \N now")], tmp_path / "s.srt")
    assert pysubs2.load(str(path))[0].plaintext == "Score (2-1) /N now"


def test_clip_events_are_cut_and_shifted() -> None:
    evs = [Event(0, 3, "a"), Event(4, 9, "b"), Event(12, 13, "c")]
    assert clip_events(evs, 2.0, 5.0) == [Event(0, 1, "a"), Event(2, 5, "b")]


def test_whole_video_files_parse_back(tmp_path: Path) -> None:
    events = [Event(0.5, 2.0, "One"), Event(2.5, 4.0, "Two")]
    for fmt in ("srt", "vtt"):
        path = write_subtitles(events, tmp_path / f"v.{fmt}", fmt, fps=25)
        subs = pysubs2.load(str(path))
        assert [(e.start, e.end, e.plaintext) for e in subs] == [(500, 2000, "One"),
                                                                 (2500, 4000, "Two")]
        assert _ffmpeg_cue_times(path) == [(0.5, 2.0), (2.5, 4.0)]
    again = write_subtitles(events, tmp_path / "v.srt", "srt")
    assert again.name == "v (2).srt"  # never overwrites


def test_vtt_render_starts_with_the_header() -> None:
    assert render(build_cues([Event(0, 1, "Hi")]), "vtt").startswith("WEBVTT")


CLIP_EVENTS = [Event(0.0, 2.2, "Opening pattern"), Event(2.2, 3.5, "Colour bars move"),
               Event(3.6, 7.5, "The pattern keeps moving across the frame")]


@pytest.mark.parametrize("fmt", ["srt", "vtt"])
def test_fast_clip_subtitles_follow_the_real_start(videos: Videos, out_dir: Path,
                                                   fmt: str) -> None:
    r = export_clip(videos.main, ClipSpec(2.9, 5.0, mode="fast", subtitles=fmt),
                    ExportOptions(out_dir), events=CLIP_EVENTS)
    assert r.real_start == pytest.approx(2.0)
    assert r.subtitle_path == r.path.with_suffix(f".{fmt}")
    subs = pysubs2.load(str(r.subtitle_path))
    # Clip time = video time - 2.0; the first event is cut at 2.2 - 2.0 = 0.2 s and dropped
    # (too short to read); numbering restarts at 1.
    assert [(e.start, e.plaintext) for e in subs] == [
        (200, "Colour bars move"), (1600, "The pattern keeps moving across the frame")]
    assert subs[0].end == 1500  # trimmed to 2 frames (80 ms) before the next cue
    assert subs[-1].end <= round(r.real_duration * 1000)
    assert _ffmpeg_cue_times(r.subtitle_path)[0] == (0.2, 1.5)
    text = r.subtitle_path.read_text(encoding="utf-8")
    assert text.removeprefix("WEBVTT\n\n").startswith("1\n")  # renumbered from 1


def test_soft_subtitle_track_in_the_mp4(videos: Videos, out_dir: Path, ffprobe: str) -> None:
    r = export_clip(videos.main, ClipSpec(2.0, 4.0, subtitles="soft"), ExportOptions(out_dir),
                    events=CLIP_EVENTS)
    s = [x for x in ffprobe_json(ffprobe, r.path)["streams"] if x["codec_type"] == "subtitle"]
    assert len(s) == 1 and s[0]["codec_name"] == "mov_text"
    assert s[0]["tags"]["language"] == "eng"
    srt = subprocess.run([find_ffmpeg().path, "-v", "error", "-i", str(r.path), "-map", "0:s:0",
                          "-f", "srt", "-"], capture_output=True, text=True, check=True).stdout
    subs = pysubs2.SSAFile.from_string(srt)
    # "Opening pattern" is cut to its last 0.2 s by the clip: left out.
    assert [(e.start, e.end, e.plaintext) for e in subs] == [
        (200, 1500, "Colour bars move"), (1600, 2000, "The pattern keeps moving across the frame")]


def test_burned_subtitles_are_in_the_picture(videos: Videos, out_dir: Path) -> None:
    spec = dict(start=3.0, end=3.6, preset="reels")
    plain = export_clip(videos.main, ClipSpec(**spec), ExportOptions(out_dir),
                        events=CLIP_EVENTS)
    burned = export_clip(videos.main, ClipSpec(**spec, subtitles="burn"), ExportOptions(out_dir),
                         events=CLIP_EVENTS)
    a, b = frames(plain.path, limit=1)[0][1], frames(burned.path, limit=1)[0][1]
    band = slice(int(1920 * 0.55), int(1920 * 0.78))  # raised above the platform's buttons
    assert diff(a[band], b[band]) > 5
    assert diff(a[:800], b[:800]) < 1.5


def _ffmpeg_cue_times(path: Path) -> list[tuple[float, float]]:
    """Cue times as FFmpeg's own subtitle demuxer reads them."""
    ass = subprocess.run([find_ffmpeg().path, "-v", "error", "-i", str(path), "-f", "ass", "-"],
                         capture_output=True, text=True, check=True).stdout
    return [(e.start / 1000, e.end / 1000) for e in pysubs2.SSAFile.from_string(ass)]
