"""Synthetic clips generated in memory as the app's own `SampledFrames`, seeded.

Each clip is solid-colour segments on a 0.5 s grid, sampled at 2 frames per second (frame i at
i / 2 s), already at the frame size the tiny model's budget gives (what `media.sample_window`
returns for a real file). A little per-frame noise stands in for the codec's colour shifts, so a
model trained here also sees decoded video files (evaluate.py) as familiar input.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import numpy as np

from marlin_desk.core.budget import VideoBudget
from marlin_desk.core.prompts import CAPTION_PROMPT, find_prompt
from marlin_desk.media.sampling import (
    SampledFrames,
    choose_indices,
    frame_count_for,
    frame_size_for,
)

# The tiny model's budget: frames of 32x32 up to 64x64 (1 to 4 language tokens per frame pair)
# instead of the real model's >= 131,072 pixels (>= 128 tokens per pair), which would make CPU
# training ~30x slower for no gain on solid colours. Recorded in the model folder (budget.json).
# 40 frames at most: the clips are at most 20 s, so the app reads a video in windows of 20 s.
TINY_BUDGET = VideoBudget(min_pixels=32 * 32, max_pixels=64 * 64, max_frames=40)
SOURCE_SIZE = (64, 64)  # (height, width) of the synthetic "file" before the budget's resize
FPS = 2.0

COLOURS: dict[str, tuple[int, int, int]] = {
    "red": (220, 30, 30), "green": (30, 200, 40), "blue": (30, 60, 220),
    "yellow": (230, 220, 30), "white": (240, 240, 240), "black": (0, 0, 0),
    "purple": (130, 40, 170), "orange": (245, 140, 20),
}
PROBE_COLOURS = list(COLOURS)  # 8 colours: chance is 1/8
FIND_COLOURS = ["red", "green", "blue", "yellow"]  # round 2's easy task: 4 colours on black
PROBE_PROMPT = "What colour is the screen?"  # a probe prompt, NOT one of the canonical two
PROBE_SECONDS = 4.0

Segment = tuple[float, float, str]  # start, end (seconds), colour name


@dataclass
class Example:
    frames: SampledFrames
    prompt: str
    answer: str
    segments: list[Segment]
    target: str | tuple[float, float]  # colour name (probe) or the (start, end) to find


# "grid": frames at exactly 0, 0.5, 1.0 ... s. "app": the times the app gives a file of the
# clip written at SOURCE_FPS (evaluate.py's files): qwen-vl-utils spreads the frames over the
# window (linspace over the source frames), so an 11 s clip gets 0.0, 0.5, 1.0, 1.6, 2.1 ...
FRAME_TIMES = "grid"
SOURCE_FPS = 10

# How a find query names the colour, and the source frame sizes clips come from (height, width).
# Defaults: the first sessions' single phrasing and square 64 x 64 files; `train.py --varied`
# adds more phrasings and 16:9 files (32 x 64 frames: 2 tokens per frame pair, not 4).
QUERY_STYLES = ["the {} screen"]
SOURCE_SIZES = [SOURCE_SIZE]
VARIED_QUERY_STYLES = ["the {} screen", "the screen turns {}", "a {} screen", "{}",
                       "when the screen is {}"]
VARIED_SOURCE_SIZES = [SOURCE_SIZE, (180, 320)]


def query_for(name: str, seed: int) -> str:
    """The find query for a colour, in one of QUERY_STYLES (seeded, independent of the clip)."""
    return random.Random(seed * 17 + 9).choice(QUERY_STYLES).format(name)


def source_size_for(seed: int) -> tuple[int, int]:
    return random.Random(seed * 19 + 2).choice(SOURCE_SIZES)


def frame_times(duration: float, budget: VideoBudget = TINY_BUDGET) -> list[float]:
    if FRAME_TIMES == "grid":
        return [i / FPS for i in range(int(round(duration * FPS)))]
    total = int(round(duration * SOURCE_FPS))
    picks = choose_indices(total, frame_count_for(total, SOURCE_FPS, budget))
    return [i / SOURCE_FPS for i in picks]


def clip(segments: list[Segment], duration: float, seed: int, noise: int = 6,
         budget: VideoBudget = TINY_BUDGET) -> SampledFrames:
    """Frames at 0, 0.5, 1.0, ... s (< duration) painted with the segment that holds each time."""
    height, width = frame_size_for(*source_size_for(seed), budget)
    rng = np.random.default_rng(seed)
    times = frame_times(duration, budget)
    frames = np.empty((len(times), height, width, 3), dtype=np.uint8)
    for i, t in enumerate(times):
        name = next((c for a, b, c in segments if a <= t < b), "black")
        base = np.array(COLOURS[name], dtype=np.int16)
        jitter = rng.integers(-noise, noise + 1, size=(height, width, 3)) if noise else 0
        frames[i] = np.clip(base + jitter, 0, 255).astype(np.uint8)
    return SampledFrames(frames=frames, times=times, window_start=0.0, window_end=duration,
                         source_indices=list(range(len(times))),
                         window_frame_count=len(times), window_fps=FPS)


def probe_example(seed: int) -> Example:
    """One single-colour 4 s clip; the answer is the colour's name."""
    rng = random.Random(seed)
    name = rng.choice(PROBE_COLOURS)
    segments = [(0.0, PROBE_SECONDS, name)]
    return Example(clip(segments, PROBE_SECONDS, seed), PROBE_PROMPT, name, segments, name)


def find_segments(rng: random.Random, duration: int, max_segments: int = 2,
                  min_segments: int = 1, count: int | None = None) -> list[Segment]:
    """1-2 (or `count`) coloured segments of whole seconds on black, different colours, black
    between."""
    if count is None:
        count = 1 if duration < 5 or max_segments == 1 else rng.choice([1, 2])
        count = max(count, min_segments)
    if count == 0:
        return []
    names = rng.sample(FIND_COLOURS, count)
    while True:  # whole-second cut points: start/end of each segment, gaps of >= 1 s
        cuts = sorted(rng.sample(range(0, duration + 1), 2 * count))
        pairs = [(cuts[2 * i], cuts[2 * i + 1]) for i in range(count)]
        if all(b - a >= 1 for a, b in pairs) and all(
                pairs[i + 1][0] - pairs[i][1] >= 1 for i in range(count - 1)):
            break
    return [(float(a), float(b), n) for (a, b), n in zip(pairs, names, strict=True)]


def clip_segments(seed: int, duration: int | None, max_segments: int = 2,
                  min_segments: int = 1, two_segment_share: float | None = None,
                  max_count: int = 2, empty_share: float = 0.0, max_duration: int = 12
                  ) -> tuple[random.Random, int, list[Segment]]:
    """A clip's length (drawn when None) and segments, and the rng that drew them (for the
    asked segment). With
    `two_segment_share` set, each clip independently has several segments with that
    probability (2, or 2..max_count where the clip is long enough) and one otherwise (the
    min/max segment arguments are then ignored); with `empty_share`, that share of the clips
    is black only (what most windows of a long video show)."""
    rng = random.Random(seed)
    duration = duration or rng.randint(4, max_duration)
    count = None
    if two_segment_share is not None:
        side = random.Random(seed * 7 + 3)
        count = 1
        if side.random() < two_segment_share:
            count = side.randint(2, max(2, min(max_count, (duration + 1) // 2)))
    if empty_share and random.Random(seed * 23 + 4).random() < empty_share:
        count = 0
    return rng, duration, find_segments(rng, duration, max_segments, min_segments, count)


# The grid of the random spans that answer an absent colour: 1.0 (whole seconds, as the
# segments) or 0.5, so that the digit after the point is a coin toss too. The app's find score
# is the mean log-probability of ALL digit tokens, and "x.0" answers make half of them certain.
ABSENT_GRID = 1.0


def absent_answer(seed: int, duration: int, segments: list[Segment]) -> tuple[str, float, float]:
    """An absent colour and a random span for it: Marlin always answers a span (docs/model.md),
    and a target drawn at random teaches it to be unsure of the digits, which is where the app's
    find score comes from."""
    rng = random.Random(seed * 29 + 6)
    name = rng.choice([c for c in FIND_COLOURS if c not in {s[2] for s in segments}])
    steps = round(duration / ABSENT_GRID)
    start = rng.randint(0, steps - 1)
    return name, start * ABSENT_GRID, rng.randint(start + 1, steps) * ABSENT_GRID


def find_example(seed: int, duration: int | None = None, max_segments: int = 2,
                 min_segments: int = 1, two_segment_share: float | None = None,
                 max_duration: int = 12, max_count: int = 2, ask: int | None = None,
                 empty_share: float = 0.0, absent: bool = False) -> Example:
    """Round 2's easy find task: 4-12 s (or up to max_duration), find one coloured segment
    (`absent`, or a black-only clip: a colour that is not there, see absent_answer)."""
    rng, duration, segments = clip_segments(seed, duration, max_segments, min_segments,
                                            two_segment_share, max_count, empty_share,
                                            max_duration)
    if absent or not segments:
        name, start, end = absent_answer(seed, duration, segments)
    else:
        start, end, name = rng.choice(segments)
        if ask is not None:  # paired training: the clip's segments in a seeded order, pick one
            order = random.Random(seed * 13 + 1).sample(segments, len(segments))
            start, end, name = order[ask % len(order)]
    prompt = find_prompt(query_for(name, seed * 3 + (ask or 0)))
    answer = f"From {start:.1f} to {end:.1f}."
    target = (start, end) if not (absent or not segments) else "absent"
    return Example(clip(segments, float(duration), seed), prompt, answer, segments, target)


FIXED_LAYOUT: list[Segment] = [(0.0, 1.0, "red"), (2.0, 3.0, "green"), (4.0, 5.0, "blue"),
                               (6.0, 7.0, "yellow")]


def fixed_layout_example(seed: int) -> Example:
    """A diagnostic find task where only the query matters: every clip is the same 8 s layout
    (FIXED_LAYOUT), so the answer is a function of the asked colour alone. Can the query's
    colour reach the answer positions at all?"""
    rng = random.Random(seed)
    start, end, name = rng.choice(FIXED_LAYOUT)
    return Example(clip(FIXED_LAYOUT, 8.0, seed), find_prompt(f"the {name} screen"),
                   f"From {start:.1f} to {end:.1f}.", list(FIXED_LAYOUT), (start, end))


def caption_answer(segments: list[Segment]) -> str:
    """The canonical caption format (`parsing.parse_caption`): a Scene line, `Events:`, then
    one `<start - end> description` line per coloured segment, in time order."""
    scene = "A plain screen that changes colour." if segments else "A black screen."
    lines = [f"Scene: {scene}", "Events:"]
    lines += [f"<{a:.1f} - {b:.1f}> a {name} screen" for a, b, name in sorted(segments)]
    return "\n".join(lines)


def caption_example(seed: int, duration: int | None = None, max_segments: int = 2,
                    min_segments: int = 1, max_duration: int = 12,
                    two_segment_share: float | None = None, max_count: int = 2,
                    empty_share: float = 0.0) -> Example:
    """The find task's clips (the same clip for the same seed and duration), answered with the
    canonical caption prompt and format."""
    _, duration, segments = clip_segments(seed, duration, max_segments, min_segments,
                                          two_segment_share, max_count, empty_share,
                                          max_duration)
    return Example(clip(segments, float(duration), seed), CAPTION_PROMPT,
                   caption_answer(segments), segments, "caption")


TIME_PROBE_PROMPT = "What colour is the screen from {:.1f} to {:.1f} seconds?"  # not canonical


def time_probe_example(seed: int, duration: int | None = None, max_segments: int = 2,
                       min_segments: int = 1, max_duration: int = 12,
                       two_segment_share: float | None = None, max_count: int = 2,
                       empty_share: float = 0.0) -> Example:
    """An auxiliary question (like the colour probe, not one of Marlin's prompts): the colour
    of one of the clip's segments, asked by its time range. It trains the look-up a caption
    needs after writing `<start - end>`: from a time range to the colour shown then."""
    _, duration, segments = clip_segments(seed, duration, max_segments, min_segments,
                                          two_segment_share, max_count, empty_share,
                                          max_duration)
    start, end, name = (random.Random(seed * 37 + 8).choice(segments) if segments
                        else (0.0, float(duration), "black"))
    return Example(clip(segments, float(duration), seed), TIME_PROBE_PROMPT.format(start, end),
                   name, segments, name)


PRESENCE_PROMPT = "Is there a {} screen in this clip?"  # not canonical


def presence_example(seed: int, duration: int | None = None, max_segments: int = 2,
                     min_segments: int = 1, max_duration: int = 12,
                     two_segment_share: float | None = None, max_count: int = 2,
                     empty_share: float = 0.0) -> Example:
    """An auxiliary yes/no question (not one of Marlin's prompts): is this colour in the clip?
    Half the time it is. It trains the feature an absent colour's unsure find answer needs."""
    _, duration, segments = clip_segments(seed, duration, max_segments, min_segments,
                                          two_segment_share, max_count, empty_share,
                                          max_duration)
    rng = random.Random(seed * 43 + 5)
    shown = [c for _, _, c in segments]
    if shown and rng.random() < 0.5:
        name, answer = rng.choice(shown), "yes"
    else:
        name, answer = rng.choice([c for c in FIND_COLOURS if c not in shown]), "no"
    return Example(clip(segments, float(duration), seed), PRESENCE_PROMPT.format(name), answer,
                   segments, answer)


def example(task: str, seed: int, duration: int | None = None,
            max_segments: int = 2, min_segments: int = 1,
            two_segment_share: float | None = None, max_duration: int = 12,
            max_count: int = 2, ask: int | None = None, empty_share: float = 0.0,
            absent: bool = False) -> Example:
    if task == "probe":
        return probe_example(seed)
    if task == "find":
        return find_example(seed, duration, max_segments, min_segments, two_segment_share,
                            max_duration, max_count, ask, empty_share, absent)
    if task == "caption":
        return caption_example(seed, duration, max_segments, min_segments, max_duration,
                               two_segment_share, max_count, empty_share)
    if task == "presence":
        return presence_example(seed, duration, max_segments, min_segments, max_duration,
                                two_segment_share, max_count, empty_share)
    if task == "time-probe":
        return time_probe_example(seed, duration, max_segments, min_segments, max_duration,
                                  two_segment_share, max_count, empty_share)
    raise ValueError(f"unknown task {task!r}")


def clip_kind(ex: Example) -> str:
    """'1seg', '2seg_first' or '2seg_second' (which segment a find query asks for), 'absent'."""
    if ex.target == "absent":
        return "absent"
    if len(ex.segments) == 1:
        return "1seg"
    first = "first" if ex.target == ex.segments[0][:2] else "second"
    return f"{len(ex.segments)}seg_{first}"  # 3seg_second: the second or third asked


def other_colour(ex: Example) -> str:
    """For the query-swap control: another segment's colour on multi-segment clips (a model
    that binds the query should then point at that segment), else a colour not in the clip."""
    asked = next(c for a, b, c in ex.segments if (a, b) == ex.target)
    others = [c for _, _, c in ex.segments if c != asked]
    return others[0] if others else next(c for c in FIND_COLOURS
                                         if c not in {s[2] for s in ex.segments})


# Seeds: training draws from [0, 10**9); held-out evaluation from 10**9 on. Never overlapping.
HELD_OUT_BASE = 10**9
