"""Write the bundled demo video (resources/demo/demo.mp4) from the trained model's own world.

The demo model (resources/models/marlin-tiny-trained) knows solid red, green, blue and yellow
screens on black with whole-second cuts, in 64 x 64 and 16:9 files, so the demo video is made of
exactly that: what `marlin-desk demo` and the GUI self-test then show is right, and the tests
know the truth (DEMO_SEGMENTS). 320 x 180 at 30 fps with a 440 Hz tone (the player and the
export have audio to handle).

    .venv/bin/python -m training.demo_video
"""

from __future__ import annotations

import argparse
from pathlib import Path

from training.data import COLOURS

DEMO_SECONDS = 20.0
# (start, end, colour): the events a right caption lists; the rest is black
DEMO_SEGMENTS = [(2.0, 6.0, "red"), (8.0, 13.0, "blue"), (15.0, 19.0, "green")]
DEMO_PATH = Path(__file__).resolve().parents[1] / "resources" / "demo" / "demo.mp4"


def demo_parts() -> list[tuple[float, tuple[int, int, int]]]:
    """(seconds, RGB) runs covering the whole demo, black between the segments."""
    parts, t = [], 0.0
    for start, end, name in DEMO_SEGMENTS:
        if start > t:
            parts.append((start - t, COLOURS["black"]))
        parts.append((end - start, COLOURS[name]))
        t = end
    if t < DEMO_SECONDS:
        parts.append((DEMO_SECONDS - t, COLOURS["black"]))
    return parts


def write_demo(path: Path = DEMO_PATH) -> Path:
    from marlin_desk.dev.videos import make_video

    path.parent.mkdir(parents=True, exist_ok=True)
    return make_video(path, segments=demo_parts(), size=(320, 180), fps=30, audio=True,
                      frame_code=False)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", type=Path, default=DEMO_PATH)
    print(write_demo(p.parse_args(argv).out))


if __name__ == "__main__":
    main()
