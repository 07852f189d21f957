"""Burned-in captions for vertical video: the named looks, defined once.

Pure data (no pysubs2, no FFmpeg): the CLI's choices, the app's list and media.captions, which
writes the ASS, all read CAPTION_STYLES. They are laid inside the safe area
(media/safe_area.py), as burned subtitles are.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from marlin_desk.core.errors import BadInput


@dataclass(frozen=True)
class CaptionStyle:
    """One look. Colours are RGB hex; sizes are fractions of the frame height."""

    name: str
    label: str
    # "word": one word at a time; "phrase": a few words, the one being said highlighted.
    unit: Literal["word", "phrase"]
    max_words: int  # per phrase
    chars_per_line: int
    max_lines: int
    font_height: float  # the largest size; a long line is set smaller to fit the safe width
    uppercase: bool
    text_colour: str = "FFFFFF"
    highlight_colour: str = "FFE000"
    # Words not yet said; None: shown like the words already said.
    upcoming_colour: str | None = None
    outline_colour: str = "000000"
    outline: float = 0.12  # of the font size
    shadow: float = 0.04  # of the font size
    box: bool = False  # an opaque box behind the text (outline_colour, box_alpha)
    box_alpha: int = 0x60  # 0 opaque .. 255 invisible
    pop: bool = False  # each word grows in as it is said
    font: str = "DejaVu Sans"  # fontconfig substitutes a similar sans font where it is missing
    bold: bool = True
    # Where the bottom line sits: the bottom of the safe area, or this much higher.
    lift: float = 0.0


CAPTION_STYLES: dict[str, CaptionStyle] = {
    # The CapCut / Submagic look: a few big words, white with a thick black outline, the word
    # being said in yellow.
    "bold": CaptionStyle("bold", "Bold: 3 big words, the spoken one in yellow", "phrase",
                         max_words=3, chars_per_line=14, max_lines=2, font_height=0.045,
                         uppercase=True),
    # One word at a time, larger still, popping in as it is said.
    "pop": CaptionStyle("pop", "Pop: one huge word at a time", "word", max_words=1,
                        chars_per_line=10, max_lines=1, font_height=0.06, uppercase=True,
                        highlight_colour="FFFFFF", outline=0.14, pop=True),
    # A whole phrase in sentence case; what is still to be said is dimmed, the word being said
    # is green: easy to follow for longer speech.
    "karaoke": CaptionStyle("karaoke", "Karaoke: a phrase on two lines, the spoken word in "
                            "green", "phrase", max_words=8, chars_per_line=22, max_lines=2,
                            font_height=0.034, uppercase=False, highlight_colour="3CF06E",
                            upcoming_colour="C8C8C8"),
    # Quiet: normal case on a dark translucent box, the spoken word in a soft yellow.
    "clean": CaptionStyle("clean", "Clean: sentence case on a dark box", "phrase", max_words=7,
                          chars_per_line=24, max_lines=2, font_height=0.03, uppercase=False,
                          highlight_colour="FFE68C", outline=0.25, shadow=0.0, box=True,
                          bold=False),
}
CAPTION_STYLE_NAMES: tuple[str, ...] = tuple(CAPTION_STYLES)
DEFAULT_CAPTION_STYLE = "bold"


def get_caption_style(name: str) -> CaptionStyle:
    try:
        return CAPTION_STYLES[name]
    except KeyError:
        raise BadInput(f"unknown caption style {name!r}; use one of "
                       f"{', '.join(CAPTION_STYLES)}") from None
