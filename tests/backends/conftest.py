"""Tiny checkpoints for the real backends, built once per test run.

The tiny model (tests/engine uses the same builder) is quantized with GPTQ (gptqmodel, a few
seconds on CPU with 16 short calibration lines) and with SDNQ; bitsandbytes quantizes at load, so
it needs no folder of its own. Each is skipped, not failed, when its package is not installed.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from marlin_desk.dev.videos import make_video


@pytest.fixture(scope="session")
def tiny_src(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from marlin_desk.dev.tiny_model import build_tiny_model

    return build_tiny_model(tmp_path_factory.mktemp("backends-tiny"))


@pytest.fixture(scope="session")
def hw():  # noqa: ANN201 - engine.hardware.Hardware
    from marlin_desk.engine.hardware import detect

    return detect()


@pytest.fixture(scope="session")
def gptq_dir(tiny_src: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny model as a GPTQ 4-bit checkpoint (group size 32: its layers are 64 wide)."""
    pytest.importorskip("gptqmodel")
    os.environ.setdefault("GPTQMODEL_CPU_WORKERS", "2")
    from gptqmodel import GPTQModel, QuantizeConfig
    from transformers import AutoTokenizer

    from marlin_desk.dev.tiny_model import _corpus

    out = tmp_path_factory.mktemp("tiny-gptq")
    tokenizer = AutoTokenizer.from_pretrained(tiny_src)
    calibration = [{"input_ids": t["input_ids"], "attention_mask": t["attention_mask"]}
                   for t in (tokenizer(line) for line in _corpus()[:16])]
    here = os.getcwd()
    os.chdir(out.parent)  # gptqmodel writes a logs/ folder into the working directory
    try:
        model = GPTQModel.load(str(tiny_src), QuantizeConfig(bits=4, group_size=32,
                                                             desc_act=True, sym=True))
        model.quantize(calibration, batch_size=1)  # batches > 1 break its Qwen3.5 replay
        model.save(str(out))
    finally:
        os.chdir(here)
    return out


@pytest.fixture(scope="session")
def sdnq_dir(tiny_src: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny model as an SDNQ int8 checkpoint (size thresholds lowered: its layers are tiny)."""
    pytest.importorskip("sdnq")
    import shutil

    import torch
    from sdnq import SDNQConfig, save_sdnq_model
    from transformers import Qwen3_5ForConditionalGeneration

    from marlin_desk.engine.backends import BNB_SKIP

    out = tmp_path_factory.mktemp("tiny-sdnq")
    shutil.copytree(tiny_src, out, dirs_exist_ok=True)
    config = SDNQConfig(weights_dtype="int8", modules_to_not_convert=list(BNB_SKIP),
                        minimum_allowed_channel_size=16, minimum_allowed_numel=256)
    model = Qwen3_5ForConditionalGeneration.from_pretrained(
        tiny_src, quantization_config=config, dtype=torch.float32, device_map="cpu")
    save_sdnq_model(model, str(out))
    return out


@pytest.fixture(scope="session")
def clip(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """8 s: red from 3 s, blue from 5 s; two 4 s windows."""
    return make_video(tmp_path_factory.mktemp("backends-clip") / "clip.mp4", duration=8.0,
                      size=(128, 96), segments=[(3.0, (255, 0, 0)), (5.0, (0, 0, 255))])
