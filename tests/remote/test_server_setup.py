"""`marlin-desk server-setup`: the bare-video chat template and the vLLM command (no server)."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from marlin_desk.core.errors import ModelUnavailable
from marlin_desk.remote.serving import VIDEO_GROUP, bare_video_template


def test_the_template_writes_the_video_as_the_bare_pad() -> None:
    stock = f"<|im_start|>user\n{{% if video %}}{VIDEO_GROUP}{{% endif %}}"
    assert bare_video_template(stock) == "<|im_start|>user\n{% if video %}<|video_pad|>{% endif %}"
    with pytest.raises(ModelUnavailable, match="already edited"):
        bare_video_template(bare_video_template(stock))


def test_server_setup_command(tmp_path: Path) -> None:
    from marlin_desk.dev.tiny_model import build_tiny_model

    tiny_model = build_tiny_model(tmp_path / "tiny")
    run = subprocess.run([sys.executable, "-m", "marlin_desk", "server-setup", "--model",
                          str(tiny_model), "--out", str(tmp_path / "serve"), "--gpus", "4",
                          "--json"], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    doc = json.loads(run.stdout)
    template = Path(doc["template"])
    assert "<|video_pad|>" in template.read_text() and VIDEO_GROUP not in template.read_text()
    args = shlex.split(doc["command"])
    assert args[:3] == ["vllm", "serve", str(tiny_model.resolve())]
    flag = {a: args[i + 1] for i, a in enumerate(args[:-1]) if a.startswith("--")}
    assert flag["--chat-template"] == str(template.resolve())
    assert flag["--data-parallel-size"] == "4" and "--trust-request-mm-kwargs" in args
    assert json.loads(flag["--media-io-kwargs"])["video"]["max_frames"] == 240
    assert json.loads(flag["--hf-overrides"]) == {
        "architectures": ["Qwen3_5ForConditionalGeneration"]}


def test_server_setup_without_the_model_is_exit_3(tmp_path: Path) -> None:
    run = subprocess.run([sys.executable, "-m", "marlin_desk", "server-setup", "--model",
                          str(tmp_path / "missing")], capture_output=True, text=True, timeout=120)
    assert run.returncode == 3 and "no model folder" in run.stderr
