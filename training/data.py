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
from marlin_desk.core.prompts import find_prompt
from marlin_desk.media.sampling import SampledFrames, frame_size_for

# The tiny model's budget: frames of 32x32 up to 64x64 (1 to 4 language tokens per frame pair)
# instead of the real model's >= 131,072 pixels (>= 128 tokens per pair), which would make CPU
# training ~30x slower for no gain on solid colours. Recorded in the model folder (budget.json).
TINY_BUDGET = VideoBudget(min_pixels=32 * 32, max_pixels=64 * 64)
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


def clip(segments: list[Segment], duration: float, seed: int, noise: int = 6,
         budget: VideoBudget = TINY_BUDGET) -> SampledFrames:
    """Frames at 0, 0.5, 1.0, ... s (< duration) painted with the segment that holds each time."""
    height, width = frame_size_for(*SOURCE_SIZE, budget)
    rng = np.random.default_rng(seed)
    times = [i / FPS for i in range(int(round(duration * FPS)))]
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
                  min_segments: int = 1) -> list[Segment]:
    """1-2 coloured segments of whole seconds on black, different colours, black between."""
    count = 1 if duration < 5 or max_segments == 1 else rng.choice([1, 2])
    count = max(count, min_segments)
    names = rng.sample(FIND_COLOURS, count)
    while True:  # whole-second cut points: start/end of each segment, gaps of >= 1 s
        cuts = sorted(rng.sample(range(0, duration + 1), 2 * count))
        pairs = [(cuts[2 * i], cuts[2 * i + 1]) for i in range(count)]
        if all(b - a >= 1 for a, b in pairs) and all(
                pairs[i + 1][0] - pairs[i][1] >= 1 for i in range(count - 1)):
            break
    return [(float(a), float(b), n) for (a, b), n in zip(pairs, names, strict=True)]


def find_example(seed: int, duration: int | None = None, max_segments: int = 2,
                 min_segments: int = 1) -> Example:
    """Round 2's easy find task: 4-12 s, find one of the coloured segments."""
    rng = random.Random(seed)
    duration = duration or rng.randint(4, 12)
    segments = find_segments(rng, duration, max_segments, min_segments)
    start, end, name = rng.choice(segments)
    prompt = find_prompt(f"the {name} screen")
    answer = f"From {start:.1f} to {end:.1f}."
    return Example(clip(segments, float(duration), seed), prompt, answer, segments, (start, end))


def example(task: str, seed: int, duration: int | None = None,
            max_segments: int = 2, min_segments: int = 1) -> Example:
    if task == "probe":
        return probe_example(seed)
    if task == "find":
        return find_example(seed, duration, max_segments, min_segments)
    raise ValueError(f"unknown task {task!r} (caption is not implemented yet)")


# Seeds: training draws from [0, 10**9); held-out evaluation from 10**9 on. Never overlapping.
HELD_OUT_BASE = 10**9
