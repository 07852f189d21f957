"""Karaoke captions: the ASS read back by pysubs2, a burned 9:16 clip whose text lies inside the
safe area with the spoken word in the highlight colour (pixels of frames decoded from the
file), and speech + events as two titled subtitle streams (ffprobe)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import av
import numpy as np
import pysubs2
import pytest

from marlin_desk.core.errors import BadInput
from marlin_desk.core.timeline import Event
from marlin_desk.core.transcript import Word
from marlin_desk.media.caption_styles import CAPTION_STYLES
from marlin_desk.media.captions import (
    caption_frames,
    captions_ass,
    clip_captions_ass,
    frame_at,
)
from marlin_desk.media.clip_export import ClipSpec, ExportOptions, export_clip
from marlin_desk.media.ffmpeg_bin import find_ffmpeg
from marlin_desk.media.safe_area import SAFE_AREA

from .conftest import BACKGROUND, Talking


def _words(text: str, step: float = 0.4) -> list[Word]:
    return [Word(i * step, i * step + step * 0.8, " " + t) for i, t in enumerate(text.split())]


@pytest.mark.parametrize("name", list(CAPTION_STYLES))
def test_one_event_per_spoken_word_with_that_word_lit(name: str) -> None:
    style = CAPTION_STYLES[name]
    words = _words("Welcome back to the channel. Today we cut a short video, and that's it.")
    subs = pysubs2.SSAFile.from_string(captions_ass(words, 1080, 1920, style, duration=6.0))
    assert (subs.info["PlayResX"], subs.info["PlayResY"]) == ("1080", "1920")
    assert len(subs) == len(words)  # one state per word, none empty
    rgb = style.highlight_colour
    lit = f"&H{rgb[4:6]}{rgb[2:4]}{rgb[0:2]}&"
    for ev, word in zip(subs, words, strict=True):
        assert ev.start == round(word.start * 1000)  # lit when it is said
        assert ev.end <= 6000
        chunks = ev.text.split("}")  # "{tags}WORD" pieces: the lit word follows the lit colour
        spoken = [c for c in chunks if lit in c.split("{")[-1]]
        assert len(spoken) >= 1
        shown = ev.plaintext.replace("\n", " ").split()
        assert word.text.strip().upper() in [s.upper() for s in shown]
        assert len(shown) <= style.max_words
    for a, b in zip(subs, subs[1:], strict=False):
        assert a.end <= b.start  # never two states at once
    # The layout the app's preview draws is the one the ASS was written from.
    frames = caption_frames(words, 1080, 1920, style, duration=6.0)
    assert [(f.start_ms, f.end_ms) for f in frames] == [(e.start, e.end) for e in subs]
    for frame, word in zip(frames, words, strict=True):
        (lit,) = [r for line in frame.lines for r in line if r.lit]
        assert lit.text.upper() == word.text.strip().upper()
        assert lit.colour == style.highlight_colour
        assert frame_at(frames, frame.start_ms) == frame


def test_unknown_style_is_a_plain_error() -> None:
    with pytest.raises(BadInput, match="unknown caption style"):
        clip_captions_ass(_transcript([]), 0, 1, 1080, 1920, "neon")


def _transcript(words: list[Word]):
    from marlin_desk.core.transcript import Segment, Transcript

    return Transcript("en", (Segment(0, 1, "", tuple(words)),))


def _rgb_frames(path: Path, times: list[float]) -> list[np.ndarray]:
    """RGB frames shown at `times` (seconds into the clip)."""
    out, todo = [], sorted(times)
    with av.open(str(path)) as c:
        s = c.streams.video[0]
        for f in c.decode(s):
            t = float(f.pts * s.time_base)
            while todo and t + 0.02 >= todo[0]:
                out.append(f.to_ndarray(format="rgb24").astype(np.int16))
                todo.pop(0)
            if not todo:
                break
    return out


def test_burned_reels_captions_are_inside_the_safe_area(talking: Talking, out_dir: Path) -> None:
    start, end = 1.0, 3.0
    r = export_clip(talking.video, ClipSpec(start, end, preset="reels", captions="bold"),
                    ExportOptions(out_dir, speed="superfast"), transcript=talking.transcript)
    assert r.mode_used == "exact" and r.spec.captions == "bold"
    # When the ASS says a word is lit (the same function renders it for the app's preview).
    ass = pysubs2.SSAFile.from_string(clip_captions_ass(talking.transcript, start, end - start,
                                                        1080, 1920, "bold"))
    assert len(ass) >= 3
    times = [(e.start + e.end) / 2000 for e in ass][:3]
    left, top, right, bottom = SAFE_AREA.box(1080, 1920)
    yellow = np.array([0xFF, 0xE0, 0x00])
    for img in _rgb_frames(r.path, times):
        text = np.abs(img - np.array(BACKGROUND)).max(axis=2) > 48
        inside = text[top:bottom, left:right].sum()
        assert inside > 2000  # large letters
        assert text.sum() - inside == 0  # nothing outside the safe area
        lit = (np.abs(img - yellow).max(axis=2) < 40)[top:bottom, left:right].sum()
        assert lit > 300  # the word being said, in the style's yellow


def test_captions_need_exact_mode_and_a_transcript(talking: Talking, out_dir: Path) -> None:
    with pytest.raises(BadInput, match="exact mode"):
        export_clip(talking.video, ClipSpec(0, 1, mode="fast", captions="bold"),
                    ExportOptions(out_dir), transcript=talking.transcript)
    with pytest.raises(BadInput, match="transcript"):
        export_clip(talking.video, ClipSpec(0, 1, preset="reels", captions="bold"),
                    ExportOptions(out_dir))
    assert list(out_dir.iterdir()) == []


def test_both_sources_are_two_titled_tracks(talking: Talking, out_dir: Path,
                                            ffprobe: str) -> None:
    events = [Event(0.0, 3.0, "A dark screen"), Event(3.0, 8.0, "Still a dark screen")]
    r = export_clip(talking.video, ClipSpec(0.0, 4.0, subtitles="soft"),
                    ExportOptions(out_dir, subtitle_source="both"), events=events,
                    transcript=talking.transcript)
    doc = subprocess.run([ffprobe, "-v", "error", "-show_streams", "-select_streams", "s",
                          "-of", "json", str(r.path)], capture_output=True, text=True,
                         check=True).stdout
    import json

    streams = json.loads(doc)["streams"]
    assert [(s["codec_name"], s["tags"]["handler_name"], s["disposition"]["default"])
            for s in streams] == [("mov_text", "Speech", 1), ("mov_text", "Events", 0)]
    speech, seen = (_track(r.path, i) for i in (0, 1))
    said = " ".join(e.plaintext.replace("\n", " ") for e in speech)
    assert said.startswith("Welcome back to the channel.")
    assert [e.plaintext for e in seen] == ["A dark screen", "Still a dark screen"]


def _track(path: Path, index: int) -> pysubs2.SSAFile:
    srt = subprocess.run([find_ffmpeg().path, "-v", "error", "-i", str(path), "-map",
                          f"0:s:{index}", "-f", "srt", "-"], capture_output=True, text=True,
                         check=True).stdout
    return pysubs2.SSAFile.from_string(srt)


def test_landscape_captions_sit_low_in_the_title_safe_area() -> None:
    ass = captions_ass(_words("a wide frame"), 1920, 1080, CAPTION_STYLES["bold"])
    ev = pysubs2.SSAFile.from_string(ass)[0]
    y = int(ev.text.split(r"\pos(")[1].split(")")[0].split(",")[1])
    assert 0.8 * 1080 < y <= 0.9 * 1080  # the bottom of the central 80%, not mid-frame


def test_sources_default_to_speech_and_say_what_is_missing() -> None:
    from marlin_desk.media.subtitle_sources import check_inputs, default_subtitle_source

    assert default_subtitle_source(True) == "speech"
    assert default_subtitle_source(False) == "events"
    check_inputs("srt", "both", "bold", has_events=True, has_transcript=True)
    with pytest.raises(BadInput, match="need a transcript"):
        check_inputs("soft", "both", None, has_events=True, has_transcript=False)
    with pytest.raises(BadInput, match="analysis"):
        check_inputs("srt", "events", None, has_events=False, has_transcript=True)
    with pytest.raises(BadInput, match="one source"):
        check_inputs("burn", "both", None, has_events=True, has_transcript=True)
    with pytest.raises(BadInput, match="cover each other"):
        check_inputs("burn", "speech", "pop", has_events=True, has_transcript=True)


def test_burned_speech_subtitles(talking: Talking, out_dir: Path) -> None:
    r = export_clip(talking.video, ClipSpec(1.0, 3.0, subtitles="burn"),
                    ExportOptions(out_dir, subtitle_source="speech"),
                    transcript=talking.transcript)
    assert r.mode_used == "exact" and "burned subtitles" in (r.fallback or "")
    (img,) = _rgb_frames(r.path, [0.5])
    text = np.abs(img - np.array(BACKGROUND)).max(axis=2) > 48
    assert text[int(240 * 0.6):].sum() > 200  # the speech at the bottom of the 320x240 frame
    assert text[:int(240 * 0.5)].sum() == 0


def test_burned_subtitles_on_reels_sit_in_the_same_safe_area(talking: Talking,
                                                             out_dir: Path) -> None:
    r = export_clip(talking.video, ClipSpec(1.0, 3.0, preset="reels", subtitles="burn"),
                    ExportOptions(out_dir, subtitle_source="speech", speed="superfast"),
                    transcript=talking.transcript)
    (img,) = _rgb_frames(r.path, [0.5])
    left, top, right, bottom = SAFE_AREA.box(1080, 1920)
    text = np.abs(img - np.array(BACKGROUND)).max(axis=2) > 48
    inside = text[top:bottom, left:right].sum()
    assert inside > 1000 and text.sum() - inside == 0
    assert text[bottom - 200:bottom].sum() > 0.5 * inside  # at the bottom of the safe area
