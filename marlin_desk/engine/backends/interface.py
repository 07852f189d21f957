"""What every backend is: the `Backend` protocol, one planned attempt (`Step`), and the error a
backend raises when it cannot load (the chain moves on)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from marlin_desk.core.errors import MarlinError
from marlin_desk.engine.hardware import Hardware


class BackendFailed(MarlinError):
    """One backend could not load or failed its self-check (the chain moves on)."""


@dataclass(frozen=True)
class Step:
    """One planned attempt: a backend on a device, and why it is in the plan."""

    backend: str
    device: str
    why: str


class Backend(Protocol):
    name: str

    def can_run(self, hw: Hardware, device: str, source: str) -> tuple[bool, str]:
        """(possible here, reason): decided from facts only, before any loading."""
        ...

    def dtype(self, hw: Hardware, device: str) -> str:
        """The activations' dtype on that device."""
        ...

    def precision(self, hw: Hardware, device: str) -> str:
        """The numeric precision that goes into cache keys ("gptq-int4", "nf4", ...)."""
        ...

    def load(self, folder: Path, device: str, hw: Hardware) -> tuple[Any, Any]:
        """(model, processor) from a local folder; raises on failure."""
        ...


def short_error(exc: BaseException) -> str:
    """An exception in one line: its type and the first line of its message."""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"{type(exc).__name__}: {text[:300]}" if text else type(exc).__name__
