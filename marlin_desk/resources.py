"""Find bundled resources (demo video, demo model, icons) both from a checkout and when frozen."""

from __future__ import annotations

import sys
from pathlib import Path


def resources_root() -> Path:
    """`resources/` beside the package, or inside a PyInstaller bundle (sys._MEIPASS)."""
    frozen = getattr(sys, "_MEIPASS", None)
    if frozen:
        return Path(frozen) / "resources"
    return Path(__file__).resolve().parents[1] / "resources"


def resource_path(*parts: str) -> Path:
    return resources_root().joinpath(*parts)


DEMO_QUERY = "the blue screen"  # what the demo searches for (a phrasing the demo model knows)


def demo_video() -> Path:
    return resource_path("demo", "demo.mp4")


def demo_model() -> Path:
    """The bundled tiny model, trained on coloured screens (training/, its model card): runs
    anywhere offline and is right about the demo video, not about real footage."""
    return resource_path("models", "marlin-tiny-trained")
