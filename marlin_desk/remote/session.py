"""A video session whose windows are answered by a server: the same methods the pipeline calls
on the local `VideoSession` (facts, ask, ask_retrying), so analyse and find run unchanged.

Each window is sampled here exactly as for the local model and sent as a short clip at the
budget's frame rate; the request tells the server that budget, and the prompt tokens it reports
show whether it was honoured.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from marlin_desk.core.answers import Answer, WindowFacts, mean, number_logprob
from marlin_desk.core.budget import TRAINING_BUDGET, VideoBudget
from marlin_desk.core.errors import Cancelled
from marlin_desk.core.options import DEFAULT_WINDOWS_IN_FLIGHT
from marlin_desk.core.windows import Window
from marlin_desk.media.probe import VideoInfo, probe
from marlin_desk.media.sampling import sample_window
from marlin_desk.media.window_clip import encode_clip, jpeg_sequence_url, spread_rate
from marlin_desk.remote.budget import budget_warning, request_kwargs
from marlin_desk.remote.client import ServedModel, ServerClient

log = logging.getLogger(__name__)

ShouldStop = Callable[[], bool]
OnNote = Callable[[str], None]

# windows in flight per video: keeps a batching server busy
DEFAULT_CONCURRENCY = DEFAULT_WINDOWS_IN_FLIGHT
KEPT_CLIPS = 8  # packed windows kept for the next query (a 120 s window is a few MB)
END_PIECES = {"<|im_end|>", "<|endoftext|>"}  # a stop token is no part of the answer


@dataclass
class RemoteEngine:
    """A model served elsewhere, described like a local one (CLI JSON, status bar, cache key)."""

    client: ServerClient
    served: ServedModel
    concurrency: int = DEFAULT_CONCURRENCY
    clip_dir: Path | None = None  # a folder the server can read too: file URLs, no upload
    fallbacks: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    backend = "remote"
    device = "remote"
    dtype = "server"
    precision = "remote"  # the server's dtype is not reported: kept apart in the cache

    @property
    def model_id(self) -> str:
        return self.served.root

    @property
    def why(self) -> str:
        return f"the remote backend: {self.served.name!r} served at {self.client.url}"

    def describe(self) -> dict[str, Any]:
        return {"model": self.served.root, "served_model": self.served.name,
                "url": self.client.url, "revision": None, "backend": self.backend,
                "device": self.device, "dtype": self.dtype, "why": self.why,
                "precision": self.precision, "concurrency": self.concurrency,
                "fallbacks": list(self.fallbacks), "notes": list(self.notes)}


def connect(url: str, served_model: str | None = None, *, api_key: str | None = None,
            concurrency: int = DEFAULT_CONCURRENCY, clip_dir: str | None = None,
            timeout: float | None = None) -> RemoteEngine:
    """Check that the server answers and serves the model; raises a MarlinError if not."""
    client = ServerClient(url, api_key, **({"timeout": timeout} if timeout else {}))
    served = client.model(served_model)
    folder = Path(clip_dir).expanduser() if clip_dir else None
    if folder is not None:
        folder.mkdir(parents=True, exist_ok=True)
    return RemoteEngine(client, served, max(1, concurrency), folder)


@dataclass
class _Clip:
    url: str
    facts: WindowFacts
    relative_times: list[float]  # each frame's time from the window start
    path: Path | None  # the clip file, in file-URL mode


class RemoteSession:
    """One video answered by a server, several windows at a time."""

    def __init__(self, engine: RemoteEngine, video: str, *, info: VideoInfo | None = None,
                 budget: VideoBudget = TRAINING_BUDGET) -> None:
        self.engine = engine
        self.video = video
        self.info = info or probe(video)
        self.budget = budget
        self.original_budget = budget
        self.notes: list[str] = []
        self.max_concurrency = engine.concurrency
        self._clips: OrderedDict[int, _Clip] = OrderedDict()
        self._locks: dict[int, threading.Lock] = {}
        self._guard = threading.Lock()

    # -- the window as a clip --------------------------------------------------------------
    def facts(self, window: Window) -> WindowFacts:
        return self._clip(window).facts

    def _clip(self, window: Window, should_stop: ShouldStop | None = None) -> _Clip:
        with self._guard:
            lock = self._locks.setdefault(window.index, threading.Lock())
        with lock:  # two queries on one window: encode it once
            with self._guard:
                kept = self._clips.get(window.index)
                if kept is not None:
                    self._clips.move_to_end(window.index)
                    return kept
            clip = self._make_clip(window, should_stop)
            with self._guard:
                self._clips[window.index] = clip
                while len(self._clips) > KEPT_CLIPS:
                    _, old = self._clips.popitem(last=False)
                    _remove(old.path)
            return clip

    def _make_clip(self, window: Window, should_stop: ShouldStop | None) -> _Clip:
        started = time.perf_counter()
        frames = sample_window(self.video, window.start, window.end, self.budget, self.info,
                               should_stop=should_stop)
        height, width = frames.size
        pairs = -(-len(frames.times) // self.budget.temporal_patch_size)
        grid = [pairs, height // self.budget.patch_size, width // self.budget.patch_size]
        merge = self.budget.merge_size ** 2
        relative = [round(t, 6) for t in frames.relative_times]
        folder = self.engine.clip_dir
        if folder is None:  # inline, with each frame's real time
            url, path = jpeg_sequence_url(frames), None
        else:  # a file on the shared disk
            path = folder / f"marlin-{id(self):x}-w{window.index}.mp4"
            path.write_bytes(encode_clip(frames, spread_rate(relative)))
            url = path.resolve().as_uri()
        facts = WindowFacts(frame_times=list(frames.times), grid=grid,
                            video_tokens=grid[0] * grid[1] * grid[2] // merge,
                            seconds=time.perf_counter() - started)
        return _Clip(url, facts, relative, path)

    # -- answers ---------------------------------------------------------------------------
    def ask(self, window: Window, prompt: str, max_new_tokens: int,
            should_stop: ShouldStop | None = None) -> Answer:
        clip = self._clip(window, should_stop)
        if should_stop and should_stop():
            raise Cancelled("cancelled")
        reply = self.engine.client.chat(
            self.engine.served.name, clip.url, prompt, max_new_tokens,
            request_kwargs(self.budget, clip.relative_times,
                           jpeg_sequence=clip.path is None))
        pieces, logprobs = list(reply.pieces), list(reply.logprobs)
        while pieces and pieces[-1] in END_PIECES:
            pieces.pop()
            logprobs.pop()
        warning = budget_warning(reply.prompt_tokens, clip.facts, prompt)
        if warning and warning not in self.notes:
            log.warning(warning)
            self.notes.append(warning)
        return Answer(text=reply.text.strip(), token_ids=[], prompt_tokens=reply.prompt_tokens,
                      seconds=reply.seconds, mean_logprob=mean(logprobs),
                      number_logprob=number_logprob(pieces, logprobs),
                      finished=reply.finish_reason == "stop", generated=reply.completion_tokens,
                      extra={"video_tokens": clip.facts.video_tokens})

    def ask_retrying(self, window: Window, prompt: str, max_new_tokens: int,
                     should_stop: ShouldStop | None = None,
                     on_note: OnNote | None = None) -> Answer:
        """`ask`: the server's memory is the server's business (retries with backoff are in the
        client); a budget warning is passed on once."""
        before = len(self.notes)
        answer = self.ask(window, prompt, max_new_tokens, should_stop)
        if on_note:
            for note in self.notes[before:]:
                on_note(note)
        return answer

    def forget(self) -> None:
        with self._guard:
            for clip in self._clips.values():
                _remove(clip.path)
            self._clips.clear()

    def __del__(self) -> None:  # file-URL clips are scratch files: never left behind
        with contextlib.suppress(Exception):  # at interpreter shutdown
            self.forget()


def _remove(path: Path | None) -> None:
    if path is not None:
        path.unlink(missing_ok=True)
