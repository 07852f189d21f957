"""Keep window prefills within a memory budget: on the GPU first, then in CPU memory, least
recently used evicted (and recomputed when asked for again).

A 120 s window of the real model holds about 300 MB (276 MiB of KV cache for 23.5 K tokens plus
the DeltaNet states), so a long video cannot keep them all; the budget decides how many stay.
"""

from __future__ import annotations

import logging
import os
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

log = logging.getLogger(__name__)

HOST_FRACTION = 0.25  # of the machine's RAM
HOST_CAP = 8 << 30
DEVICE_FRACTION = 0.30  # of the GPU memory still free once the model is loaded


def _walk(obj: Any, fn: Any) -> Any:
    """Map `fn` over every tensor inside a cache layer's attributes (dicts and lists too)."""
    import torch

    if isinstance(obj, torch.Tensor):
        return fn(obj)
    if isinstance(obj, dict):
        return {k: _walk(v, fn) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return type(obj)(_walk(v, fn) for v in obj)
    return obj


def cache_bytes(cache: Any) -> int:
    """Bytes held by a transformers cache (KV tensors and recurrent/conv states)."""
    total = 0

    def add(t: Any) -> Any:
        nonlocal total
        total += t.numel() * t.element_size()
        return t

    for layer in getattr(cache, "layers", []):
        _walk(vars(layer), add)
    return total


def move_cache(cache: Any, device: Any) -> Any:
    """Move every tensor of the cache to `device` in place (and the layers' device notes)."""
    import torch

    target = torch.device(device)
    for layer in getattr(cache, "layers", []):
        for name, value in list(vars(layer).items()):
            if isinstance(value, torch.device):
                setattr(layer, name, target)
            else:
                setattr(layer, name, _walk(value, lambda t: t.to(target)))
    return cache


def host_budget() -> int:
    try:
        ram = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        ram = 8 << 30
    return int(min(ram * HOST_FRACTION, HOST_CAP))


def device_budget(device: str) -> int:
    if device != "cuda":
        return 0
    import torch

    free, _ = torch.cuda.mem_get_info()
    return int(free * DEVICE_FRACTION)


@dataclass
class _Entry:
    state: Any  # session.WindowPrefill
    size: int
    on_device: bool


class PrefillStore:
    """LRU store of prefills with two budgets. On a CPU-only run the 'device' is the CPU, so
    only the host budget applies."""

    def __init__(self, device: str, device_bytes: int | None = None,
                 host_bytes: int | None = None) -> None:
        self.device = device
        self.device_bytes = device_budget(device) if device_bytes is None else device_bytes
        self.host_bytes = host_budget() if host_bytes is None else host_bytes
        self._entries: OrderedDict[int, _Entry] = OrderedDict()

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, index: int) -> bool:
        return index in self._entries

    def get(self, index: int) -> Any | None:
        """The prefill on the compute device, or None if it was never made or was evicted."""
        entry = self._entries.get(index)
        if entry is None:
            return None
        self._entries.move_to_end(index)
        if not entry.on_device:
            move_cache(entry.state.cache, self.device)
            entry.on_device = True
            self._balance()
        return entry.state

    def put(self, index: int, state: Any) -> None:
        self._entries[index] = _Entry(state, cache_bytes(state.cache), True)
        self._entries.move_to_end(index)
        self._balance()

    def clear(self) -> None:
        self._entries.clear()

    def usage(self) -> dict[str, int]:
        on = sum(e.size for e in self._entries.values() if e.on_device)
        off = sum(e.size for e in self._entries.values() if not e.on_device)
        return {"device_bytes": on, "host_bytes": off, "windows": len(self._entries)}

    def _balance(self) -> None:
        """Push least recently used prefills down (device → host, then host → dropped) until
        both budgets hold; the most recent one always stays so the current question can be
        answered."""
        older = list(self._entries)[:-1]
        if self.device == "cpu":  # one memory: the host budget is the only one
            for index in older:
                if self.usage()["device_bytes"] <= self.host_bytes:
                    break
                self._drop(index)
            return
        for index in older:
            if self.usage()["device_bytes"] <= self.device_bytes:
                break
            entry = self._entries[index]
            if entry.on_device:
                move_cache(entry.state.cache, "cpu")
                entry.on_device = False
        for index in older:
            if self.usage()["host_bytes"] <= self.host_bytes:
                break
            if not self._entries[index].on_device:
                self._drop(index)

    def _drop(self, index: int) -> None:
        del self._entries[index]
        log.info("prefill of window %d evicted (memory budget)", index)
