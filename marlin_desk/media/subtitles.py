"""Subtitles from timeline events: cue layout and timing rules, SRT/VTT files, per-clip shifting.

The default rules follow the Netflix Timed Text Style Guide, General Requirements (English):
at most 42 characters per line and 2 lines per subtitle; a subtitle stays at least 5/6 s (20
frames at 24 fps) and at most 7 s; consecutive subtitles are at least 2 frames apart; reading
speed up to 20 characters per second for adult content. Every number is a field of
`SubtitleStyle`, so an editor can change them.

Events longer than the maximum are split into consecutive cues repeating the text (an event's
description stays visible for as long as the event lasts, with a 2-frame blink); set
`long_events="truncate"` to show it for the first `max_duration` seconds only. A text longer
than one subtitle is paged (lines balanced, the shorter on top); each page gets at least the
minimum duration, running past its event if it must, and the next event waits. Overlapping
events never overlap on screen: the earlier cue is trimmed (never below the minimum duration),
then the later one is delayed; a cue that would be left shorter than `min_visible` (0.3 s) is
dropped instead (it would only flash), and so is an event piece that a clip's edge cuts that
short.

All arithmetic is in integer milliseconds, the resolution of SRT and VTT, so the guarantees hold
in the written file and not only before rounding.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal

import pysubs2

from marlin_desk.core.errors import BadInput
from marlin_desk.core.timeline import Event
from marlin_desk.media.naming import write_atomically
from marlin_desk.media.safe_area import safe_area_for

SubtitleFormat = Literal["srt", "vtt", "ass"]


@dataclass(frozen=True)
class SubtitleStyle:
    """Layout and timing rules (defaults: Netflix Timed Text Style Guide, English)."""

    max_chars_per_line: int = 42
    max_lines: int = 2
    min_duration: float = 5 / 6
    max_duration: float = 7.0
    min_gap_frames: int = 2
    max_chars_per_second: float = 20.0
    long_events: Literal["split", "truncate"] = "split"
    # Not from the guide: a cue that the rules (or a clip's edge) leave shorter than this only
    # flashes and cannot be read, so it is dropped.
    min_visible: float = 0.3

    def __post_init__(self) -> None:
        if self.max_chars_per_line < 4 or self.max_lines < 1:
            raise BadInput("subtitle lines must allow at least 4 characters and 1 line")
        if not 0 < self.min_duration <= self.max_duration:
            raise BadInput("subtitle durations need 0 < minimum <= maximum")
        if self.min_gap_frames < 0 or self.max_chars_per_second <= 0:
            raise BadInput("subtitle gap must be >= 0 frames and reading speed > 0")


@dataclass(frozen=True)
class Cue:
    """One subtitle on screen: integer milliseconds and its lines."""

    start_ms: int
    end_ms: int
    lines: tuple[str, ...]

    @property
    def text(self) -> str:
        return "\n".join(self.lines)


# ---------------------------------------------------------------- layout


def wrap_text(text: str, width: int) -> list[str]:
    """Greedy word wrap to `width` characters; words longer than a line are cut."""
    words: list[str] = []
    for word in text.split():
        while len(word) > width:
            words.append(word[:width])
            word = word[width:]
        if word:
            words.append(word)
    lines: list[str] = []
    for word in words:
        if lines and len(lines[-1]) + 1 + len(word) <= width:
            lines[-1] += " " + word
        else:
            lines.append(word)
    return lines


def _balanced_pair(text: str, width: int) -> list[str] | None:
    """Two lines as even as possible (the shorter on top, a "pyramid"), or None if it cannot fit."""
    words = text.split()
    best: tuple[int, list[str]] | None = None
    for i in range(1, len(words)):
        top, bottom = " ".join(words[:i]), " ".join(words[i:])
        if len(top) <= width and len(bottom) <= width:
            score = max(len(top), len(bottom)) * 2 + (1 if len(top) > len(bottom) else 0)
            if best is None or score < best[0]:
                best = (score, [top, bottom])
    return best[1] if best else None


def paginate(text: str, style: SubtitleStyle) -> list[tuple[str, ...]]:
    """The text split into pages of at most `max_lines` lines of `max_chars_per_line`."""
    text = _clean(text)
    if not text:
        return []
    width = style.max_chars_per_line
    if len(text) <= width:
        return [(text,)]
    if style.max_lines >= 2:
        pair = _balanced_pair(text, width)
        if pair:
            return [tuple(pair)]
    lines = wrap_text(text, width)
    return [tuple(lines[i:i + style.max_lines]) for i in range(0, len(lines), style.max_lines)]


def _clean(text: str) -> str:
    """One line of plain text: no ASS override braces or backslash escapes reach the writers."""
    text = text.replace("{", "(").replace("}", ")").replace("\\", "/")
    return " ".join(text.split())


# ---------------------------------------------------------------- timing


def gap_ms(style: SubtitleStyle, fps: float) -> int:
    """The least time between two subtitles, in whole milliseconds at `fps`."""
    return math.ceil(style.min_gap_frames * 1000 / (fps if fps > 0 else 24.0))


def build_cues(events: Iterable[Event], style: SubtitleStyle = SubtitleStyle(), *,
               fps: float = 24.0, limit: float | None = None) -> list[Cue]:
    """Cues obeying `style` for events in seconds (`limit`: the end of the video or clip)."""
    gap = gap_ms(style, fps)
    min_ms = round(style.min_duration * 1000)
    max_ms = round(style.max_duration * 1000)
    limit_ms = None if limit is None else int(math.floor(limit * 1000))

    raw: list[Cue] = []
    for ev in sorted(events, key=lambda e: (e.start, e.end)):
        start, end = round(max(0.0, ev.start) * 1000), round(ev.end * 1000)
        if limit_ms is not None:
            end = min(end, limit_ms)
        if end <= start:
            continue
        raw.extend(_event_cues(start, end, paginate(ev.description, style), style, gap, min_ms,
                               max_ms))
    # `raw` stays in event order (each event's pages together), so a text that runs past its
    # event delays the next event rather than interleaving with it.
    visible = round(min(style.min_visible, style.min_duration) * 1000)

    # Lengthen short cues to the minimum and to the reading-speed time where there is room.
    grown: list[Cue] = []
    for i, cue in enumerate(raw):
        want = max(min_ms, math.ceil(len(cue.text) * 1000 / style.max_chars_per_second))
        room = raw[i + 1].start_ms - gap if i + 1 < len(raw) else None
        end = max(cue.end_ms, min(cue.start_ms + want, cue.start_ms + max_ms))
        if room is not None and room >= cue.end_ms:
            end = min(end, room)
        elif room is not None:
            end = cue.end_ms  # already overlapping: leave it to the overlap pass
        if limit_ms is not None:
            end = min(end, limit_ms)
        grown.append(replace(cue, end_ms=end))

    # No overlaps: trim the earlier cue (not below the minimum), else delay the later one.
    out: list[Cue] = []
    for cue in grown:
        if limit_ms is not None and cue.end_ms > limit_ms:
            cue = replace(cue, end_ms=limit_ms)
        if out and cue.start_ms < out[-1].end_ms + gap:
            prev = out[-1]
            keep = min(min_ms, prev.end_ms - prev.start_ms)
            if cue.start_ms - gap - prev.start_ms >= keep:
                out[-1] = replace(prev, end_ms=cue.start_ms - gap)
            elif cue.end_ms - (prev.start_ms + keep + gap) >= visible:
                out[-1] = replace(prev, end_ms=prev.start_ms + keep)
                cue = replace(cue, start_ms=out[-1].end_ms + gap)
            else:
                continue  # nothing readable would be left of it: drop it, keep the earlier one
        if cue.end_ms - cue.start_ms >= visible:
            out.append(cue)
    return out


def _event_cues(start: int, end: int, pages: Sequence[tuple[str, ...]], style: SubtitleStyle,
                gap: int, min_ms: int, max_ms: int) -> list[Cue]:
    """One event's pages over its time, in proportion to their length; long pages split.

    A text too long for its event gets the minimum duration per page (running past the event;
    the overlap pass then makes room), so no page is squeezed into a flash.
    """
    if not pages:
        return []
    n = len(pages)
    if n == 1:
        return _split_long(start, end, pages[0], style, gap, max_ms)
    end = max(end, start + n * min_ms + (n - 1) * gap)
    # Every page gets the minimum; the time left is shared in proportion to the text.
    spare = end - start - (n - 1) * gap - n * min_ms
    sizes = [len(" ".join(p)) for p in pages]
    cues: list[Cue] = []
    t = start
    for i, page in enumerate(pages):
        page_end = end if i == n - 1 else t + min_ms + round(spare * sizes[i] / sum(sizes))
        cues.extend(_split_long(t, page_end, page, style, gap, max_ms))
        t = page_end + gap
    return cues


def _split_long(start: int, end: int, page: tuple[str, ...], style: SubtitleStyle, gap: int,
                max_ms: int) -> list[Cue]:
    if end - start <= max_ms:
        return [Cue(start, end, page)]
    if style.long_events == "truncate":
        return [Cue(start, start + max_ms, page)]
    parts = math.ceil((end - start + gap) / (max_ms + gap))
    size = (end - start - gap * (parts - 1)) / parts
    cues = []
    for k in range(parts):
        s = start + round(k * (size + gap))
        e = end if k == parts - 1 else s + math.floor(size)
        cues.append(Cue(s, min(e, s + max_ms), page))
    return cues


# ---------------------------------------------------------------- clips and files


def clip_events(events: Iterable[Event], start: float, duration: float,
                min_piece: float = SubtitleStyle.min_visible) -> list[Event]:
    """Events overlapping [start, start + duration), cut to it and shifted to clip time.

    A piece that the clip's edge cut shorter than `min_piece` seconds is left out: the tail of
    the previous moment flashing at the start of a clip only confuses.
    """
    end = start + duration
    out = []
    for ev in events:
        s, e = max(ev.start, start), min(ev.end, end)
        cut = s > ev.start or e < ev.end
        if e > s and not (cut and e - s < min_piece):
            out.append(Event(s - start, e - start, ev.description))
    return out


def to_ssafile(cues: Iterable[Cue]) -> pysubs2.SSAFile:
    subs = pysubs2.SSAFile()
    for cue in cues:
        subs.append(pysubs2.SSAEvent(start=cue.start_ms, end=cue.end_ms,
                                     text=r"\N".join(cue.lines)))
    return subs


def render(cues: Iterable[Cue], fmt: SubtitleFormat) -> str:
    """The file text of `cues` in SRT, VTT or ASS (cues numbered from 1 in order)."""
    if fmt not in ("srt", "vtt", "ass"):
        raise BadInput(f"unknown subtitle format {fmt!r}; use srt or vtt")
    return to_ssafile(cues).to_string(fmt)


def write_text_file(path: Path, text: str) -> None:
    """UTF-8 with Unix line ends (what SRT/VTT players and FFmpeg's readers accept)."""
    with open(path, "w", encoding="utf-8", newline="\n") as fh:
        fh.write(text)


# ---------------------------------------------------------------- burn-in


@dataclass(frozen=True)
class BurnStyle:
    """Look of burned-in subtitles (libass). Sizes are fractions of the output frame.

    The text sits at the bottom of the frame's safe area (media/safe_area: on 9:16, above the
    platform's caption bar and clear of its side buttons; title-safe elsewhere), the same area
    the captions are laid in. Vertical lines wrap shorter (24 characters), so that a full line
    keeps a large font inside the narrower safe width.
    """

    font: str = "DejaVu Sans"  # fontconfig substitutes a similar sans font where it is missing
    bold: bool = True
    vertical_chars_per_line: int = 24
    font_height: float = 0.055  # of the frame height, capped so a full line fits the safe width
    outline: float = 0.004  # of the frame height
    shadow: float = 0.002


def burn_style_for(style: SubtitleStyle, width: int, height: int,
                   burn: BurnStyle = BurnStyle()) -> SubtitleStyle:
    """The layout rules used for burned text: shorter lines on vertical frames."""
    if height > width:
        return replace(style, max_chars_per_line=min(style.max_chars_per_line,
                                                      burn.vertical_chars_per_line))
    return style


def burn_in_ass(cues: Iterable[Cue], width: int, height: int,
                burn: BurnStyle = BurnStyle(), chars_per_line: int = 42) -> str:
    """An ASS document sized to the output frame (PlayRes = pixels), for the `subtitles` filter."""
    left, _top, right, bottom = safe_area_for(width, height).box(width, height)
    # An average glyph of a bold sans font is about 0.55 em wide: a full line must fit the safe
    # width.
    size = min(height * burn.font_height, (right - left) / (0.55 * chars_per_line))
    subs = to_ssafile(cues)
    subs.info["PlayResX"] = str(width)
    subs.info["PlayResY"] = str(height)
    subs.info["ScaledBorderAndShadow"] = "yes"
    subs.info["WrapStyle"] = "0"
    subs.styles["Default"] = pysubs2.SSAStyle(
        fontname=burn.font, fontsize=round(size), bold=burn.bold,
        primarycolor=pysubs2.Color(255, 255, 255, 0), outlinecolor=pysubs2.Color(0, 0, 0, 0),
        backcolor=pysubs2.Color(0, 0, 0, 128), outline=max(1.0, round(height * burn.outline, 1)),
        shadow=round(height * burn.shadow, 1), alignment=pysubs2.Alignment.BOTTOM_CENTER,
        marginl=left, marginr=width - right, marginv=height - bottom)
    return subs.to_string("ass")


def write_subtitles(events: Iterable[Event], path: str | os.PathLike[str],
                    fmt: Literal["srt", "vtt"] = "srt", *, style: SubtitleStyle = SubtitleStyle(),
                    fps: float = 24.0, limit: float | None = None) -> Path:
    """A whole video's subtitles at `path`, or at a suffixed free name if it exists (never
    overwritten; written to a partial name first). Returns the path written."""
    text = render(build_cues(events, style, fps=fps, limit=limit), fmt)
    return write_new_file(Path(path), text)


def write_new_file(final: Path, text: str) -> Path:
    """`text` into `final` or `final (2)`...: atomic, never over an existing file."""
    return write_atomically(final, text.encode("utf-8"))
