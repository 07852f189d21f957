"""Burned-in karaoke captions: words grouped into short phrases, the word being said highlighted,
as an ASS document that FFmpeg's libass (the `subtitles` filter) draws into the frame.

Why one ASS event per word rather than `\\k` karaoke tags: `\\k` colours everything already sung
(the secondary colour turns primary and stays so), which gives a fill that sweeps the line, not
one highlighted word; and `\\kf` sweeps within a word. One event per word state ("this phrase,
word k highlighted", from word k's start to word k+1's) shows exactly the word being said, lets
the words still to come be dimmed, lets a word pop in, and follows the recogniser's word times
to the millisecond. Every event of a phrase has the same text and line breaks, so libass lays
it out identically and nothing jumps; only colours change.

The document is sized to the output frame (PlayResX/Y = its pixels) and placed inside the safe
area (safe_area.safe_area_for: the platforms' on 9:16, title-safe on other frames):
centred, the bottom line on the safe area's bottom edge, lines broken by us (WrapStyle 2:
libass never wraps), the font made smaller for a phrase whose longest line would be wider than
the safe area.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import pysubs2

from marlin_desk.core.transcript import Transcript, Word
from marlin_desk.media.caption_styles import CaptionStyle, get_caption_style
from marlin_desk.media.safe_area import SafeArea, safe_area_for
from marlin_desk.media.speech_cues import (
    Phrase,
    clean_words,
    clip_words,
    layout_fits,
    lines_for,
    split_phrases,
)

# A phrase stays up this long after its last word when nothing follows at once.
HOLD_SECONDS = 0.5
# The longest a phrase of captions may be spoken over (they are read at a glance).
MAX_PHRASE_SECONDS = 4.0

# Glyph widths in em of a bold sans font (measured on DejaVu Sans Bold, a wide one: fonts that
# replace it are narrower): used only to keep the longest line inside the safe width.
_WIDE, _NARROW = set("MWmw@%"), set("iljtfrI.,;:!'|()-\" ")


@dataclass(frozen=True)
class CaptionEvent:
    """One state on screen: a phrase's lines with word `active` (index in the phrase) lit."""

    start_ms: int
    end_ms: int
    phrase: Phrase
    active: int


def text_em(text: str, bold: bool = True) -> float:
    """The estimated width of `text` in em (font size units)."""
    total = 0.0
    for ch in text:
        if ch in _WIDE:
            total += 1.1
        elif ch in _NARROW:
            total += 0.38
        elif ch.isupper() or ch.isdigit():
            total += 0.77
        else:
            total += 0.64
    return total if bold else total * 0.9


def caption_phrases(words: Sequence[Word], style: CaptionStyle) -> list[Phrase]:
    """The words grouped as `style` shows them (one each for word-by-word styles)."""
    words = clean_words(words)
    if style.unit == "word":
        return [Phrase((w,)) for w in words]
    fits = layout_fits(style.chars_per_line, style.max_lines)
    return split_phrases(words, fits, max_duration=MAX_PHRASE_SECONDS, max_words=style.max_words,
                         min_chars=style.chars_per_line // 2)


def caption_events(words: Sequence[Word], style: CaptionStyle, *,
                   duration: float | None = None) -> list[CaptionEvent]:
    """The timed states of the captions of `words` (seconds), never past `duration`."""
    phrases = caption_phrases(words, style)
    limit = None if duration is None else math.floor(duration * 1000)
    out: list[CaptionEvent] = []
    for n, phrase in enumerate(phrases):
        next_start = (round(phrases[n + 1].start * 1000) if n + 1 < len(phrases)
                      else None)
        end = round((phrase.end + HOLD_SECONDS) * 1000)
        if next_start is not None:
            end = min(end, max(next_start, round(phrase.end * 1000)))
        if limit is not None:
            end = min(end, limit)
        starts = [round(w.start * 1000) for w in phrase.words]
        for k, start in enumerate(starts):
            stop = starts[k + 1] if k + 1 < len(starts) else end
            stop = min(stop, end)
            if next_start is not None:
                stop = min(stop, next_start)
            if stop > start:
                out.append(CaptionEvent(start, stop, phrase, k))
    return out


@dataclass(frozen=True)
class CaptionRun:
    """One word as shown: its text (upper case for such styles) and colour (RGB hex)."""

    text: str
    colour: str
    lit: bool  # the word being said


@dataclass(frozen=True)
class CaptionFrame:
    """What is on screen from `start_ms` to `end_ms`: lines of words, the block's bottom centre
    at (x, y) in output pixels, in the style's font at `font_px`. The ASS and a preview drawn
    by the app both come from these."""

    start_ms: int
    end_ms: int
    lines: tuple[tuple[CaptionRun, ...], ...]
    font_px: int
    x: int
    y: int


def caption_frames(words: Sequence[Word], width: int, height: int, style: CaptionStyle, *,
                   duration: float | None = None,
                   safe: SafeArea | None = None) -> list[CaptionFrame]:
    """The laid-out captions of `words` (seconds from the frame's time 0) on a `width` x
    `height` output frame, inside `safe` (default: safe_area_for the frame)."""
    left, _top, right, bottom = (safe or safe_area_for(width, height)).box(width, height)
    size = round(height * style.font_height)
    x, y = width // 2, round(bottom - height * style.lift - size * style.outline)
    layouts: dict[int, tuple[list[list[int]], int]] = {}
    out = []
    for ev in caption_events(words, style, duration=duration):
        key = id(ev.phrase)
        if key not in layouts:  # one layout and size per phrase: its states must not jump
            lines = _lines(ev.phrase, style)
            widest = max(text_em(" ".join(_display(ev.phrase.texts[i], style) for i in line),
                                 style.bold) for line in lines)
            fitted = min(size, math.floor((right - left) / (widest + 2 * style.outline)))
            layouts[key] = lines, fitted
        lines, fitted = layouts[key]
        runs = tuple(tuple(_run(ev, i, style) for i in line) for line in lines)
        out.append(CaptionFrame(ev.start_ms, ev.end_ms, runs, fitted, x, y))
    return out


def frame_at(frames: Sequence[CaptionFrame], ms: int) -> CaptionFrame | None:
    """The caption on screen at `ms` (a preview's current time), if any."""
    return next((f for f in frames if f.start_ms <= ms < f.end_ms), None)


def captions_ass(words: Sequence[Word], width: int, height: int, style: CaptionStyle, *,
                 duration: float | None = None, safe: SafeArea | None = None) -> str:
    """The ASS document of caption_frames, for FFmpeg's `subtitles` filter."""
    subs = pysubs2.SSAFile()
    subs.info.update({"PlayResX": str(width), "PlayResY": str(height),
                      "ScaledBorderAndShadow": "yes", "WrapStyle": "2"})
    size = round(height * style.font_height)
    subs.styles["Default"] = _ass_style(style, size)
    for frame in caption_frames(words, width, height, style, duration=duration, safe=safe):
        subs.append(pysubs2.SSAEvent(start=frame.start_ms, end=frame.end_ms,
                                     text=_event_text(frame, style, size)))
    return subs.to_string("ass")


def clip_caption_frames(transcript: Transcript, start: float, duration: float, width: int,
                        height: int, style: str | CaptionStyle) -> list[CaptionFrame]:
    """A clip's laid-out captions (clip time): what the app's preview draws."""
    chosen = get_caption_style(style) if isinstance(style, str) else style
    return caption_frames(clip_words(transcript.words, start, duration), width, height, chosen,
                          duration=duration)


def clip_captions_ass(transcript: Transcript, start: float, duration: float, width: int,
                      height: int, style: str | CaptionStyle) -> str:
    """The ASS of a clip's captions (clip time), for the export (or a preview through FFmpeg)."""
    chosen = get_caption_style(style) if isinstance(style, str) else style
    return captions_ass(clip_words(transcript.words, start, duration), width, height, chosen,
                        duration=duration)


def _display(text: str, style: CaptionStyle) -> str:
    text = text.strip().replace("{", "(").replace("}", ")").replace("\\", "/")
    return text.upper() if style.uppercase else text


def _lines(phrase: Phrase, style: CaptionStyle) -> list[list[int]]:
    """The phrase's word indexes per line."""
    texts = [_display(t, style) for t in phrase.texts]
    laid = lines_for(texts, style.chars_per_line, style.max_lines)
    out, i = [], 0
    for line in laid:
        out.append(list(range(i, i + len(line))))
        i += len(line)
    return out


def _run(ev: CaptionEvent, i: int, style: CaptionStyle) -> CaptionRun:
    if i == ev.active:
        colour = style.highlight_colour
    elif i > ev.active and style.upcoming_colour:
        colour = style.upcoming_colour
    else:
        colour = style.text_colour
    return CaptionRun(_display(ev.phrase.texts[i], style), colour, i == ev.active)


def _colour(rgb: str) -> str:
    """ASS inline colour: &HBBGGRR&."""
    return f"&H{rgb[4:6]}{rgb[2:4]}{rgb[0:2]}&"


def _event_text(frame: CaptionFrame, style: CaptionStyle, size: int) -> str:
    head = rf"{{\an2\pos({frame.x},{frame.y})"
    head += (rf"\fs{frame.font_px}" if frame.font_px != size else "") + "}"
    lines = []
    for line in frame.lines:
        parts = []
        for run in line:
            tag = rf"\1c{_colour(run.colour)}"
            if run.lit and style.pop:
                tag += r"\fscx80\fscy80\t(0,100,\fscx100\fscy100)"
            parts.append(f"{{{tag}}}{run.text}")
        lines.append(" ".join(parts))
    return head + r"\N".join(lines)


def _ass_style(style: CaptionStyle, size: int) -> pysubs2.SSAStyle:
    def rgb(hex_: str, alpha: int = 0) -> pysubs2.Color:
        return pysubs2.Color(int(hex_[0:2], 16), int(hex_[2:4], 16), int(hex_[4:6], 16), alpha)

    # A box is libass's BorderStyle 4: one box behind the whole event, in the back colour,
    # padded by the shadow size. BorderStyle 3 boxes every run of text separately, so a
    # translucent box turns darker wherever a colour change splits a line.
    return pysubs2.SSAStyle(
        fontname=style.font, fontsize=size, bold=style.bold,
        primarycolor=rgb(style.text_colour), secondarycolor=rgb(style.highlight_colour),
        outlinecolor=rgb(style.outline_colour),
        backcolor=rgb(style.outline_colour, style.box_alpha) if style.box else rgb("000000", 0x80),
        outline=0.0 if style.box else round(size * style.outline, 1),
        shadow=round(size * (style.outline if style.box else style.shadow), 1),
        borderstyle=4 if style.box else 1,
        alignment=pysubs2.Alignment.BOTTOM_CENTER, marginl=0, marginr=0, marginv=0)
