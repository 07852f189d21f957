"""What the model is shown: layout, timestamps, grid and token counts."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from marlin_desk.core.budget import TRAINING_BUDGET
from marlin_desk.core.prompts import CAPTION_PROMPT, find_prompt
from marlin_desk.dev.videos import make_video
from marlin_desk.engine.inputs import pair_timestamps, render, video_prefix
from marlin_desk.media.sampling import sample_window

TIMESTAMP = re.compile(r"<(\d+\.\d) seconds>")


def _text(engine, prefix) -> str:  # noqa: ANN001
    return engine.processor.tokenizer.decode(prefix.inputs["input_ids"][0])


def test_prefix_is_the_same_for_every_prompt(tiny_engine) -> None:  # noqa: ANN001
    caption_prefix, caption_rest = render(tiny_engine.processor, CAPTION_PROMPT)
    find_prefix, find_rest = render(tiny_engine.processor, find_prompt("a dog jumps"))
    assert caption_prefix == find_prefix
    assert caption_rest.startswith(CAPTION_PROMPT)
    assert find_rest.startswith('Identify the timestamps during which "a dog jumps" takes place.')
    assert caption_rest.endswith("<|im_start|>assistant\n")


def test_video_layout_is_the_reference_one(tiny_engine, tmp_path: Path) -> None:  # noqa: ANN001
    """Each pair is `<t seconds><|vision_start|>pads<|vision_end|>`, with no outer start/end
    pair around the whole video (transformers 5.24 nests them when given the full group)."""
    video = make_video(tmp_path / "v.mp4", duration=4.0, size=(160, 96))
    frames = sample_window(str(video), 0.0, 4.0)
    prefix = video_prefix(tiny_engine.processor, frames)
    text = _text(tiny_engine, prefix).replace("<|video_pad|>", "")
    assert text.startswith("<|im_start|>user\n<0.")
    assert text.count("<|vision_start|>") == prefix.grid[0] == len(frames.times) // 2
    assert text.count("<|vision_end|>") == prefix.grid[0]
    assert "<|vision_start|><|vision_start|>" not in text
    assert re.fullmatch(r"<\|im_start\|>user\n(<\d+\.\d seconds><\|vision_start\|>"
                        r"<\|vision_end\|>)+", text)


@pytest.mark.parametrize("kind", ["cfr", "vfr"])
def test_prompt_timestamps_are_the_frames_real_times(tiny_engine, tmp_path: Path,  # noqa: ANN001
                                                      kind: str) -> None:
    video = make_video(tmp_path / f"{kind}.mp4", duration=6.0, size=(160, 96),
                       vfr=kind == "vfr")
    frames = sample_window(str(video), 0.0, 6.0)
    prefix = video_prefix(tiny_engine.processor, frames)
    written = [float(t) for t in TIMESTAMP.findall(_text(tiny_engine, prefix))]
    expected = pair_timestamps(frames.relative_times)
    assert written == [float(f"{t:.1f}") for t in expected]
    # and the frames' times are the real ones, not index / fps
    assert all(abs(a - b) < 1e-6 for a, b in zip(prefix.timestamps, expected, strict=True))


def test_window_offset_starts_the_prompt_at_zero(tiny_engine, tmp_path: Path) -> None:  # noqa: ANN001
    """The model was trained on clips starting at 0: a window at 10-20 s says 0.x to 9.x."""
    video = make_video(tmp_path / "long.mp4", duration=30.0, size=(96, 64), fps=10)
    frames = sample_window(str(video), 10.0, 20.0)
    prefix = video_prefix(tiny_engine.processor, frames)
    written = [float(t) for t in TIMESTAMP.findall(_text(tiny_engine, prefix))]
    assert frames.times[0] >= 10.0
    assert written[0] < 0.5 and 9.0 <= written[-1] < 10.0
    assert len(written) == 10  # 20 frames at 2 fps, paired


def test_grid_and_tokens_per_frame_at_the_budget(tiny_engine, data_dir: Path) -> None:  # noqa: ANN001
    frames = sample_window(str(data_dir / "bigbuckbunny.mp4"), 0.0, 4.0)
    prefix = video_prefix(tiny_engine.processor, frames)
    t, h, w = prefix.grid
    height, width = frames.size
    assert (t, h, w) == (len(frames.times) // 2, height // 16, width // 16)
    assert height * width <= TRAINING_BUDGET.max_pixels
    assert prefix.video_tokens == len(frames.times) * TRAINING_BUDGET.tokens_per_frame(height,
                                                                                     width)
    assert int((prefix.inputs["input_ids"] == tiny_engine.model.config.video_token_id).sum()) \
        == prefix.video_tokens


def test_a_full_448_frame_costs_98_tokens() -> None:
    assert TRAINING_BUDGET.tokens_per_frame(448, 448) == 98
    assert TRAINING_BUDGET.max_frames * 98 == 23_520
