"""The tiny model through the real GPTQ, bitsandbytes NF4 and SDNQ backends on CPU, answering
through the normal pipeline. Skipped when the package is not installed (pip install -e .[quant])."""

from __future__ import annotations

import json
import math
import time
from pathlib import Path
from typing import Any

import pytest

from marlin_desk.core.windows import plan_windows
from marlin_desk.engine.backends import load_best
from marlin_desk.engine.pipeline import caption_window, find
from marlin_desk.engine.session import VideoSession

TIMES: dict[str, float] = {}


def answers_through_the_pipeline(engine: Any, clip: Path) -> None:
    session = VideoSession(engine, str(clip))
    window = plan_windows(session.info.duration, 4.0)[0]
    result = caption_window(session, window, max_new_tokens=12)
    assert result.frames > 0 and result.prompt_tokens > result.video_tokens > 0
    (query,) = find(session, ["the screen turns blue"], window=4.0)
    assert len(query.windows) == 2
    assert all(math.isfinite(w["score"]) for w in query.windows)


def timed(label: str, fn: Any, *args: Any, **kwargs: Any) -> Any:
    started = time.perf_counter()
    out = fn(*args, **kwargs)
    TIMES[label] = round(time.perf_counter() - started, 2)
    return out


def test_gptq_loads_checks_and_answers(gptq_dir: Path, clip: Path, hw: Any) -> None:
    config = json.loads((gptq_dir / "config.json").read_text())
    assert config["quantization_config"]["quant_method"] == "gptq"
    engine = timed("gptq load+check", load_best, str(gptq_dir), "gptq", "cpu", hw=hw)
    assert (engine.backend, engine.device, engine.precision) == ("gptq", "cpu", "gptq-int4")
    assert engine.model.generation_config.do_sample is False  # gptqmodel wrote True
    quantized = [m for m in engine.model.modules() if "Quant" in type(m).__name__
                 or type(m).__name__ == "TorchLinear"]
    assert quantized, "no GPTQ layers in the loaded model"
    timed("gptq answer", answers_through_the_pipeline, engine, clip)


def test_a_local_gptq_folder_is_picked_by_auto(gptq_dir: Path, hw: Any) -> None:
    from marlin_desk.engine.backends import plan

    assert plan(str(gptq_dir), "auto", "cpu", hw)[0].backend == "gptq"
    assert plan(str(gptq_dir), "auto", "cpu", hw)[0].why == "the model named is a GPTQ checkpoint"


def test_bnb4_quantizes_at_load_and_answers(tiny_src: Path, clip: Path, hw: Any) -> None:
    pytest.importorskip("bitsandbytes")
    engine = timed("bnb4 load+check", load_best, str(tiny_src), "bnb4", "cpu", hw=hw)
    assert (engine.backend, engine.precision, engine.dtype) == ("bnb4", "nf4", "float32")
    four_bit = {n for n, m in engine.model.named_modules() if type(m).__name__ == "Linear4bit"}
    assert four_bit
    assert not any(".visual." in n or n.endswith(("lm_head", "in_proj_a", "in_proj_b"))
                   for n in four_bit), "a module the 4-bit kernels cannot take was quantized"
    timed("bnb4 answer", answers_through_the_pipeline, engine, clip)


def test_sdnq_int8_loads_and_answers(sdnq_dir: Path, clip: Path, hw: Any) -> None:
    engine = timed("sdnq load+check", load_best, str(sdnq_dir), "sdnq", "cpu", hw=hw)
    assert (engine.backend, engine.precision) == ("sdnq", "sdnq-int8")
    assert any(type(m).__name__.startswith("SDNQ") for m in engine.model.modules())
    timed("sdnq answer", answers_through_the_pipeline, engine, clip)


def test_auto_on_cpu_is_fp32_with_an_honest_estimate(tiny_src: Path, hw: Any) -> None:
    from marlin_desk.engine.backends import estimate_for

    engine = load_best(str(tiny_src), hw=hw)
    if hw.cuda or hw.mps:
        pytest.skip("this machine has a GPU")
    assert (engine.backend, engine.device, engine.dtype) == ("fp32", "cpu", "float32")
    assert engine.why.startswith("no GPU found") and engine.fallbacks == []
    assert estimate_for(engine, windows=3, prompt_tokens=1000, new_tokens=50).seconds > 0


def test_cli_json_shows_backend_device_dtype_why(gptq_dir: Path, clip: Path,
                                                 tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    env = dict(os.environ, HF_HUB_OFFLINE="1", MARLIN_DESK_CACHE=str(tmp_path / "cache"))
    out = subprocess.run(
        [sys.executable, "-m", "marlin_desk", "find", str(clip), "blue", "--model",
         str(gptq_dir), "--device", "cpu", "--window", "4", "--json"],
        capture_output=True, text=True, env=env, timeout=600, cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-2000:]
    engine = json.loads(out.stdout)["engine"]
    assert engine["backend"] == "gptq" and engine["device"] == "cpu"
    assert engine["dtype"] == "bfloat16" and engine["precision"] == "gptq-int4"
    assert engine["why"] == "the model named is a GPTQ checkpoint"
    assert engine["fallbacks"] == []


@pytest.mark.gpu
def test_gpu_auto_prefers_gptq_and_passes_the_self_check(gptq_dir: Path, clip: Path,
                                                         hw: Any) -> None:
    if not hw.cuda:
        pytest.skip("no CUDA GPU")
    engine = load_best(str(gptq_dir), hw=hw)
    assert (engine.backend, engine.device) == ("gptq", "cuda")
    answers_through_the_pipeline(engine, clip)


def test_zz_report_times(capsys: pytest.CaptureFixture[str]) -> None:
    """Not an assertion: prints what the backends cost here (run with -s to see it)."""
    with capsys.disabled():
        print("\nbackend times on this machine (s):", json.dumps(TIMES))
