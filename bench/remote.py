"""Windows per second through a vLLM server (the remote backend) at concurrency 1, 2 and 4,
and through the local backend, in one run, with the same model, video and windows.

By default it starts vLLM's CPU build (scripts/vllm_env.sh) serving the tiny test model; pass
`--url` (and `--served-model`, `--model DIR` for the local side) to measure a running server.
Every caption is capped at the same number of tokens (random weights never stop by themselves),
so each window costs the same work on both sides.

    .venv/bin/python bench/remote.py [--windows 12] [--tokens 32]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from marlin_desk.dev.videos import make_video  # noqa: E402
from marlin_desk.dev.vllm_server import VllmServer, build_model  # noqa: E402
from marlin_desk.workflows import (  # noqa: E402
    JobSettings,
    ServerSettings,
    analyze,
    open_video,
)

WINDOW = 10.0  # seconds: 20 frames per window


def run(settings: JobSettings, video: Path) -> tuple[float, int, int]:
    """(seconds, windows, generated tokens) of one uncached analysis."""
    bench = open_video(str(video), settings, use_cache=False)
    if bench.engine is None and settings.backend != "remote":
        bench.ensure_session()  # load the local model outside the timing
    started = time.perf_counter()
    analysis, _ = analyze(bench)
    seconds = time.perf_counter() - started
    return seconds, len(analysis.windows), sum(w.new_tokens for w in analysis.windows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--url", help="a running server (default: start vLLM's CPU build)")
    parser.add_argument("--served-model", default=None)
    parser.add_argument("--model", help="model folder for the local side (default: tiny)")
    parser.add_argument("--windows", type=int, default=12)
    parser.add_argument("--tokens", type=int, default=32, help="caption tokens per window")
    args = parser.parse_args()

    tmp = Path(tempfile.mkdtemp(prefix="bench-remote-"))
    colours = [(220, 30, 30), (30, 30, 220), (30, 200, 30), (230, 230, 40)]
    seconds = WINDOW * args.windows
    video = make_video(tmp / "bench.mp4", size=(640, 360), fps=30,
                       segments=[(seconds / 4, c) for c in colours])
    server = None
    model = args.model
    url = args.url
    if url is None:
        model = model or str(build_model(tmp / "tiny"))
        from marlin_desk.engine.loader import model_budget

        server = VllmServer(model_dir=Path(model), log_path=tmp / "server.log",
                            budget=model_budget(model))
        server.start()
        url = server.url
        print(f"vLLM CPU server started in {server.startup_seconds:.1f} s (log {server.log_path})")
    try:
        common = {"window": WINDOW, "caption_tokens": args.tokens}
        rows = []
        warm = JobSettings(model=model or "", backend="remote", **common,
                           server=ServerSettings(url=url, served_model=args.served_model))
        run(warm, video)  # the server's first requests pay one-off costs
        for concurrency in (1, 2, 4):
            settings = JobSettings(model=model or "", backend="remote", **common,
                                   server=ServerSettings(url=url, served_model=args.served_model,
                                                         windows_in_flight=concurrency))
            rows.append((f"remote, concurrency {concurrency}", *run(settings, video)))
        if model:
            local = JobSettings(model=model, device="cpu", backend="fp32", **common)
            rows.append(("local (fp32, this process)", *run(local, video)))
    finally:
        if server is not None:
            server.stop()
    base = rows[0][2] / rows[0][1]
    print(f"video {seconds:.0f} s, {args.windows} windows of {WINDOW:.0f} s, "
          f"{args.tokens} caption tokens per window")
    print(f"{'backend':32} {'seconds':>8} {'windows/s':>10} {'tokens/s':>9} {'vs conc. 1':>10}")
    for name, secs, windows, tokens in rows:
        rate = windows / secs
        print(f"{name:32} {secs:8.2f} {rate:10.2f} {tokens / secs:9.1f} {rate / base:9.2f}x")


if __name__ == "__main__":
    main()
