"""A per-video session: prefill each window once, answer any number of prompts from it.

The video comes before the question, so a window's prefill (its KV cache, the DeltaNet recurrent
state and the M-RoPE offset) is the same for the caption and for every find query. For each
question we restore `rope_deltas`, pass the full ids (prefix + question) and a deep copy of the
cache: the cache mutates in place and cannot be cropped (recurrent state), so without the copy
the second answer would be wrong.
"""

from __future__ import annotations

import copy
import dataclasses
import gc
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from marlin_desk.core.answers import Answer, WindowFacts, mean, number_logprob
from marlin_desk.core.budget import TRAINING_BUDGET, VideoBudget
from marlin_desk.core.errors import Cancelled, MarlinError
from marlin_desk.core.windows import Window
from marlin_desk.engine.inputs import VideoPrefix, suffix_ids, video_prefix
from marlin_desk.engine.loader import LoadedModel
from marlin_desk.engine.prefills import PrefillStore
from marlin_desk.media.probe import VideoInfo, probe
from marlin_desk.media.sampling import sample_window

log = logging.getLogger(__name__)

ShouldStop = Callable[[], bool]
OnNote = Callable[[str], None]


class OutOfMemory(MarlinError):
    """A window did not fit in the device's memory even with the smallest frame budget."""

    exit_code = 4


@dataclass
class WindowPrefill:
    """One window's reusable state, plus the facts reported for it."""

    window: Window
    frame_times: list[float]  # video time of each frame the model saw
    frame_size: tuple[int, int]  # (height, width) the frames were given at
    prefix: VideoPrefix  # token ids only: the pixels are not kept once prefilled
    cache: Any
    rope_deltas: Any
    seconds: float  # sampling + prefill time


class VideoSession:
    """Holds one video open for one model; keeps the most recently used window prefills."""

    max_concurrency = 1  # one model on one device: windows are answered one at a time

    def __init__(self, engine: LoadedModel, video: str, *, info: VideoInfo | None = None,
                 budget: VideoBudget = TRAINING_BUDGET,
                 prefills: PrefillStore | None = None) -> None:
        self.engine = engine
        self.video = video
        self.info = info or probe(video)
        self.budget = budget
        self.original_budget = budget  # `budget` shrinks after an out-of-memory
        self.notes: list[str] = []  # budget changes after out-of-memory, for the report
        self.window_budgets: dict[int, VideoBudget] = {}  # windows answered below `budget`
        self.prefills = prefills if prefills is not None else PrefillStore(engine.device)

    # -- prefill -------------------------------------------------------------------------
    def prefill(self, window: Window, should_stop: ShouldStop | None = None) -> WindowPrefill:
        """The window's prefill, computed once and kept within the memory budget."""
        cached = self.prefills.get(window.index)
        if cached is not None and (cached.window.start, cached.window.end) == \
                (window.start, window.end):
            return cached
        import torch

        started = time.perf_counter()
        frames = sample_window(self.video, window.start, window.end, self.budget, self.info,
                               should_stop=should_stop)
        prefix = video_prefix(self.engine.processor, frames)
        model = self.engine.model
        inputs = self._to_device(prefix.inputs)
        with torch.inference_mode():
            out = model.model(**inputs, use_cache=True)
        # Only the ids stay: the pixel tensors (~0.4 GB for a full window) are done with.
        prefix.inputs = {"input_ids": prefix.inputs["input_ids"]}
        state = WindowPrefill(window=window, frame_times=list(frames.times),
                              frame_size=frames.size, prefix=prefix, cache=_cache_of(out),
                              rope_deltas=model.model.rope_deltas,
                              seconds=time.perf_counter() - started)
        self.prefills.put(window.index, state)
        return state

    def facts(self, window: Window) -> WindowFacts:
        """What the model was shown for `window` (from its prefill)."""
        state = self.prefill(window)
        return WindowFacts(frame_times=list(state.frame_times), grid=state.prefix.grid,
                           video_tokens=state.prefix.video_tokens, seconds=state.seconds)

    def forget(self) -> None:
        """Drop every kept prefill (frees memory; they are recomputed when needed)."""
        self.prefills.clear()

    # -- out of memory ---------------------------------------------------------------------
    def ask_retrying(self, window: Window, prompt: str, max_new_tokens: int,
                     should_stop: ShouldStop | None = None,
                     on_note: OnNote | None = None) -> Answer:
        """`ask`, surviving GPU out-of-memory: free the kept prefills and the allocator's cache,
        retry the window with half the pixels per frame, then half the frames, and raise
        `OutOfMemory` (a MarlinError the caller reports) if even that does not fit. The smaller
        budget is kept for the following windows: a window that did not fit once will not fit
        the next time either, and each failed try costs a prefill."""
        retries = smaller_budgets(self.budget)
        while True:
            failed: str | None = None
            try:
                answer = self.ask(window, prompt, max_new_tokens, should_stop)
                if self.budget != self.original_budget:
                    self.window_budgets[window.index] = self.budget
                return answer
            except Exception as exc:
                if not is_out_of_memory(exc):
                    raise
                failed = f"{type(exc).__name__}: {str(exc).splitlines()[0][:160]}"
            # outside the except block: the traceback no longer pins the failed step's tensors
            self.forget()
            free_device_memory()
            if not retries:
                note = (f"window {window.index + 1} ({window.start:.0f}-{window.end:.0f} s) is "
                        f"out of memory even at {_describe(self.budget)}: {failed}")
                self.notes.append(note)
                raise OutOfMemory(note + ". Try --backend gptq or bnb4, a shorter --window, "
                                         "or --device cpu")
            smaller = retries.pop(0)
            note = (f"window {window.index + 1} ({window.start:.0f}-{window.end:.0f} s): out of "
                    f"memory at {_describe(self.budget)}; retrying at {_describe(smaller)}")
            log.warning(note)
            self.notes.append(note)
            if on_note:
                on_note(note)
            self.budget = smaller

    # -- answering -----------------------------------------------------------------------
    def ask(self, window: Window, prompt: str, max_new_tokens: int,
            should_stop: ShouldStop | None = None) -> Answer:
        """Answer `prompt` about `window` from the window's reused prefill (greedy).

        A plain decoding loop rather than `generate`: transformers 5.24's generate mis-positions
        the decode steps that follow a caller-supplied M-RoPE cache (the first token is right,
        later ones drift), and the loop also gives us cancel checks and log-probabilities.
        """
        import torch

        state = self.prefill(window, should_stop)
        started = time.perf_counter()
        model = self.engine.model
        suffix = suffix_ids(self.engine.processor, prompt).to(model.device)
        cache = copy.deepcopy(state.cache)
        model.model.rope_deltas = state.rope_deltas
        position = state.prefix.length
        step_ids = suffix
        new: list[int] = []
        logprobs: list[float] = []
        with torch.inference_mode():
            while len(new) < max_new_tokens:
                if should_stop and should_stop():
                    raise Cancelled("cancelled")
                n = step_ids.shape[1]
                positions = torch.arange(position, position + n, device=model.device)
                positions = positions.view(1, 1, -1).expand(3, 1, -1) + state.rope_deltas
                out = model(input_ids=step_ids, cache=cache, position_ids=positions,
                            use_cache=True, logits_to_keep=1)
                position += n
                scores = torch.log_softmax(out.logits[0, -1].float(), dim=-1)
                token = int(scores.argmax())
                new.append(token)
                logprobs.append(float(scores[token]))
                if token in self.engine.eos_ids or _looping(new):
                    break
                step_ids = torch.tensor([[token]], device=model.device)
        return self._answer(new, logprobs, state.prefix.length + suffix.shape[1], started)

    def ask_without_reuse(self, window: Window, prompt: str, max_new_tokens: int) -> Answer:
        """The same question answered from scratch by transformers' own `generate` (video and
        prompt in one pass): the independent baseline that `ask` must reproduce."""
        import torch

        started = time.perf_counter()
        frames = sample_window(self.video, window.start, window.end, self.budget, self.info)
        prefix = video_prefix(self.engine.processor, frames)
        inputs = dict(prefix.inputs)
        suffix = suffix_ids(self.engine.processor, prompt)
        inputs["input_ids"] = torch.cat([inputs["input_ids"], suffix], dim=1)
        inputs["attention_mask"] = torch.ones_like(inputs["input_ids"])
        inputs["mm_token_type_ids"] = torch.cat(
            [inputs["mm_token_type_ids"], torch.zeros_like(suffix)], dim=1)
        engine = self.engine
        engine.model.model.rope_deltas = None
        inputs = self._to_device(inputs)
        prompt_len = int(inputs["input_ids"].shape[1])
        with torch.inference_mode():
            out = engine.model.generate(
                **inputs, max_new_tokens=max_new_tokens, do_sample=False, num_beams=1,
                eos_token_id=engine.eos_ids, pad_token_id=engine.pad_id,
                return_dict_in_generate=True, output_logits=True,
            )
        new = out.sequences[0, prompt_len:].tolist()
        logprobs = [float(torch.log_softmax(step[0].float(), dim=-1)[tok])
                    for step, tok in zip(out.logits, new, strict=False)]
        return self._answer(new, logprobs, prompt_len, started)

    def _answer(self, new: list[int], logprobs: list[float], prompt_tokens: int,
                started: float) -> Answer:
        finished = bool(new) and new[-1] in self.engine.eos_ids
        answer_ids, answer_lps = (new[:-1], logprobs[:-1]) if finished else (new, logprobs)
        # The EOS token itself says nothing about the answer's content: left out of the score.
        tokenizer = self.engine.processor.tokenizer
        text = tokenizer.decode(answer_ids, skip_special_tokens=True)
        return Answer(
            text=text, token_ids=new, prompt_tokens=prompt_tokens,
            seconds=time.perf_counter() - started,
            mean_logprob=mean(answer_lps),
            number_logprob=number_logprob([tokenizer.decode([t]) for t in answer_ids],
                                          answer_lps),
            finished=finished,
        )

    def _to_device(self, inputs: dict[str, Any]) -> dict[str, Any]:
        import torch

        dev = self.engine.model.device
        dtype = self.engine.model.dtype
        moved: dict[str, Any] = {}
        for key, value in inputs.items():
            if isinstance(value, torch.Tensor):
                value = value.to(dev, dtype=dtype) if value.is_floating_point() else value.to(dev)
            moved[key] = value
        return moved


LOOP_SPAN = 48  # tokens
LOOP_MAX_PERIOD = 12


def _looping(tokens: list[int]) -> bool:
    """True when the last LOOP_SPAN tokens repeat one short pattern: a degenerate answer that
    would otherwise run to the token cap (2,048 for a caption) and say nothing more."""
    if len(tokens) < LOOP_SPAN:
        return False
    tail = tokens[-LOOP_SPAN:]
    return any(all(tail[i] == tail[i - p] for i in range(p, LOOP_SPAN))
               for p in range(1, LOOP_MAX_PERIOD + 1))


def is_out_of_memory(exc: BaseException) -> bool:
    """CUDA's OutOfMemoryError, or the RuntimeError MPS (and older CUDA paths) raise."""
    try:
        import torch

        if isinstance(exc, torch.cuda.OutOfMemoryError):
            return True
    except ImportError:
        pass
    return isinstance(exc, RuntimeError) and "out of memory" in str(exc).lower()


def smaller_budgets(budget: VideoBudget) -> list[VideoBudget]:
    """The retries after an out-of-memory: half the pixels per frame, then also half the
    frames (a lower frame rate for the same window)."""
    pixels = budget.max_pixels // 2
    fewer_pixels = dataclasses.replace(budget, max_pixels=pixels,
                                       min_pixels=min(budget.min_pixels, pixels))
    frames = max(budget.min_frames, budget.max_frames // 2)
    fewer_frames = dataclasses.replace(fewer_pixels, max_frames=frames)
    return [b for b in (fewer_pixels, fewer_frames) if b != budget]


def free_device_memory() -> None:
    """Give cached GPU memory back after a failure (a no-op on CPU)."""
    gc.collect()
    try:
        import torch

        if torch.cuda.is_available():
            torch.cuda.empty_cache()
        mps = getattr(torch, "mps", None)
        if mps is not None and getattr(torch.backends, "mps", None) and \
                torch.backends.mps.is_available():
            mps.empty_cache()
    except ImportError:
        pass


def _describe(budget: VideoBudget) -> str:
    return f"{budget.max_frames} frames of at most {budget.max_pixels:,} pixels"


def _cache_of(out: Any) -> Any:
    """The cache from a model output (named `cache` from transformers 5.24 on)."""
    cache = getattr(out, "cache", None)
    return cache if cache is not None else out.past_key_values
