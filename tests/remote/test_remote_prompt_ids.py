"""What the remote backend sends makes the server build exactly the app's prompt: the same token
ids as the local backend's prefill + question, timestamps included, on a variable-frame-rate
file with a start-time offset (the hard case: the server never sees the file's own times)."""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path

import pytest

from marlin_desk.core.prompts import CAPTION_PROMPT, find_prompt
from marlin_desk.core.windows import Window
from marlin_desk.dev.videos import make_video
from marlin_desk.dev.vllm_server import VllmServer
from marlin_desk.engine.inputs import suffix_ids
from marlin_desk.engine.loader import load_model, model_budget
from marlin_desk.engine.session import VideoSession
from marlin_desk.remote.budget import request_kwargs
from marlin_desk.remote.session import RemoteSession, connect


def server_prompt_ids(server: VllmServer, url: str, prompt: str, kwargs: dict) -> list[int]:
    body = {"model": server.served_model, "max_tokens": 1, "temperature": 0,
            "return_token_ids": True,
            "messages": [{"role": "user", "content": [
                {"type": "video_url", "video_url": {"url": url}},
                {"type": "text", "text": prompt}]}],
            **kwargs}
    request = urllib.request.Request(f"{server.url}/chat/completions",
                                     data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=300) as reply:
        return json.loads(reply.read())["prompt_token_ids"]


@pytest.mark.parametrize("window", [Window(0, 0.0, 5.0), Window(1, 5.0, 9.0)])
def test_server_prompt_ids_equal_the_apps(vllm_server: VllmServer, tmp_path: Path,
                                          window: Window) -> None:
    video = make_video(tmp_path / "vfr offset.mp4", vfr=True, start_offset=1.5, fps=30,
                       size=(224, 128), segments=[(4.5, (200, 40, 40)), (4.5, (40, 40, 200))])
    budget = model_budget(str(vllm_server.model_dir))
    remote = RemoteSession(connect(vllm_server.url), str(video), budget=budget)
    clip = remote._clip(window)
    local = VideoSession(load_model(str(vllm_server.model_dir), device="cpu"), str(video),
                         budget=budget)
    state = local.prefill(window)
    assert clip.relative_times == [round(t - window.start, 6) for t in state.frame_times]
    for prompt in (CAPTION_PROMPT, find_prompt("the blue screen")):
        want = state.prefix.inputs["input_ids"][0].tolist() + \
            suffix_ids(local.engine.processor, prompt)[0].tolist()
        got = server_prompt_ids(vllm_server, clip.url, prompt,
                                request_kwargs(budget, clip.relative_times, jpeg_sequence=True))
        assert got == want
