"""Tolerant parsing of Marlin-2B's two answers (caption and find).

Why one module of over 400 lines: the caption and find parsers share the tolerant time and range
readers and their list of repairs; together they are one contract with the model's text.

A 2B model drifts from the shape it was trained on: a leftover ``<think>`` token, a missing header,
a decimal comma, a range past the clip's end. The parsers here read what can be read, never raise
on model text, and say what they repaired in ``problems``; ``format_ok`` is True exactly when
nothing had to be repaired or ignored, so a caller can count drift without re-parsing.

Decisions:
- Zero-length ranges (``<5.0 - 5.0>``) are kept as they are: the model uses them for instant
  actions, and widening them here would invent time; the timeline gives them a minimum width.
- Whitespace is never a repair: extra spaces carry no information and cannot be misread.
- An end up to ``END_TOLERANCE`` seconds past the clip is clamped silently: the model writes one
  decimal, so ``120.0`` for a 119.96 s window is the right answer, not drift.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass

from marlin_desk.core.timeline import Event, Span

END_TOLERANCE = 0.1  # seconds past the clip's end that count as rounding, not an error
_MAX_QUOTED_JUNK = 3  # junk lines quoted in problems; a repetition loop must not flood them
_QUOTE_CHARS = 60

# --------------------------------------------------------------------------------------------
# <think> and special tokens

_THINK_OPEN = "<think>"
_THINK_CLOSE = "</think>"
_SPECIAL_TOKEN = re.compile(r"<\|[^|<>\s]{1,40}\|>")


def _strip_think_noted(text: str) -> tuple[str, str | None]:
    """strip_think, plus a note when the answer had to be rescued from inside the think block."""
    s = text.strip()
    note: str | None = None
    for _ in range(4):  # "<think></think><think>..." is rare, but must not leave a token behind
        if s.startswith(_THINK_OPEN):
            body = s[len(_THINK_OPEN):]
            close = body.find(_THINK_CLOSE)
            if close < 0:
                # No closing tag: the model skipped straight to the answer (or was cut off).
                s = body.strip()
                continue
            inner, after = body[:close].strip(), body[close + len(_THINK_CLOSE):].strip()
            if after or not inner:
                s = after
            else:
                s, note = inner, "the answer was written inside the <think> block"
            continue
        close = s.find(_THINK_CLOSE)
        if close >= 0:
            # The chat template put <think> in the prompt: the reply starts inside the block.
            before, after = s[:close].strip(), s[close + len(_THINK_CLOSE):].strip()
            if after or not before:
                s = after
            else:
                s, note = before, "the answer was written inside the <think> block"
            continue
        break
    return s, note


def strip_think(text: str) -> str:
    """Remove a leading ``<think>...</think>`` (or a lone ``<think>``), keeping the answer.

    When the think block is closed and nothing follows it, its content is returned instead: a
    model that wrote its answer inside the block still answered, and dropping it would lose it.
    """
    return _strip_think_noted(text)[0]


def _clean(text: str) -> tuple[str, list[str]]:
    """The answer without think blocks or chat special tokens, and notes about what was odd."""
    problems: list[str] = []
    s, note = _strip_think_noted(text)
    if note:
        problems.append(note)
    without = _SPECIAL_TOKEN.sub("", s)
    if without != s:
        s = _strip_think_noted(without)[0]
    return s.replace("\r\n", "\n").replace("\r", "\n"), problems


# --------------------------------------------------------------------------------------------
# times

_TIME_FULL = re.compile(
    r"""
    (?P<neg>-)?
    (?:
        (?P<h>\d+):(?P<hm>[0-5]?\d):(?P<hs>[0-5]?\d(?:[.,]\d+)?)    # h:mm:ss(.f)
      | (?P<m>\d+):(?P<ms>[0-5]?\d(?:[.,]\d+)?)                     # m:ss(.f)
      | (?P<s>\d+(?:[.,]\d*)?|[.,]\d+)                              # seconds
    )
    (?:\s*(?:seconds?|secs?|s))?
    """,
    re.VERBOSE | re.IGNORECASE,
)


def parse_time(text: str) -> float:
    """Seconds from the ways a model writes a time: ``12.5``, ``12,5``, ``12.5s``, ``1:05.5``...

    A leading minus is accepted (the caller decides whether to clamp): a model that writes
    ``-0.5`` meant a time, and rejecting it would turn an event into a junk line.
    """
    m = _TIME_FULL.fullmatch(text.strip())
    if m is None:
        raise ValueError(f"not a time: {text!r}")

    def num(s: str) -> float:
        return float(s.replace(",", "."))

    if m["h"] is not None:
        value = int(m["h"]) * 3600 + int(m["hm"]) * 60 + num(m["hs"])
    elif m["m"] is not None:
        value = int(m["m"]) * 60 + num(m["ms"])
    else:
        value = num(m["s"])
    if not math.isfinite(value):
        raise ValueError(f"not a finite time: {text!r}")
    return -value if m["neg"] else value


# A time embedded in a line: no bare trailing dot (it would swallow a sentence's full stop).
_T = r"-?\d+(?::\d{1,2}){0,2}(?:[.,]\d+)?(?:\s?(?:seconds|second|secs|sec|s)\b)?"
_PLAIN_NUM = re.compile(r"\d+(?:\.\d+)?")
_DASHES = "-\u2010\u2011\u2012\u2013\u2014\u2212~"
_SEP = rf"\s*(?P<sep>[{_DASHES}]|\bto\b|\buntil\b|\btill\b)\s*"


def _time_notes(raw: str) -> list[str]:
    """What is non-canonical about one written time (canonical: plain seconds, dot decimal)."""
    notes = []
    if "," in raw:
        notes.append("decimal comma in times")
    if ":" in raw:
        notes.append("times written as m:ss")
    if re.search(r"[a-z]", raw, re.IGNORECASE):
        notes.append("units written after times")
    return notes


# --------------------------------------------------------------------------------------------
# caption

_EVENT_LINE = re.compile(
    rf"""
    ^\s*
    (?P<prefix>(?:
        [-*\u2022\u00b7+\u2013\u2014](?=[\s<\[(])\s*     # bullets (not a negative time)
      | \d{{1,3}}[.)](?=\s)\s*                             # "1. " or "1) "
      | \(\d{{1,3}}\)\s*                                   # "(1) "
      | \*\*\s* | \#+\s*                                   # markdown
    )*)
    (?P<open>[<\[(])?\s*
    (?P<from>from\s+)?
    (?P<a>{_T})
    {_SEP}
    (?P<b>{_T})
    \s*(?P<close>[>\])])?
    (?P<rest>.*)$
    """,
    re.VERBOSE | re.IGNORECASE,
)
_DESC_LEAD = re.compile(r"^[\s:;,.|*\-\u2013\u2014]+")
_HEADER = re.compile(
    r"""
    ^\s*(?:\#+\s*)?(?P<md1>\*\*|__)?\s*
    (?P<name>scene\s+description|spatial\s+description|scene|time-?ranged\s+events|events?)
    \s*(?P<md2>\*\*|__)?\s*(?P<colon>:)?\s*(?P<md3>\*\*|__)?\s*(?P<rest>.*)$
    """,
    re.VERBOSE | re.IGNORECASE,
)


@dataclass(frozen=True)
class CaptionParse:
    """A parsed caption answer: the scene paragraph, the events (sorted) and what was repaired."""

    scene: str
    events: list[Event]
    format_ok: bool
    problems: tuple[str, ...]


@dataclass(frozen=True)
class _Line:
    """One event line as read, before clamping and de-duplication."""

    start: float
    end: float
    description: str
    notes: tuple[str, ...]


def _header(line: str) -> tuple[str, str, bool] | None:
    """('scene' | 'events', text after the header, canonical?) or None when not a header."""
    m = _HEADER.match(line)
    if m is None:
        return None
    rest = m["rest"].strip()
    if m["colon"] is None and rest:
        return None  # "Scene opens on..." is prose, not a header
    kind = "events" if m["name"].lower().startswith(("event", "time")) else "scene"
    stripped = line.strip()
    canonical = (stripped.startswith("Scene:") if kind == "scene" else stripped == "Events:")
    return kind, rest, canonical


def _event_line(line: str) -> _Line | None:
    """Read one event line, or None when the line does not clearly start with a time range."""
    m = _EVENT_LINE.match(line)
    if m is None:
        return None
    try:
        a, b = parse_time(m["a"]), parse_time(m["b"])
    except ValueError:
        return None
    open_, close = m["open"], m["close"]
    rest = m["rest"]
    description = " ".join(_DESC_LEAD.sub("", rest).split()).rstrip("*").strip()
    if not open_ and not close:
        # Without brackets, only accept a line that plainly starts with a range: a separator
        # after it, or times that cannot be ordinary numbers ("2 - 3 people walk" is prose).
        separated = bool(re.match(r"\s*[:|\-\u2013\u2014)]", rest))
        timelike = all(re.search(r"[.,:a-z]", t, re.IGNORECASE) for t in (m["a"], m["b"]))
        if not (separated or timelike):
            return None
    if not description:
        return None
    notes: list[str] = []
    if m["prefix"].strip():
        notes.append("bullets or numbers before the range")
    if open_ != "<" or close != ">":
        notes.append("range not written as <start - end>")
    if m["from"] or m["sep"] != "-":
        notes.append("a dash other than '-' (or a word) between times")
    for raw in (m["a"], m["b"]):
        notes.extend(_time_notes(raw))
    if _DESC_LEAD.match(rest.lstrip()):
        notes.append("punctuation between the range and the description")
    return _Line(a, b, description, tuple(dict.fromkeys(notes)))


def _quote(line: str) -> str:
    line = " ".join(line.split())
    return f'"{line[:_QUOTE_CHARS]}..."' if len(line) > _QUOTE_CHARS else f'"{line}"'


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def parse_caption(text: str, clip_duration: float | None = None) -> CaptionParse:
    """Read ``Scene: ...`` / ``Events:`` / ``<start - end> text`` lines, repairing what drifted.

    Times are as the model wrote them (window-relative); with ``clip_duration`` they are clamped
    to the clip. Overlapping events are kept (they are real: two things happen at once); exact
    duplicate lines are dropped (a small model's repetition loop).
    """
    if clip_duration is not None and not (math.isfinite(clip_duration) and clip_duration > 0):
        raise ValueError(f"clip_duration must be a positive number of seconds: {clip_duration!r}")
    body, problems = _clean(text)
    if not body.strip():
        return CaptionParse("", [], False, (*problems, "the answer is empty"))

    state = "pre"  # pre -> scene -> events
    scene_parts: list[str] = []
    lines: list[_Line] = []
    junk: list[str] = []
    notes: Counter[str] = Counter()
    scene_headers = events_headers = 0
    events_without_header = False
    header_notes: list[str] = []

    for raw in body.split("\n"):
        if not raw.strip():
            continue
        head = _header(raw)
        if head is not None:
            kind, rest, canonical = head
            if kind == "scene":
                scene_headers += 1
                if not canonical:
                    header_notes.append("the Scene header is not written 'Scene:'")
                if state == "events":
                    header_notes.append("the Scene paragraph comes after the events")
                state = "scene"
                if rest:
                    scene_parts.append(rest)
                continue
            events_headers += 1
            if not canonical:
                header_notes.append("the Events header is not written 'Events:'")
            state = "events"
            if not rest:
                continue
            raw = rest  # "Events: <0 - 2> ..." carries its first event on the header line
        line = _event_line(raw)
        if line is not None:
            if state != "events":
                events_without_header = events_without_header or events_headers == 0
                state = "events"
            lines.append(line)
            notes.update(line.notes)
        elif state == "events":
            junk.append(raw)
        else:
            scene_parts.append(raw.strip())

    scene = " ".join(" ".join(scene_parts).split())
    if scene_headers == 0:
        problems.append("no 'Scene:' header" if scene else "no scene description")
    elif not scene:
        problems.append("the scene description is empty")
    if scene_headers > 1:
        problems.append("more than one Scene header")
    if events_headers == 0:
        problems.append("no 'Events:' header" + ("" if lines else " and no events"))
    elif events_without_header:
        problems.append("events before the 'Events:' header")
    if events_headers > 1:
        problems.append("more than one Events header")
    problems.extend(dict.fromkeys(header_notes))
    for note, count in notes.items():
        problems.append(f"{note} ({_plural(count, 'line')})")
    if junk:
        quoted = ", ".join(_quote(j) for j in junk[:_MAX_QUOTED_JUNK])
        more = len(junk) - _MAX_QUOTED_JUNK
        problems.append(f"ignored {_plural(len(junk), 'non-event line')}: {quoted}"
                        + (f" and {more} more" if more > 0 else ""))

    events, fix_problems = _fix_ranges(lines, clip_duration)
    problems.extend(fix_problems)
    return CaptionParse(scene, events, not problems, tuple(problems))


def _fix_ranges(lines: list[_Line], clip_duration: float | None
                ) -> tuple[list[Event], list[str]]:
    """Swap reversed ranges, clamp to the clip, drop duplicates; sort by start."""
    counts: Counter[str] = Counter()
    seen: set[tuple[float, float, str]] = set()
    events: list[Event] = []
    for ln in lines:
        start, end = ln.start, ln.end
        if start > end:
            start, end = end, start
            counts["reversed range swapped"] += 1
        if end < 0:
            counts["event before the clip's start dropped"] += 1
            continue
        if start < 0:
            start = 0.0
            counts["negative time clamped to 0"] += 1
        if clip_duration is not None:
            if start >= clip_duration:
                counts["event starting at or after the clip's end dropped"] += 1
                continue
            if end > clip_duration:
                if end > clip_duration + END_TOLERANCE:
                    counts["end past the clip's end clamped"] += 1
                end = float(clip_duration)
        key = (round(start, 3), round(end, 3), ln.description.casefold())
        if key in seen:
            counts["duplicate event dropped"] += 1
            continue
        seen.add(key)
        events.append(Event(float(start), float(end), ln.description))
    events.sort(key=lambda e: (e.start, e.end))
    return events, [f"{note} ({n}x)" if n > 1 else note for note, n in counts.items()]


# --------------------------------------------------------------------------------------------
# find

@dataclass(frozen=True)
class FindParse:
    """A parsed find answer: one span (None when no range could be read) and what was repaired."""

    span: Span | None
    format_ok: bool
    problems: tuple[str, ...]


_FIND_CANONICAL = re.compile(r"From\s+(\d+(?:\.\d+)?)\s+to\s+(\d+(?:\.\d+)?)\s*\.?")
_FIND_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(rf"\bfrom\s+(?P<a>{_T}){_SEP}(?P<b>{_T})", re.IGNORECASE), "from"),
    (re.compile(rf"\bbetween\s+(?P<a>{_T})\s*(?P<sep>and|[{_DASHES}]|to)\s*(?P<b>{_T})",
                re.IGNORECASE), "between"),
    (re.compile(rf"[<\[(]\s*(?P<a>{_T}){_SEP}(?P<b>{_T})\s*[>\])]", re.IGNORECASE), "bracket"),
    (re.compile(rf"(?<![\w.,:])(?P<a>{_T}){_SEP}(?P<b>{_T})", re.IGNORECASE), "bare"),
)


def _find_range(text: str) -> tuple[float, float, re.Match[str], str] | None:
    """The first readable range, trying the trained wording before looser ones."""
    for pattern, kind in _FIND_PATTERNS:
        for m in pattern.finditer(text):
            try:
                return parse_time(m["a"]), parse_time(m["b"]), m, kind
            except ValueError:
                continue
    return None


def parse_find(text: str, clip_duration: float | None = None) -> FindParse:
    """Read ``From 14.3 to 18.2.`` (or a looser range) into one span, clamped to the clip.

    The model always answers with a range, even for an absent event, so a span here says
    nothing about confidence; the score must come from elsewhere.
    """
    if clip_duration is not None and not (math.isfinite(clip_duration) and clip_duration > 0):
        raise ValueError(f"clip_duration must be a positive number of seconds: {clip_duration!r}")
    body, problems = _clean(text)
    body = " ".join(body.split())
    if not body:
        return FindParse(None, False, (*problems, "the answer is empty"))
    found = _find_range(body)
    if found is None:
        return FindParse(None, False, (*problems, f"no time range in the answer: {_quote(body)}"))
    start, end, m, kind = found

    if _FIND_CANONICAL.fullmatch(body) is None:
        if kind == "from" and _FIND_CANONICAL.fullmatch(m.group(0)) is not None:
            problems.append("extra text around the answer")
        elif kind == "from":
            notes = [n for raw in (m["a"], m["b"]) for n in _time_notes(raw)]
            if m["sep"].lower() != "to":
                notes.append("a dash instead of 'to'")
            problems.extend(dict.fromkeys(notes or ["not written 'From <start> to <end>.'"]))
            if body.strip(" .") != m.group(0).strip(" ."):
                problems.append("extra text around the answer")
        else:
            problems.append(f"no 'From <start> to <end>.' sentence; read {_quote(m.group(0))}")
    rest = body[:m.start()] + " " + body[m.end():]
    if _find_range(rest) is not None:
        problems.append("more than one time range; kept the first")

    if start > end:
        start, end = end, start
        problems.append("reversed range swapped")
    if end < 0:
        return FindParse(None, False, (*problems, "the range lies before the clip's start"))
    if start < 0:
        start = 0.0
        problems.append("negative time clamped to 0")
    if clip_duration is not None:
        if start >= clip_duration:
            problems.append(f"the range starts at or after the clip's end ({clip_duration:g} s)")
            return FindParse(None, False, tuple(problems))
        if end > clip_duration:
            if end > clip_duration + END_TOLERANCE:
                problems.append("end past the clip's end clamped")
            end = float(clip_duration)
    return FindParse(Span(float(start), float(end)), not problems, tuple(problems))
