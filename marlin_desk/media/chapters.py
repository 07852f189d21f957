"""YouTube chapters (the timestamp list pasted into a video's description) from events.

YouTube's rules: the first chapter starts at 0:00, there are at least three, and each lasts at
least 10 seconds. We take event starts as candidate boundaries in time order and keep each one
that is at least 10 s after the previous chapter and leaves at least 10 s before the end; a new
chapter whose title repeats the previous one is skipped. Times are whole seconds (what YouTube
reads), and the spacing rule is checked on those whole seconds.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

from marlin_desk.core.errors import BadInput
from marlin_desk.core.timeline import Event

MIN_CHAPTERS = 3
MIN_LENGTH_S = 10
MAX_TITLE_CHARS = 80


@dataclass(frozen=True)
class Chapter:
    start: int  # whole seconds
    title: str


def youtube_chapters(events: Iterable[Event], duration: float, *, min_length: int = MIN_LENGTH_S,
                     min_count: int = MIN_CHAPTERS) -> list[Chapter]:
    """Chapters for a video of `duration` seconds; BadInput when the rules cannot be met."""
    ordered = sorted((e for e in events if _title(e.description)), key=lambda e: e.start)
    if not ordered:
        raise BadInput("no events to make chapters from")
    last_allowed = math.floor(duration) - min_length
    chapters = [Chapter(0, _title(ordered[0].description))]
    for ev in ordered[1:]:
        start = math.floor(ev.start)
        title = _title(ev.description)
        if start - chapters[-1].start < min_length or start > last_allowed:
            continue
        if title == chapters[-1].title:
            continue
        chapters.append(Chapter(start, title))
    if len(chapters) < min_count:
        raise BadInput(f"only {len(chapters)} chapter(s) fit YouTube's rules (at least "
                       f"{min_count}, each at least {min_length} s long): the video needs more "
                       "events further apart")
    return chapters


def format_chapters(chapters: Iterable[Chapter]) -> str:
    """`0:00 Title` lines; hours appear only when the video reaches an hour."""
    chapters = list(chapters)
    long_form = any(c.start >= 3600 for c in chapters)
    return "".join(f"{_stamp(c.start, long_form)} {c.title}\n" for c in chapters)


def _stamp(seconds: int, long_form: bool) -> str:
    h, rest = divmod(seconds, 3600)
    m, s = divmod(rest, 60)
    return f"{h}:{m:02d}:{s:02d}" if long_form else f"{m}:{s:02d}"


def _title(description: str) -> str:
    title = " ".join(description.split())
    if len(title) > MAX_TITLE_CHARS:
        title = title[:MAX_TITLE_CHARS - 1].rsplit(" ", 1)[0] + "…"
    return title
