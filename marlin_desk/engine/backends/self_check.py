"""The first-inference self-check a quantized model must pass before the chain accepts it."""

from __future__ import annotations

from marlin_desk.engine.backends.interface import short_error
from marlin_desk.engine.loader import LoadedModel


def check_first_inference(engine: LoadedModel, new_tokens: int = 2) -> str | None:
    """None when a short greedy generate on a tiny synthetic clip gives finite logits; else
    what went wrong. Broken quantized kernels tend to give NaN or inf, not an exception."""
    import numpy as np
    import torch

    from marlin_desk.engine.inputs import suffix_ids, video_prefix
    from marlin_desk.media.sampling import SampledFrames

    try:
        rng = np.random.default_rng(0)
        frames = SampledFrames(frames=rng.integers(0, 255, (4, 64, 64, 3), dtype=np.uint8),
                               times=[0.0, 0.5, 1.0, 1.5], window_start=0.0, window_end=2.0,
                               source_indices=[0, 1, 2, 3])
        prefix = video_prefix(engine.processor, frames)
        inputs = dict(prefix.inputs)
        suffix = suffix_ids(engine.processor, "Describe the clip.")
        inputs["input_ids"] = torch.cat([inputs["input_ids"], suffix], dim=1)
        inputs["attention_mask"] = torch.ones_like(inputs["input_ids"])
        if "mm_token_type_ids" in inputs:
            inputs["mm_token_type_ids"] = torch.cat(
                [inputs["mm_token_type_ids"], torch.zeros_like(suffix)], dim=1)
        net = engine.model
        moved = {k: (v.to(net.device, dtype=net.dtype) if v.is_floating_point() else
                     v.to(net.device)) if isinstance(v, torch.Tensor) else v
                 for k, v in inputs.items()}
        net.model.rope_deltas = None
        with torch.inference_mode():
            out = net.generate(**moved, max_new_tokens=new_tokens, do_sample=False, num_beams=1,
                               eos_token_id=engine.eos_ids, pad_token_id=engine.pad_id,
                               return_dict_in_generate=True, output_logits=True)
        net.model.rope_deltas = None
    except Exception as exc:  # noqa: BLE001 - any failure here means "do not use this backend"
        return short_error(exc)
    for step in out.logits:
        if not bool(torch.isfinite(step.float()).all()):
            return "non-finite logits"
    return None
