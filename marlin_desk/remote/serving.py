"""What a vLLM server needs to serve Marlin the way the app runs it (docs/serving.md): the chat
template with the video as the bare pad token, the video budget as start-up defaults, and the
command line. Used by `marlin-desk server-setup` and by the tests' server fixture."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

from marlin_desk.core.budget import TRAINING_BUDGET, VideoBudget
from marlin_desk.core.errors import ModelUnavailable

VIDEO_GROUP = "<|vision_start|><|video_pad|><|vision_end|>"
VIDEO_PAD = "<|video_pad|>"
MAX_MODEL_LEN = 32_768  # a 120 s window at the full budget is ~24 K tokens, + 2,048 new ones
# The checkpoint declares its own class (remote code); vLLM runs the native one.
HF_OVERRIDES = {"architectures": ["Qwen3_5ForConditionalGeneration"]}


def chat_template(model_dir: Path) -> str:
    """The model folder's chat template (chat_template.jinja, else tokenizer_config.json)."""
    source = model_dir / "chat_template.jinja"
    if source.is_file():
        return source.read_text(encoding="utf-8")
    config = model_dir / "tokenizer_config.json"
    try:
        return str(json.loads(config.read_text(encoding="utf-8"))["chat_template"])
    except (OSError, ValueError, KeyError) as exc:
        raise ModelUnavailable(f"{model_dir} has no chat template (chat_template.jinja or "
                               f"tokenizer_config.json)") from exc


def bare_video_template(template: str) -> str:
    """The template with each video written as the bare pad token. vLLM replaces only the pad
    token with `<t seconds><|vision_start|>...<|vision_end|>` per frame pair, so the stock
    template would nest every pair inside one extra start/end pair: not the trained layout."""
    if VIDEO_GROUP not in template:
        raise ModelUnavailable(f"the chat template has no {VIDEO_GROUP}: not a Marlin/Qwen3-VL "
                               f"template, or already edited")
    return template.replace(VIDEO_GROUP, VIDEO_PAD)


def write_bare_video_template(model_dir: Path, out: Path) -> Path:
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(bare_video_template(chat_template(model_dir)), encoding="utf-8")
    return out


def budget_defaults(budget: VideoBudget = TRAINING_BUDGET) -> tuple[dict, dict]:
    """(media_io_kwargs, mm_processor_kwargs) that make the model's budget the server's
    defaults. The pixel limits are whole-clip totals: the largest clip (max_frames frames of
    max_pixels) must fit, and the limits also size vLLM's encoder cache."""
    media_io = {"video": {"fps": budget.fps, "min_frames": budget.min_frames,
                          "max_frames": budget.max_frames}}
    processor = {"size": {"longest_edge": budget.max_frames * budget.max_pixels,
                          "shortest_edge": budget.min_pixels}}
    return media_io, processor


def serve_args(template: Path, *, served_model: str, budget: VideoBudget = TRAINING_BUDGET,
               max_model_len: int = MAX_MODEL_LEN, overrides: bool = True) -> list[str]:
    """The flags every Marlin server needs, after `vllm serve MODEL` (or the module form)."""
    media_io, processor = budget_defaults(budget)
    args = ["--served-model-name", served_model]
    if overrides:
        args += ["--hf-overrides", json.dumps(HF_OVERRIDES)]
    return args + [
        "--chat-template", str(template),
        "--media-io-kwargs", json.dumps(media_io),
        "--mm-processor-kwargs", json.dumps(processor),
        "--limit-mm-per-prompt", json.dumps({"image": 0, "video": 1}),
        "--max-model-len", str(max_model_len),
        "--trust-request-mm-kwargs",  # the app sends each window's frame times
    ]


def serve_command(model: str, template: Path, *, served_model: str = "marlin",
                  gpus: int = 1, port: int = 8000,
                  budget: VideoBudget = TRAINING_BUDGET) -> str:
    """A `vllm serve` command line for Marlin on `gpus` GPUs of one machine (one replica per
    GPU: the model fits on one, so data parallelism, not tensor parallelism)."""
    args = ["vllm", "serve", model,
            *serve_args(template, served_model=served_model, budget=budget)]
    if gpus > 1:
        args += ["--data-parallel-size", str(gpus)]
    args += ["--host", "0.0.0.0", "--port", str(port)]
    return " ".join(shlex.quote(a) for a in args)
