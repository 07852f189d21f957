"""The video budget Marlin-2B was trained with (see docs/model.md)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields


@dataclass(frozen=True)
class VideoBudget:
    fps: float = 2.0
    min_frames: int = 4
    max_frames: int = 240
    max_pixels: int = 200_704  # per frame, about 448 x 448
    min_pixels: int = 128 * 32 * 32  # the smallest frame area (qwen-vl-utils' video default)
    patch_size: int = 16
    merge_size: int = 2
    temporal_patch_size: int = 2

    @property
    def factor(self) -> int:
        """Frame sides are multiples of this (a 2 x 2 merge of 16-pixel patches)."""
        return self.patch_size * self.merge_size

    @property
    def max_window_seconds(self) -> float:
        """The longest clip that still gets the full frame rate."""
        return self.max_frames / self.fps

    def tokens_per_frame(self, height: int, width: int) -> int:
        merged = (height // self.factor) * (width // self.factor)
        return merged // self.temporal_patch_size

    def to_dict(self) -> dict[str, float | int]:
        return asdict(self)

    @classmethod
    def from_dict(cls, values: dict[str, float | int]) -> VideoBudget:
        """A budget from its dict form; unknown keys are ignored, missing ones keep defaults."""
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in values.items() if k in known})  # type: ignore[arg-type]


TRAINING_BUDGET = VideoBudget()
