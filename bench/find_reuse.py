"""Prefill reuse for find: tiny model, a 60 s video, 5 queries.

Prints the first query's time (it pays for sampling + prefill), the mean of the later ones (reused
prefill: only the question tokens), and a no-reuse baseline (every query from scratch, through
transformers' generate) measured in the same run.

    .venv/bin/python bench/find_reuse.py
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from marlin_desk.core.prompts import FIND_MAX_NEW_TOKENS, find_prompt  # noqa: E402
from marlin_desk.core.windows import plan_windows  # noqa: E402
from marlin_desk.dev.tiny_model import build_tiny_model  # noqa: E402
from marlin_desk.dev.videos import make_video  # noqa: E402
from marlin_desk.engine.loader import load_model  # noqa: E402
from marlin_desk.engine.session import VideoSession  # noqa: E402

QUERIES = ["the screen turns red", "a blue square", "the dog jumps into the pool",
           "a man opens the door", "green light"]


def main() -> None:
    tmp = Path(tempfile.mkdtemp(prefix="bench-reuse-"))
    colours = [(255, 0, 0), (0, 0, 255), (0, 255, 0), (255, 255, 0)]
    video = make_video(tmp / "v60.mp4", size=(640, 360), fps=30,
                       segments=[(15.0, c) for c in colours])
    engine = load_model(str(build_tiny_model(tmp / "tiny")), device="cpu")
    session = VideoSession(engine, str(video))
    window = plan_windows(session.info.duration)[0]

    # warm-up on another window length so one-off costs do not count for either side
    warm = VideoSession(engine, str(video))
    warm.ask(plan_windows(4.0)[0], find_prompt("warm up"), 4)

    times = []
    for q in QUERIES:
        started = time.perf_counter()
        answer = session.ask(window, find_prompt(q), FIND_MAX_NEW_TOKENS)
        times.append(time.perf_counter() - started)
    state = session.prefill(window)
    baseline = []
    for q in QUERIES[:3]:
        started = time.perf_counter()
        session.ask_without_reuse(window, find_prompt(q), FIND_MAX_NEW_TOKENS)
        baseline.append(time.perf_counter() - started)

    later = statistics.mean(times[1:])
    base = statistics.mean(baseline)
    print(f"video: 60 s, {len(state.frame_times)} frames of {state.frame_size}, "
          f"{state.prefix.length} prompt-prefix tokens ({state.prefix.video_tokens} video)")
    print(f"answer tokens per query (last): {answer.new_tokens}")
    print(f"first query (sampling + prefill + answer): {times[0]:.2f} s "
          f"(of which sampling + prefill {state.seconds:.2f} s)")
    print(f"later queries (reused prefill), mean:      {later:.3f} s")
    print(f"no-reuse baseline per query, mean of 3:    {base:.2f} s")
    print(f"ratio first / later: {times[0] / later:.1f}x; baseline / later: {base / later:.1f}x")


if __name__ == "__main__":
    main()
