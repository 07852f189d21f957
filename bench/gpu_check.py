"""GPU check: does a full-size Marlin-2B window fit and how fast is it, per backend?

Builds a FULL-SIZE Qwen3.5 model from resources/marlin-2b-config.json with random weights (no
download), a synthetic 120 s 1080p video, and for BF16, bitsandbytes NF4 and (when gptqmodel can
quantize the random model within --gptq-timeout) GPTQ 4-bit reports: load time, the window's
sampling and prefill time, decode speed over a fixed number of new tokens, the later-query time
from the reused prefill, peak VRAM, and the same run with the process capped to 6 GB
(`torch.cuda.set_per_process_memory_fraction`) to show whether a 6 GB laptop fits. Random weights
give meaningless answers but the real shapes, memory and speed.

    python bench/gpu_check.py --out gpu_check.json        # on a CUDA machine, < 8 minutes
    python bench/gpu_check.py --dry-run                   # tiny model on CPU, about a minute
"""

from __future__ import annotations

import argparse
import copy
import gc
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from marlin_desk.dev.tiny_model import REFERENCE_CONFIG  # noqa: E402

GIB = 1024 ** 3
CAP_GIB = 6.0


# -- inputs ----------------------------------------------------------------------------------

def full_config(tokenizer: Any) -> dict[str, Any]:
    """The real sizes (text and vision) with the token ids of our small local tokenizer."""
    from marlin_desk.dev.tiny_model import TINY_TEXT, tiny_config

    reference = json.loads(REFERENCE_CONFIG.read_text())
    config = tiny_config(tokenizer)
    text = config["text_config"]
    for key in TINY_TEXT:
        if key in reference["text_config"]:
            text[key] = reference["text_config"][key]
    text["vocab_size"] = reference["text_config"]["vocab_size"]
    text["rope_parameters"] = copy.deepcopy(reference["text_config"]["rope_parameters"])
    config["vision_config"] = copy.deepcopy(reference["vision_config"])
    config["hidden_size"] = text["hidden_size"]
    for part in (config, text, config["vision_config"]):
        part["dtype"] = "bfloat16"
    return config


def build_model(out: Path, tiny: bool, device: str) -> Path:
    """A checkpoint folder with random weights: tokenizer, processor, config, safetensors."""
    import torch
    from transformers import Qwen3_5Config, Qwen3_5ForConditionalGeneration

    from marlin_desk.dev.tiny_model import build_processor, build_tiny_model, build_tokenizer

    if tiny:
        return build_tiny_model(out)
    out.mkdir(parents=True, exist_ok=True)
    tokenizer = build_tokenizer(out)
    config = Qwen3_5Config(**full_config(tokenizer))
    torch.manual_seed(0)
    with torch.device(device):  # random init of 2B parameters is minutes on CPU, ms on a GPU
        model = Qwen3_5ForConditionalGeneration(config).to(torch.bfloat16).eval()
    for p in model.parameters():  # default init gives huge activations in 24 layers
        p.data.mul_(0.5)
    model.generation_config.eos_token_id = [config.eos_token_id, config.text_config.eos_token_id]
    model.generation_config.pad_token_id = config.pad_token_id
    model.generation_config.do_sample = False
    model.save_pretrained(out, safe_serialization=True)
    build_processor(out, tokenizer)
    del model
    return out


def make_video(path: Path, seconds: float, width: int, height: int, fps: int = 8) -> Path:
    """A moving gradient with a colour change every 10 s (H.264, yuv420p)."""
    import av
    import numpy as np

    with av.open(str(path), "w") as container:
        stream = container.add_stream("libx264", rate=fps)
        stream.width, stream.height, stream.pix_fmt = width, height, "yuv420p"
        stream.options = {"preset": "ultrafast", "crf": "28"}
        x = np.linspace(0, 255, width, dtype=np.float32)[None, :]
        y = np.linspace(0, 255, height, dtype=np.float32)[:, None]
        for i in range(int(seconds * fps)):
            t = i / fps
            frame = np.empty((height, width, 3), dtype=np.uint8)
            frame[..., 0] = (x + 8 * t) % 256
            frame[..., 1] = (y + 5 * t) % 256
            frame[..., 2] = (int(t // 10) * 60) % 256
            for packet in stream.encode(av.VideoFrame.from_ndarray(frame, format="rgb24")):
                container.mux(packet)
        for packet in stream.encode():
            container.mux(packet)
    return path


def quantize_gptq(src: Path, out: Path, timeout: float) -> tuple[Path | None, float, str]:
    """GPTQ 4-bit of the random model in a child process (so a slow run can be cut off)."""
    code = f"""
import os, sys
os.environ.setdefault("GPTQMODEL_CPU_WORKERS", "2")
os.chdir({str(out.parent)!r})  # gptqmodel writes logs/ into the working directory
from gptqmodel import GPTQModel, QuantizeConfig
from transformers import AutoTokenizer
from marlin_desk.dev.tiny_model import _corpus
tok = AutoTokenizer.from_pretrained({str(src)!r})
lines = [" ".join(_corpus()[1 + j * 40:(j + 1) * 40]) for j in range(8)]
data = [{{"input_ids": t["input_ids"][:256], "attention_mask": t["attention_mask"][:256]}}
        for t in (tok(x) for x in lines)]
g = 128 if {int(not src.name.startswith("tiny"))} else 32
m = GPTQModel.load({str(src)!r}, QuantizeConfig(bits=4, group_size=g, desc_act=True, sym=True))
m.quantize(data, batch_size=1)
m.save({str(out)!r})
"""
    started = time.perf_counter()
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[1]))
    try:
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return None, time.perf_counter() - started, f"quantization took over {timeout:.0f} s"
    seconds = time.perf_counter() - started
    if proc.returncode != 0:
        return None, seconds, "quantization failed: " + proc.stderr.strip().splitlines()[-1][:300]
    return out, seconds, ""


# -- measuring ------------------------------------------------------------------------------

def _sync() -> None:
    import torch

    if torch.cuda.is_available():
        torch.cuda.synchronize()


def _reset_memory() -> None:
    import torch

    gc.collect()
    if torch.cuda.is_available():
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()


def decode_fixed(session: Any, state: Any, prompt: str, n: int) -> tuple[float, int]:
    """Seconds for exactly n greedy tokens after the prompt (no EOS or loop stop), from a copy
    of the window's cache: the same steps as VideoSession.ask."""
    import torch

    from marlin_desk.engine.inputs import suffix_ids

    model = session.engine.model
    step_ids = suffix_ids(session.engine.processor, prompt).to(model.device)
    cache = copy.deepcopy(state.cache)
    model.model.rope_deltas = state.rope_deltas
    position = state.prefix.length
    with torch.inference_mode():
        out = model(input_ids=step_ids, cache=cache, use_cache=True, logits_to_keep=1,
                    position_ids=(torch.arange(position, position + step_ids.shape[1],
                                               device=model.device).view(1, 1, -1)
                                  .expand(3, 1, -1) + state.rope_deltas))
        position += step_ids.shape[1]
        _sync()
        started = time.perf_counter()
        for _ in range(n):
            token = out.logits[0, -1].argmax().view(1, 1)
            positions = torch.arange(position, position + 1, device=model.device)
            positions = positions.view(1, 1, -1).expand(3, 1, -1) + state.rope_deltas
            out = model(input_ids=token, cache=cache, position_ids=positions, use_cache=True,
                        logits_to_keep=1)  # the cache object is updated in place
            position += 1
        _sync()
    return time.perf_counter() - started, n


def measure(backend: str, folder: Path, video: Path, device: str, new_tokens: int,
            cap_gib: float | None) -> dict[str, Any]:
    """One backend, one pass: load, window prefill, fixed decode, later query, peak memory."""
    import torch

    from marlin_desk.core.prompts import CAPTION_PROMPT, find_prompt
    from marlin_desk.core.windows import plan_windows
    from marlin_desk.engine.backends import load_best
    from marlin_desk.engine.session import VideoSession, is_out_of_memory
    from marlin_desk.media.sampling import sample_window

    row: dict[str, Any] = {"backend": backend, "cap_gib": cap_gib, "device": device}
    cuda = device == "cuda"
    if cuda:
        total = torch.cuda.get_device_properties(0).total_memory
        torch.cuda.set_per_process_memory_fraction(
            min(1.0, cap_gib * GIB / total) if cap_gib else 1.0)
    _reset_memory()
    engine = session = state = None
    try:
        started = time.perf_counter()
        engine = load_best(str(folder), backend, device, self_check=False)
        _sync()
        row["load_s"] = round(time.perf_counter() - started, 2)
        row["dtype"], row["precision"] = engine.dtype, engine.precision
        row["weights_gib"] = round(torch.cuda.memory_allocated() / GIB, 2) if cuda else None
        session = VideoSession(engine, str(video))
        window = plan_windows(session.info.duration)[0]
        started = time.perf_counter()
        frames = sample_window(str(video), window.start, window.end, session.budget,
                               session.info)
        row["sampling_s"] = round(time.perf_counter() - started, 2)
        row["frames"] = len(frames.times)
        started = time.perf_counter()
        state = session.prefill(window)
        _sync()
        row["window_s"] = round(time.perf_counter() - started, 2)
        row["prefill_s"] = round(row["window_s"] - row["sampling_s"], 2)
        row["prompt_tokens"] = state.prefix.length
        seconds, n = decode_fixed(session, state, CAPTION_PROMPT, new_tokens)
        row["decode_tokens"], row["decode_tok_s"] = n, round(n / seconds, 2)
        started = time.perf_counter()
        session.ask(window, find_prompt("a person opens a door"), 16)
        _sync()
        row["later_query_s"] = round(time.perf_counter() - started, 3)
        row["ok"] = True
    except Exception as exc:  # noqa: BLE001 - a row says what failed; the table goes on
        row["ok"] = False
        row["oom"] = is_out_of_memory(exc)
        row["error"] = f"{type(exc).__name__}: {str(exc).splitlines()[0][:200]}" if str(exc) \
            else type(exc).__name__
    finally:
        if cuda:
            row["peak_vram_gib"] = round(torch.cuda.max_memory_allocated() / GIB, 2)
            row["peak_reserved_gib"] = round(torch.cuda.max_memory_reserved() / GIB, 2)
        del engine, session, state
        _reset_memory()
        if cuda:
            torch.cuda.set_per_process_memory_fraction(1.0)
    return row


# -- the report ------------------------------------------------------------------------------

COLUMNS = [("backend", 8), ("cap_gib", 7), ("ok", 5), ("load_s", 7), ("sampling_s", 10),
           ("prefill_s", 9), ("prompt_tokens", 13), ("decode_tok_s", 12), ("later_query_s", 13),
           ("peak_vram_gib", 13)]


def table(rows: list[dict[str, Any]]) -> str:
    lines = ["  ".join(name.ljust(width) for name, width in COLUMNS)]
    for row in rows:
        cells = []
        for name, width in COLUMNS:
            value = row.get(name)
            cells.append(("-" if value is None else str(value)).ljust(width))
        lines.append("  ".join(cells))
        if row.get("error"):
            lines.append(f"    {row['backend']}: {row['error']}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dry-run", "--tiny", dest="tiny", action="store_true",
                        help="tiny model, small short video, CPU: checks the script in a minute")
    parser.add_argument("--out", default="gpu_check.json", help="where to write the JSON")
    parser.add_argument("--workdir", default=None, help="folder for the model and video")
    parser.add_argument("--backends", default="bf16,bnb4,gptq")
    parser.add_argument("--new-tokens", type=int, default=256)
    parser.add_argument("--gptq-timeout", type=float, default=150.0,
                        help="skip GPTQ when quantizing the random model takes longer")
    parser.add_argument("--no-cap", action="store_true", help="skip the 6 GB capped runs")
    args = parser.parse_args(argv)

    import torch

    started = time.perf_counter()
    cuda = torch.cuda.is_available() and not args.tiny
    device = "cuda" if cuda else "cpu"
    if not cuda and not args.tiny:
        print("no CUDA GPU here: run with --dry-run to check the script on CPU", file=sys.stderr)
        return 2
    work = Path(args.workdir or tempfile.mkdtemp(prefix="marlin-gpu-check-"))
    new_tokens = 16 if args.tiny else args.new_tokens
    report: dict[str, Any] = {"device": torch.cuda.get_device_name(0) if cuda else "cpu",
                              "tiny": args.tiny, "new_tokens": new_tokens, "rows": []}
    t = time.perf_counter()
    folder = build_model(work / ("tiny" if args.tiny else "full"), args.tiny, device)
    report["build_s"] = round(time.perf_counter() - t, 1)
    t = time.perf_counter()
    seconds, (w, h) = (12.0, (320, 180)) if args.tiny else (120.0, (1920, 1080))
    video = make_video(work / "synthetic.mp4", seconds, w, h)
    report["video"] = {"seconds": seconds, "size": [w, h],
                       "make_s": round(time.perf_counter() - t, 1)}
    print(f"model and video ready in {time.perf_counter() - started:.0f} s", file=sys.stderr)

    folders = {"bf16": folder, "bnb4": folder}
    if "gptq" in args.backends:
        gptq, q_seconds, why = quantize_gptq(folder, work / f"{folder.name}-gptq",
                                             args.gptq_timeout)
        report["gptq_quantize_s"], report["gptq_skipped"] = round(q_seconds, 1), why or None
        if gptq is not None:
            folders["gptq"] = gptq
        print(f"gptq: {why or f'quantized in {q_seconds:.0f} s'}", file=sys.stderr)
    caps: list[float | None] = [None] + ([] if args.no_cap or not cuda else [CAP_GIB])
    for name in [b for b in args.backends.split(",") if b in folders]:
        for cap in caps:
            row = measure("fp32" if name == "bf16" and not cuda else name, folders[name], video,
                          device, new_tokens, cap)
            report["rows"].append(row)
            print(f"{name} cap={cap}: {'ok' if row['ok'] else row.get('error')}", file=sys.stderr)
    if cuda:
        fits = {r["backend"]: r["ok"] and r.get("peak_reserved_gib", 99) <= CAP_GIB
                for r in report["rows"] if r["cap_gib"] == CAP_GIB}
        report["fits_6gb"] = fits
    report["total_s"] = round(time.perf_counter() - started, 1)
    print(table(report["rows"]))
    if cuda:
        print("fits a 6 GB card:", json.dumps(report.get("fits_6gb")))
    Path(args.out).write_text(json.dumps(report, indent=2))
    print(f"written {args.out} ({report['total_s']} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
