"""Talk to an OpenAI-compatible server (vLLM) with the `openai` client library.

The library brings what a network client needs and we would otherwise hand-write: connection
pooling, timeouts, and retries with exponential backoff on connection errors, 408/409/429 and
5xx. Here its errors become one plain sentence each, with what to do about them.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from marlin_desk.core.errors import BadInput, MarlinError, ModelUnavailable

DEFAULT_TIMEOUT = 600.0  # seconds per request: a long caption on a busy CPU server is slow
DEFAULT_RETRIES = 4  # backoff 0.5, 1, 2, 4 s (+ jitter): rides out a restart or a busy moment


class ServerUnreachable(ModelUnavailable):
    """No server answers at the URL (refused, no route, DNS)."""


class ModelNotServed(ModelUnavailable):
    """The server runs, but not the model asked for."""


class ServerMisconfigured(ModelUnavailable):
    """The server runs the model but refuses what Marlin needs to send it."""


class RequestTooLong(BadInput):
    """The window's prompt does not fit the server's context length."""


class ServerFailed(MarlinError):
    """The server answered with an error, or not in time, even after retries."""

    exit_code = 5


@dataclass(frozen=True)
class ServedModel:
    name: str  # what requests must name
    root: str  # what the server loaded (a hub id or a folder on the server)
    max_model_len: int | None


@dataclass
class Reply:
    """One chat completion, reduced to what the pipeline needs."""

    text: str
    pieces: list[str]  # generated tokens as text (from the log-probabilities)
    logprobs: list[float]
    prompt_tokens: int
    completion_tokens: int
    finish_reason: str | None
    seconds: float


class ServerClient:
    """One server. Thread-safe: windows and videos share it."""

    def __init__(self, url: str, api_key: str | None = None, *,
                 timeout: float = DEFAULT_TIMEOUT, max_retries: int = DEFAULT_RETRIES) -> None:
        from openai import OpenAI

        self.url = url.rstrip("/")
        # A local vLLM ignores the key unless started with --api-key; the library insists on one.
        self._client = OpenAI(base_url=self.url, api_key=api_key or "not-needed",
                              timeout=timeout, max_retries=max_retries)

    def models(self) -> list[ServedModel]:
        try:
            page = self._client.models.list()
        except Exception as exc:  # noqa: BLE001 - translated into one plain sentence
            raise self._explain(exc, None) from exc
        return [ServedModel(m.id, str(getattr(m, "root", None) or m.id),
                            getattr(m, "max_model_len", None)) for m in page.data]

    def model(self, name: str | None) -> ServedModel:
        """The served model called `name`, or the server's only model when `name` is None."""
        served = self.models()
        names = ", ".join(m.name for m in served) or "nothing"
        if name is None:
            if len(served) != 1:
                raise ModelNotServed(f"the server at {self.url} serves {names}: choose one "
                                     f"with --served-model")
            return served[0]
        for m in served:
            if m.name == name:
                return m
        raise ModelNotServed(f"the server at {self.url} does not serve {name!r}; it serves "
                             f"{names} (use --served-model)")

    def chat(self, model: str, video_url: str, prompt: str, max_tokens: int,
             extra_body: dict[str, Any]) -> Reply:
        """Greedy answer to (video, prompt), with each generated token's log-probability."""
        messages = [{"role": "user", "content": [
            {"type": "video_url", "video_url": {"url": video_url}},
            {"type": "text", "text": prompt},
        ]}]
        started = time.perf_counter()
        try:
            out = self._client.chat.completions.create(
                model=model, messages=messages, max_tokens=max_tokens,  # type: ignore[arg-type]
                temperature=0.0, logprobs=True, top_logprobs=0, extra_body=extra_body)
        except Exception as exc:  # noqa: BLE001 - translated into one plain sentence
            raise self._explain(exc, model) from exc
        choice = out.choices[0]
        tokens = (choice.logprobs.content or []) if choice.logprobs else []
        usage = out.usage
        return Reply(text=choice.message.content or "",
                     pieces=[t.token for t in tokens], logprobs=[t.logprob for t in tokens],
                     prompt_tokens=usage.prompt_tokens if usage else 0,
                     completion_tokens=usage.completion_tokens if usage else len(tokens),
                     finish_reason=choice.finish_reason,
                     seconds=time.perf_counter() - started)

    def close(self) -> None:
        self._client.close()

    def _explain(self, exc: Exception, model: str | None) -> MarlinError:
        import openai

        where = f"the server at {self.url}"
        if isinstance(exc, openai.APITimeoutError):
            return ServerFailed(f"{where} did not answer in time, even after retries")
        if isinstance(exc, openai.APIConnectionError):
            reason = _root_cause(exc)
            return ServerUnreachable(f"cannot reach {where} ({reason}); is it running? Check "
                                     f"the server address (Preferences > Server URL in the app, "
                                     f"--url on the command line)")
        if isinstance(exc, openai.AuthenticationError | openai.PermissionDeniedError):
            return ModelUnavailable(f"{where} refused the API key (HTTP {exc.status_code}); "
                                    f"check it (Preferences > Server API key in the app, "
                                    f"--api-key or MARLIN_API_KEY on the command line)")
        if isinstance(exc, openai.NotFoundError) and model is not None:
            return ModelNotServed(f"{where} does not serve {model!r}: {_message(exc)} (choose "
                                  f"the served model: Preferences > Served model, or "
                                  f"--served-model)")
        if isinstance(exc, openai.BadRequestError):
            message = _message(exc)
            if "trust-request-mm-kwargs" in message:
                return ServerMisconfigured(
                    f"{where} must be started with --trust-request-mm-kwargs: each window's "
                    f"frame times and video budget are sent with the request (docs/serving.md)")
            if "context" in message.lower() or "too long" in message.lower() or \
                    "max_model_len" in message or "maximum" in message.lower():
                return RequestTooLong(f"{where} cannot take this window: {message}. Start it "
                                      f"with a larger --max-model-len, or use a shorter --window")
            return BadInput(f"{where} rejected the request: {message}")
        if isinstance(exc, openai.APIStatusError):
            return ServerFailed(f"{where} answered HTTP {exc.status_code}, even after retries: "
                                f"{_message(exc)}")
        return ServerFailed(f"{where} failed: {exc}")


def _message(exc: Any) -> str:
    """The server's own error text (vLLM puts it in body.message or body.error.message)."""
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        inner = body.get("error") if isinstance(body.get("error"), dict) else body
        text = inner.get("message") if isinstance(inner, dict) else None
        if text:
            return " ".join(str(text).split())[:400]
    return " ".join(str(getattr(exc, "message", exc)).split())[:400]


def _root_cause(exc: BaseException) -> str:
    while exc.__cause__ is not None:
        exc = exc.__cause__
    text = str(exc) or type(exc).__name__
    return "connection refused" if "refused" in text.lower() else text
