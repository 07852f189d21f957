"""Where text may go on an exported frame, defined once for burned subtitles and captions.

On a 9:16 video the platforms' own buttons and text cover parts of the picture; the strictest
of the published guides for 1080x1920: Meta's Reels guide keeps the top 14% and the bottom 35%
clear (the caption, the audio bar and ad buttons) and 6% on each side; TikTok's overlays cover
about the top 250 px (13%), the bottom 420 px (22%) and a column of about 170 px (16%) on the
right. Text is centred, so the 16% right margin applies to both sides. Landscape and square
frames keep the title-safe margins (TITLE_SAFE).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SafeArea:
    """Fractions of the frame kept clear of text on each side."""

    top: float = 0.14
    bottom: float = 0.35
    left: float = 0.16
    right: float = 0.16

    def box(self, width: int, height: int) -> tuple[int, int, int, int]:
        """(left, top, right, bottom) in pixels of a width x height frame."""
        return (round(width * self.left), round(height * self.top),
                round(width * (1 - self.right)), round(height * (1 - self.bottom)))


SAFE_AREA = SafeArea()
# Landscape and square frames have no app buttons over them: the classic title-safe area (the
# central 80% of width and height, SMPTE RP 27.3) keeps text clear of the edges of any screen.
TITLE_SAFE = SafeArea(top=0.1, bottom=0.1, left=0.1, right=0.1)


def safe_area_for(width: int, height: int) -> SafeArea:
    """The platforms' safe area on vertical frames, title-safe on the others."""
    return SAFE_AREA if height > width else TITLE_SAFE
