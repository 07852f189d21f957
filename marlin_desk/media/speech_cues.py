"""Subtitles from what was said: words with their times grouped into phrases, then cues.

A phrase never spans a silence of `MAX_PAUSE` or more, and fits the layout it is shown in (the
caller says what fits: two subtitle lines of 42 characters, or a karaoke caption's few words).
Among the groupings that fit, the cheapest is chosen (dynamic programming over the break
points): breaking after a sentence end costs nothing, after a clause mark (, ; : and dashes) or
at a pause a little, before a conjunction more, and anywhere else most, most of all after an
article or a preposition ("the | door"). Each cue costs a little too (fewer, fuller cues), a
short one more, and a sentence end inside a cue more (one sentence per subtitle where possible).

Cue times are the words' own: a cue starts when its first word starts. The timing rules of
`subtitles.build_cues` then apply unchanged (minimum duration and reading speed where the
silence after a phrase leaves room, the 2-frame gap, the end of the clip), so speech and event
subtitles obey one set of rules, written once.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace

from marlin_desk.core.timeline import Event
from marlin_desk.core.transcript import Word
from marlin_desk.media.subtitles import Cue, SubtitleStyle, build_cues, gap_ms

# Words further apart than this never share a phrase: the speaker stopped.
MAX_PAUSE = 1.0
# A gap between words this long reads as a break even without punctuation.
SHORT_PAUSE = 0.3

_SENTENCE_ENDS = (".", "?", "!", "…")
_CLAUSE_MARKS = (",", ";", ":", "—", "–", "-")
_CLOSERS = "\"')]}»”’"
_ABBREVIATIONS = {"mr.", "mrs.", "ms.", "dr.", "st.", "vs.", "e.g.", "i.e.", "no.", "jr.", "sr."}
# English: a break just before these reads naturally, just after the second set it does not.
_CONJUNCTIONS = {"and", "but", "or", "so", "because", "which", "that", "who", "when", "while",
                 "if", "then", "where", "until", "before", "after", "although", "how", "what",
                 "why"}
_CLINGING = {"a", "an", "the", "of", "to", "in", "on", "at", "for", "with", "from", "by", "my",
             "your", "his", "her", "our", "their", "its", "this", "these", "those", "and", "or",
             "but", "i", "we", "you", "is", "are", "was", "very"}

Fits = Callable[[Sequence[str]], bool]


@dataclass(frozen=True)
class Phrase:
    """Words shown together (times as the words have them)."""

    words: tuple[Word, ...]

    @property
    def start(self) -> float:
        return self.words[0].start

    @property
    def end(self) -> float:
        return self.words[-1].end

    @property
    def texts(self) -> list[str]:
        return [w.text.strip() for w in self.words]

    @property
    def text(self) -> str:
        return " ".join(self.texts)


def clean_words(words: Iterable[Word]) -> list[Word]:
    """Words in time order with text, none ending before it starts (Whisper can return both)."""
    out = [Word(w.start, max(w.start, w.end), w.text, w.probability)
           for w in words if w.text.strip()]
    return sorted(out, key=lambda w: (w.start, w.end))


def clip_words(words: Iterable[Word], start: float, duration: float) -> list[Word]:
    """Words of [start, start + duration), cut to it and shifted to clip time.

    A word the clip's edge cuts keeps its place only when at least half of it is inside: the
    clip then holds most of its sound; otherwise it belongs to the previous or next moment.
    """
    end = start + duration
    out = []
    for w in clean_words(words):
        s, e = max(w.start, start), min(w.end, end)
        length = w.end - w.start
        inside = e > s or (length == 0 and start <= w.start < end)
        if inside and (length == 0 or (e - s) >= 0.5 * length):
            out.append(Word(s - start, e - start, w.text, w.probability))
    return out


def ends_sentence(text: str) -> bool:
    core = text.strip().rstrip(_CLOSERS)
    return core.endswith(_SENTENCE_ENDS) and core.lower() not in _ABBREVIATIONS


def ends_clause(text: str) -> bool:
    return text.strip().rstrip(_CLOSERS).endswith(_CLAUSE_MARKS)


def text_break_cost(text: str, next_text: str) -> float:
    """What breaking between two words costs by their text alone (0: the best place)."""
    if ends_sentence(text):
        return 0.0
    if ends_clause(text):
        return 1.5
    if next_text.strip().lower().strip(",.") in _CONJUNCTIONS:
        return 3.0
    return 14.0 if text.strip().lower() in _CLINGING else 6.0


def _break_cost(word: Word, nxt: Word) -> float:
    """Breaking between two phrases: the text's cost, less where the speaker paused."""
    cost = text_break_cost(word.text, nxt.text)
    return min(cost, 1.0) if nxt.start - word.end >= SHORT_PAUSE else cost


def lines_for(texts: Sequence[str], width: int, max_lines: int) -> list[list[str]]:
    """Words laid out in lines of at most `width` characters: one line when it fits; else two
    lines as even as possible with the break at a natural place (after punctuation, before a
    conjunction, never between "the" and its noun when another place will do), the shorter on
    top; more lines wrap greedily. A word longer than a line gets a line of its own."""
    texts = [t for t in texts if t]
    if len(" ".join(texts)) <= width or len(texts) < 2:
        return [list(texts)] if texts else []
    if max_lines >= 2:
        best: tuple[float, int] | None = None
        for i in range(1, len(texts)):
            top, bottom = len(" ".join(texts[:i])), len(" ".join(texts[i:]))
            if top <= width and bottom <= width:
                score = (max(top, bottom) + 2.5 * text_break_cost(texts[i - 1], texts[i])
                         + (1 if top > bottom else 0))
                if best is None or score < best[0]:
                    best = (score, i)
        if best is not None:
            return [list(texts[:best[1]]), list(texts[best[1]:])]
    lines: list[list[str]] = []
    for t in texts:
        if lines and len(" ".join([*lines[-1], t])) <= width:
            lines[-1].append(t)
        else:
            lines.append([t])
    return lines


def split_phrases(words: Sequence[Word], fits: Fits, *, max_duration: float,
                  max_words: int | None = None, min_chars: int = 12,
                  min_seconds: float = 0.0, max_pause: float = MAX_PAUSE) -> list[Phrase]:
    """The cheapest grouping of `words` (clean_words order) into phrases that `fits` accepts,
    each spoken within `max_duration` seconds and with no pause of `max_pause` inside.

    A single word is always a phrase, even one that does not fit (the layout cuts it).
    `min_chars`: phrases shorter than this cost more (a lone "and" flashing by);
    `min_seconds`: a phrase that cannot stay up this long before the next one starts costs much
    more (the timing rules would drop it as a flash, and its words with it).
    """
    n = len(words)
    if n == 0:
        return []
    texts = [w.text.strip() for w in words]
    breaks = [_break_cost(words[i], words[i + 1]) for i in range(n - 1)]
    best = [0.0] + [float("inf")] * n
    back = [0] * (n + 1)
    for j in range(1, n + 1):  # best grouping of words[:j]; the last phrase is words[i:j]
        inner = 0.0  # sentence ends inside words[i:j]
        for i in range(j - 1, -1, -1):
            if i < j - 1:
                if words[i + 1].start - words[i].end >= max_pause:
                    break
                if ends_sentence(texts[i]):
                    inner += 4.0
                too_many = max_words is not None and j - i > max_words
                if (too_many or words[j - 1].end - words[i].start > max_duration
                        or not fits(texts[i:j])):
                    break
            chars = len(" ".join(texts[i:j]))
            cost = best[i] + 1.0 + inner + 2.0 * max(0.0, 1.0 - chars / min_chars)
            if j < n and words[j].start - words[i].start < min_seconds:
                cost += 50.0
            if i > 0:
                cost += breaks[i - 1]
            if cost < best[j]:
                best[j], back[j] = cost, i
    phrases: list[Phrase] = []
    j = n
    while j > 0:
        i = back[j]
        phrases.append(Phrase(tuple(words[i:j])))
        j = i
    return phrases[::-1]


def layout_fits(width: int, max_lines: int) -> Fits:
    """Whether words fit in `max_lines` lines of `width` characters (as lines_for lays them)."""
    def fits(texts: Sequence[str]) -> bool:
        lines = lines_for(texts, width, max_lines)
        return len(lines) <= max_lines and all(len(" ".join(x)) <= width for x in lines)
    return fits


def speech_cues(words: Iterable[Word], style: SubtitleStyle | None = None, *,
                fps: float = 24.0, limit: float | None = None) -> list[Cue]:
    """Subtitle cues of the words (seconds, video or clip time) under the timing rules."""
    style = style or SubtitleStyle()
    width, lines = style.max_chars_per_line, style.max_lines
    gap = gap_ms(style, fps) / 1000
    visible = min(style.min_visible, style.min_duration)
    phrases = split_phrases(clean_words(words), layout_fits(width, lines),
                            max_duration=style.max_duration, min_chars=width // 2,
                            min_seconds=visible + gap + 0.01)
    # Phrases end before the next one starts by the 2-frame gap: speech runs on without one,
    # and build_cues would rather delay (and maybe drop) a later cue than cut a short one. A
    # word Whisper gave no length still gets a cue (build_cues then holds it for the minimum).
    events = [Event(p.start, max(p.start + 0.001,
                                 min(p.end, nxt.start - gap - 0.001) if nxt else p.end), p.text)
              for p, nxt in zip(phrases, [*phrases[1:], None], strict=True)]
    cues = build_cues(events, style, fps=fps, limit=limit)
    # build_cues balances lines by length alone; speech reads better broken where it pauses.
    out = []
    for cue in cues:
        laid = lines_for(cue.text.split(), width, lines)
        ok = len(laid) <= lines and all(len(" ".join(x)) <= width for x in laid)
        out.append(replace(cue, lines=tuple(" ".join(x) for x in laid)) if ok else cue)
    return out
