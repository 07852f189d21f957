"""A job's settings, as the commands and the app both take them, and what they open: the
model (through the backend chain, or a server) that answers.

`job_settings` is the one call that turns the user's options into JobSettings; `open_engine`
the one that loads what they name.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from marlin_desk.core import options
from marlin_desk.core.budget import TRAINING_BUDGET, VideoBudget
from marlin_desk.core.errors import BadInput
from marlin_desk.core.prompts import CAPTION_MAX_NEW_TOKENS
from marlin_desk.models import ModelChoice, choose_model
from marlin_desk.store.fingerprint import fingerprint

log = logging.getLogger(__name__)

PROMPT_VERSION = 1  # bump when the prompts or their parsing change what is cached


@dataclass(frozen=True)
class ServerSettings:
    """Where `--backend remote` sends the windows (an OpenAI-compatible server, e.g. vLLM)."""

    url: str
    served_model: str | None = None  # None: the server's only model (asked at open)
    api_key: str | None = None
    windows_in_flight: int = options.DEFAULT_WINDOWS_IN_FLIGHT
    clip_dir: str | None = None  # a folder the server reads too: file URLs instead of uploads
    timeout: float | None = None  # seconds per request (None: the client's default)


@dataclass
class JobSettings:
    """Everything that decides an answer, hence part of the cache key."""

    model: str
    device: str = options.DEFAULT_DEVICE
    window: float = options.DEFAULT_WINDOW_SECONDS
    overlap: float = options.DEFAULT_OVERLAP_SECONDS
    revision: str | None = None
    budget: VideoBudget = TRAINING_BUDGET
    caption_tokens: int = CAPTION_MAX_NEW_TOKENS  # a smaller cap gives shorter, other answers
    # options.BACKENDS. Not in cache_settings: what it changes in the answers is the numeric
    # precision, which is the cache key's own `precision` field.
    backend: str = options.DEFAULT_BACKEND
    server: ServerSettings | None = None  # with backend "remote"
    choice: ModelChoice | None = None  # why this model (not part of the key)

    def cache_settings(self) -> dict[str, Any]:
        return {"window": self.window, "overlap": self.overlap, "budget": self.budget.to_dict(),
                "prompts": PROMPT_VERSION, "caption_tokens": self.caption_tokens}


def is_remote(settings: JobSettings) -> bool:
    return settings.backend == "remote"


def job_settings(*, model: str | None = None, backend: str = options.DEFAULT_BACKEND,
                 device: str = options.DEFAULT_DEVICE,
                 window: float = options.DEFAULT_WINDOW_SECONDS,
                 overlap: float = options.DEFAULT_OVERLAP_SECONDS, revision: str | None = None,
                 caption_tokens: int | None = None, server: ServerSettings | None = None,
                 ) -> JobSettings:
    """The settings of a job from the user's options, as the commands and the app both take
    them: a server URL means the remote backend; no model means the one `choose_model` picks
    (pulled Marlin-2B, the hub cache, else the demo model, with the reason)."""
    if backend not in options.BACKENDS:
        raise BadInput(f"unknown backend {backend!r}: use one of {', '.join(options.BACKENDS)}")
    if device not in options.DEVICES:
        raise BadInput(f"unknown device {device!r}: use one of {', '.join(options.DEVICES)}")
    if server is not None and server.url and backend == options.DEFAULT_BACKEND:
        backend = "remote"
    choice = None
    if backend == "remote":
        if server is None or not server.url:
            raise BadInput("the remote backend needs the server's address (http://HOST:PORT/v1)"
                           ": set it in Preferences, or pass --url")
        if server.windows_in_flight < 1:
            raise BadInput("the windows in flight must be at least 1")
        model = server.served_model or ""
    else:
        choice = choose_model(model, revision=revision)
        model = choice.model
        server = None
    return JobSettings(model=model or "", device=device, window=window, overlap=overlap,
                       revision=revision, backend=backend, server=server, choice=choice,
                       caption_tokens=caption_tokens or CAPTION_MAX_NEW_TOKENS)


def open_engine(settings: JobSettings) -> Any:
    """Load the model for these settings through the backend chain (GPTQ, NF4, BF16, FP32 ...
    falling back by itself), or connect to the server; `why` says which model and why."""
    if is_remote(settings):
        return connect_server(settings)
    from marlin_desk.engine.backends import load_best

    engine = load_best(settings.model, settings.backend, settings.device,
                       revision=settings.revision)
    if settings.choice is not None and settings.choice.source != "user":  # the app chose it
        engine.why = f"{settings.choice.why}; {engine.why}".strip("; ")
    return engine


def connect_server(settings: JobSettings) -> Any:
    """The remote engine for these settings: checks the server answers and serves the model."""
    from marlin_desk.remote.session import connect

    server = settings.server
    if server is None or not server.url:
        raise BadInput("the remote backend needs the server's address (http://HOST:PORT/v1)"
                       ": set it in Preferences, or pass --url")
    return connect(server.url, server.served_model, api_key=server.api_key,
                   concurrency=server.windows_in_flight, clip_dir=server.clip_dir,
                   timeout=server.timeout)


def model_identity(model: str, revision: str | None) -> tuple[str, str]:
    """(model id, revision) for the cache key. A local folder is identified by its path and a
    fingerprint of its weights, so replacing the weights invalidates its analyses."""
    folder = Path(model).expanduser()
    if folder.is_dir():
        weights = sorted(folder.glob("*.safetensors"))
        digest = fingerprint(str(weights[0]))[:16] if weights else "no-weights"
        return str(folder.resolve()), f"local:{digest}"
    return model, revision or "default"
