"""Turn sampled frames and a prompt into model inputs, exactly as Marlin was trained to see them.

Two silent traps are handled here:
- Timestamps. Qwen3-VL writes `<t seconds>` before each frame pair, computed as
  frames_indices / fps. We pass the frames' real window-relative times as the "indices" with
  fps = 1, so the text carries the true (VFR-correct) times, averaged per pair as in training.
- Layout. Qwen3-VL's reference processor replaces the whole
  `<|vision_start|><|video_pad|><|vision_end|>` group with per-pair
  `<t seconds><|vision_start|>...<|vision_end|>`. transformers 5.24 replaces only the pad token,
  which nests every pair inside an extra start/end pair. Handing the processor the bare pad
  token gives the reference layout with either behaviour.

The chat text is split right after the video: that prefix ends with a special token, so it
tokenizes identically on its own, and its prefill can be reused by every prompt.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from marlin_desk.media.sampling import SampledFrames

VIDEO_GROUP = "<|vision_start|><|video_pad|><|vision_end|>"
VIDEO_PAD = "<|video_pad|>"


@dataclass
class VideoPrefix:
    """The tokenized chat prefix up to and including the video, and its pixel inputs."""

    inputs: dict[str, Any]  # input_ids, attention_mask, mm_token_type_ids, pixel values, grid
    grid: list[int]  # t, h, w in patches
    video_tokens: int
    timestamps: list[float]  # the times written into the prompt, one per frame pair

    @property
    def length(self) -> int:
        return int(self.inputs["input_ids"].shape[1])


def render(processor: Any, prompt: str) -> tuple[str, str]:
    """The chat text for (video, prompt) split into (prefix through the video, the rest)."""
    messages = [{"role": "user", "content": [{"type": "video"},
                                             {"type": "text", "text": prompt}]}]
    text = processor.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    cut = text.index(VIDEO_GROUP) + len(VIDEO_GROUP)
    return text[:cut].replace(VIDEO_GROUP, VIDEO_PAD), text[cut:]


def pair_timestamps(relative_times: list[float], temporal_patch: int = 2) -> list[float]:
    """What the processor writes per frame pair: the mean of the pair's frame times."""
    times = list(relative_times)
    while len(times) % temporal_patch:
        times.append(times[-1])
    return [sum(times[i:i + temporal_patch]) / temporal_patch
            for i in range(0, len(times), temporal_patch)]


def video_prefix(processor: Any, frames: SampledFrames) -> VideoPrefix:
    """Process the frames (already sampled and sized by media/) into the reusable prefix."""
    import torch
    from transformers.video_utils import VideoMetadata

    prefix_text, _ = render(processor, "?")  # the prefix does not depend on the prompt
    relative = [round(t, 6) for t in frames.relative_times]
    video = torch.from_numpy(frames.frames).permute(0, 3, 1, 2).contiguous()  # T, C, H, W
    metadata = VideoMetadata(total_num_frames=len(relative), fps=1.0, frames_indices=relative,
                             width=int(video.shape[3]), height=int(video.shape[2]),
                             duration=frames.window_end - frames.window_start)
    inputs = processor(text=[prefix_text], videos=[video], video_metadata=[metadata],
                       do_sample_frames=False, do_resize=False, cap_pixels_per_frame=True,
                       return_tensors="pt")
    grid = [int(x) for x in inputs["video_grid_thw"][0]]
    merge = processor.video_processor.merge_size ** 2
    video_tokens = grid[0] * grid[1] * grid[2] // merge
    temporal = processor.video_processor.temporal_patch_size
    return VideoPrefix(inputs=dict(inputs), grid=grid, video_tokens=video_tokens,
                       timestamps=pair_timestamps(relative, temporal))


def suffix_ids(processor: Any, prompt: str) -> Any:
    """Token ids of everything after the video: the prompt and the assistant turn opener."""
    _, suffix = render(processor, prompt)
    return processor.tokenizer(suffix, add_special_tokens=False, return_tensors="pt")["input_ids"]
