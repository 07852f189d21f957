"""Tell the server the model's video budget, and check from its token count that it obeyed.

See docs/serving.md ("What the server must be sent") for the measured behaviour of vLLM.
"""

from __future__ import annotations

from typing import Any

from marlin_desk.core.answers import WindowFacts
from marlin_desk.core.budget import VideoBudget
from marlin_desk.media.window_clip import spread_rate

# Text around the video tokens: each frame pair adds `<t seconds>` and vision start/end
# (about 8 tokens); the chat template adds about 20; the prompt about one token per 3 chars.
TEXT_PER_PAIR = 12
TEMPLATE_TOKENS = 64


def request_kwargs(budget: VideoBudget, relative_times: list[float], *,
                   jpeg_sequence: bool) -> dict[str, Any]:
    """The extra request fields: take every frame sent, at the times they were shown, and keep
    each frame's pixels (they are already at the budget's size). The pixel limits are totals
    for the whole clip (measured), so they are the per-frame limits times the frame count."""
    frames = len(relative_times)
    if jpeg_sequence:  # the frames' own times, in ms, as "indices" at 1000 fps
        millis = [round(t * 1000) for t in relative_times]
        video = {"num_frames": -1, "fps": 1000, "frames_indices": millis,
                 "total_num_frames": (millis[-1] if millis else 0) + 1}
    else:  # a clip at the rate that spreads the frames over their span: take each one
        video = {"fps": spread_rate(relative_times), "min_frames": frames, "max_frames": frames}
    return {
        "media_io_kwargs": {"video": video},
        "mm_processor_kwargs": {"size": {"longest_edge": budget.max_pixels * frames,
                                         "shortest_edge": budget.min_pixels * frames}},
    }


def budget_warning(prompt_tokens: int, facts: WindowFacts, prompt: str) -> str | None:
    """A sentence when the server's prompt is not the size the budget gives, else None."""
    if prompt_tokens <= 0:
        return None  # the server reported no usage
    pairs = facts.grid[0]
    low = facts.video_tokens + pairs * 3  # each pair: vision start/end and a timestamp
    high = facts.video_tokens + pairs * TEXT_PER_PAIR + TEMPLATE_TOKENS + len(prompt) // 2
    if low <= prompt_tokens <= high:
        return None
    return (f"the server saw {prompt_tokens} prompt tokens for a window that should take "
            f"{low}-{high} ({len(facts.frame_times)} frames): it did not apply the model's "
            f"video budget, so its answers may be worse. Start it as docs/serving.md shows")

