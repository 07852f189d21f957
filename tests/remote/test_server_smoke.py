"""The real vLLM server (tests/remote/conftest.py) answers a video chat completion, and its prompt
is the app's own, token for token, for a clip at the budget's rate and frame size.

These talk to the server directly (urllib), not through marlin_desk.remote: they pin down what
the server does with what docs/serving.md says to send it.
"""

from __future__ import annotations

import base64
import json
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from marlin_desk.core.prompts import CAPTION_PROMPT
from marlin_desk.dev.videos import make_video
from marlin_desk.dev.vllm_server import VllmServer

# 480 x 288 = 138,240 pixels: a multiple of 32 on each side and inside the budget's
# 131,072..200,704 pixels per frame, so neither the app nor the server resizes it.
BUDGET_SIZE = (480, 288)


def chat(server: VllmServer, clip: Path, prompt: str = CAPTION_PROMPT,
         **extra: Any) -> dict[str, Any]:
    data = base64.b64encode(clip.read_bytes()).decode("ascii")
    body = {
        "model": server.served_model,
        "messages": [{"role": "user", "content": [
            {"type": "video_url", "video_url": {"url": f"data:video/mp4;base64,{data}"}},
            {"type": "text", "text": prompt},
        ]}],
        "max_tokens": 8,
        "temperature": 0,
        **extra,
    }
    request = urllib.request.Request(f"{server.url}/chat/completions",
                                     data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=120) as reply:
            return json.loads(reply.read())
    except urllib.error.HTTPError as exc:
        pytest.fail(f"HTTP {exc.code}: {exc.read().decode(errors='replace')[:2000]}\n"
                    f"server log:\n{server.log_tail()}")


@pytest.fixture(scope="module")
def clip_2fps(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """6 s at 2 fps CFR (12 frames) at a frame size the budget keeps as it is."""
    path = tmp_path_factory.mktemp("clips") / "two_fps.mp4"
    return make_video(path, segments=[(3.0, (200, 40, 40)), (3.0, (40, 40, 200))],
                      size=BUDGET_SIZE, fps=2)


def test_video_chat_completion(vllm_server: VllmServer, tmp_path: Path) -> None:
    clip = make_video(tmp_path / "clip.mp4", duration=5.0, size=(160, 96), fps=25)
    reply = chat(vllm_server, clip, logprobs=True, top_logprobs=0)

    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(vllm_server.model_dir)
    text_tokens = len(tokenizer(CAPTION_PROMPT)["input_ids"])
    usage = reply["usage"]
    assert usage["prompt_tokens"] > text_tokens + 4 * 2  # 10 frames: at least 5 pairs of tokens
    assert usage["completion_tokens"] >= 1
    choice = reply["choices"][0]
    assert isinstance(choice["message"]["content"], str)
    # One entry per generated token: its text, its log-probability, no alternatives.
    entries = choice["logprobs"]["content"]
    assert len(entries) == usage["completion_tokens"]
    assert all(isinstance(e["token"], str) and e["logprob"] <= 0 and e["top_logprobs"] == []
               for e in entries)


def test_prompt_is_the_apps_token_for_token(vllm_server: VllmServer, clip_2fps: Path) -> None:
    """A clip already at 2 fps and at the budget's frame size: the server samples every frame,
    writes the same `<t seconds>` and gives the same ids as the app, with no request kwargs."""
    from marlin_desk.engine.inputs import suffix_ids, video_prefix
    from marlin_desk.engine.loader import load_model
    from marlin_desk.media.probe import probe
    from marlin_desk.media.sampling import sample_window

    engine = load_model(str(vllm_server.model_dir), device="cpu")
    info = probe(str(clip_2fps))
    frames = sample_window(str(clip_2fps), 0.0, info.duration, vllm_server.budget, info)
    assert len(frames.times) == 12 and frames.size == (BUDGET_SIZE[1], BUDGET_SIZE[0])
    prefix = video_prefix(engine.processor, frames)
    app_ids = (prefix.inputs["input_ids"][0].tolist()
               + suffix_ids(engine.processor, CAPTION_PROMPT)[0].tolist())

    reply = chat(vllm_server, clip_2fps, return_token_ids=True)
    assert reply["usage"]["prompt_tokens"] == len(app_ids)
    assert reply["prompt_token_ids"] == app_ids
