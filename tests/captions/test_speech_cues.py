"""Speech subtitles: phrases at sentence and clause breaks, cue times from the words, the
timed-text rules of event subtitles, words cut by a clip's edge."""

from __future__ import annotations

import pysubs2
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from marlin_desk.core.transcript import Word
from marlin_desk.media.speech_cues import clip_words, lines_for, speech_cues
from marlin_desk.media.subtitles import SubtitleStyle, render

STYLE = SubtitleStyle()


def words_of(text: str, start: float = 0.0, step: float = 0.3,
             pauses: dict[int, float] | None = None) -> list[Word]:
    """Words of `text`, one every `step` seconds, with extra silence before word i."""
    out, t, pauses = [], start, pauses or {}
    for i, token in enumerate(text.split()):
        t += pauses.get(i, 0.0)
        out.append(Word(t, t + step * 0.9, " " + token))
        t += step
    return out


# Realistic speech: words of 1-12 letters, some with punctuation, 0-0.8 s long (Whisper gives
# some words no length), pauses between them from none to 1.5 s.
TOKENS = st.tuples(st.text("abcdefghijklmnopqrstuvwxyz", min_size=1, max_size=12),
                   st.sampled_from(["", "", "", "", ",", ".", "?", "!", ";"]),
                   st.one_of(st.just(0.0), st.floats(0.02, 0.8)),
                   st.sampled_from([0.0, 0.0, 0.0, 0.05, 0.2, 0.4, 1.5]))
SPEECH = st.lists(TOKENS, min_size=1, max_size=80)


def _speech(tokens: list[tuple[str, str, float, float]]) -> list[Word]:
    out, t = [], 0.0
    for text, mark, length, pause in tokens:
        t += pause
        out.append(Word(t, t + length, " " + text + mark))
        t += length
    return out


@settings(max_examples=200, deadline=None)
@given(SPEECH, st.sampled_from([23.976, 25.0, 30.0, 60.0]))
def test_speech_cues_obey_the_rules_and_keep_every_word(tokens, fps) -> None:
    words = _speech(tokens)
    limit = words[-1].end + 0.5
    cues = speech_cues(words, STYLE, fps=fps, limit=limit)
    for cue in cues:
        assert 1 <= len(cue.lines) <= 2
        assert all(0 < len(line) <= 42 for line in cue.lines)
        assert 300 <= cue.end_ms - cue.start_ms <= 7000
        assert cue.end_ms <= limit * 1000
    for a, b in zip(cues, cues[1:], strict=False):
        assert b.start_ms - a.end_ms >= 2 * 1000 / fps - 1e-9
    # Nothing lost, nothing repeated, in the spoken order.
    assert " ".join(c.text.replace("\n", " ") for c in cues).split() == [
        w.text.strip() for w in words]
    # Each cue starts when its first word is said (or a gap later, after a cue it follows).
    starts = {round(w.start * 1000) for w in words}
    assert all(min(abs(c.start_ms - s) for s in starts) <= 2 * 1000 / fps + 1 for c in cues)


def test_cues_split_at_sentences_and_start_with_their_words() -> None:
    words = words_of("Welcome back to the channel. Today we cut a short video. That's it!",
                     pauses={5: 0.3, 11: 0.3})
    cues = speech_cues(words, STYLE, fps=25)
    assert [c.text.replace("\n", " ") for c in cues] == [
        "Welcome back to the channel.", "Today we cut a short video.", "That's it!"]
    # Cue times follow the words (not spread evenly over a segment).
    assert [c.start_ms for c in cues] == [0, round(words[5].start * 1000),
                                          round(words[11].start * 1000)]
    assert cues[0].end_ms == round(words[4].end * 1000) or cues[0].end_ms >= 833


def test_a_long_sentence_breaks_at_a_clause_or_before_a_conjunction() -> None:
    text = ("I opened the door of the old house very slowly, and the cat that lived there "
            "ran out into the garden before anyone could stop it")
    cues = speech_cues(words_of(text, step=0.25), STYLE, fps=25)
    assert len(cues) >= 2
    first = cues[0].text.replace("\n", " ")
    assert first.endswith("slowly,") or cues[1].text.startswith(("and", "that", "before"))
    for cue in cues[:-1]:  # never ends on an article or a preposition
        assert cue.text.split()[-1].lower() not in {"the", "a", "of", "to", "into"}


def test_a_long_pause_ends_a_cue() -> None:
    cues = speech_cues(words_of("so we wait here and then we go", pauses={4: 1.4}), STYLE)
    assert [c.text for c in cues] == ["so we wait here", "and then we go"]


def test_two_lines_break_at_a_natural_place() -> None:
    text = "and I will show you how the captions follow every word."
    lines = lines_for(text.split(" "), 42, 2)
    assert [" ".join(x) for x in lines] == ["and I will show you",
                                            "how the captions follow every word."]


def test_words_cut_by_the_clip_edge_stay_only_when_mostly_inside() -> None:
    words = [Word(0.0, 1.0, " first"), Word(1.0, 2.0, " second"), Word(2.0, 3.0, " third"),
             Word(3.0, 4.0, " fourth")]
    # Clip 1.6-3.4: "second" is 40% inside (dropped), "fourth" 40% (dropped), "third" whole.
    (third,) = clip_words(words, 1.6, 1.8)
    assert third.text == " third" and (third.start, third.end) == pytest.approx((0.4, 1.4))
    # Clip 1.4-3.7: "second" 60% inside and "fourth" 70%: kept, cut to the clip.
    got = clip_words(words, 1.4, 2.3)
    assert [w.text for w in got] == [" second", " third", " fourth"]
    assert got[0].start == 0.0 and abs(got[-1].end - 2.3) < 1e-9


def test_srt_of_speech_reads_back(tmp_path) -> None:
    words = words_of("One sentence here. And {another} one, with a back\\slash.")
    text = render(speech_cues(words, STYLE, fps=25), "srt")
    subs = pysubs2.SSAFile.from_string(text)
    assert [e.plaintext for e in subs] == ["One sentence here.",
                                           "And (another) one, with a back/slash."]
