"""The facts about this machine that decide how the model can run.

Detection is one function; the selection logic in `backends` takes a `Hardware` value as an
argument, so tests (and a user's bug report) can describe any machine without owning it.
Optional packages are detected by their installed metadata, not by importing them: importing
gptqmodel alone takes about 20 s on a small CPU, and a broken install shows up (with its real
error) when the backend tries to load, which the fallback chain reports.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
from dataclasses import asdict, dataclass, field
from typing import Any

GIB = 1024 ** 3

# import name -> distribution name, for the optional packages a backend or kernel needs
OPTIONAL_PACKAGES: dict[str, str] = {
    "gptqmodel": "gptqmodel",
    "bitsandbytes": "bitsandbytes",
    "sdnq": "sdnq",
    "fla": "flash-linear-attention",
    "causal_conv1d": "causal-conv1d",
}


@dataclass(frozen=True)
class Hardware:
    """What the selection logic may rely on. Memory in bytes; 0 means unknown."""

    cuda: bool = False
    cuda_name: str | None = None
    cuda_capability: tuple[int, int] | None = None
    vram_total: int = 0
    vram_free: int = 0
    mps: bool = False
    cpu_cores: int = 1
    ram_total: int = 0
    ram_available: int = 0
    packages: dict[str, str | None] = field(default_factory=dict)  # import name -> version

    def has(self, package: str) -> bool:
        """True when the optional package is installed (import name, e.g. "fla")."""
        return self.packages.get(package) is not None

    @property
    def bf16_on_cuda(self) -> bool:
        """bfloat16 kernels need compute capability 8.0 (Ampere) or newer."""
        return self.cuda and (self.cuda_capability or (0, 0)) >= (8, 0)

    @property
    def fast_linear_attention(self) -> bool:
        """Both optional DeltaNet kernels present: they matter most for GPU speed."""
        return self.has("fla") and self.has("causal_conv1d")

    def to_json(self) -> dict[str, Any]:
        doc = asdict(self)
        doc["vram_total_gib"] = round(self.vram_total / GIB, 2)
        doc["vram_free_gib"] = round(self.vram_free / GIB, 2)
        doc["ram_total_gib"] = round(self.ram_total / GIB, 2)
        doc["fast_linear_attention"] = self.fast_linear_attention
        return doc


def package_versions(names: dict[str, str] | None = None) -> dict[str, str | None]:
    """Installed version of each optional package (None when it is not installed)."""
    found: dict[str, str | None] = {}
    for module, dist in (names or OPTIONAL_PACKAGES).items():
        version: str | None = None
        if importlib.util.find_spec(module) is not None:
            try:
                version = importlib.metadata.version(dist)
            except importlib.metadata.PackageNotFoundError:
                version = "unknown"
        found[module] = version
    return found


def _ram() -> tuple[int, int]:
    """(total, available) RAM in bytes, from /proc/meminfo or sysconf; (0, 0) if unknown."""
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            info = {line.split(":")[0]: int(line.split()[1]) * 1024 for line in fh}
        return info.get("MemTotal", 0), info.get("MemAvailable", info.get("MemFree", 0))
    except (OSError, ValueError, IndexError):
        pass
    try:
        page = os.sysconf("SC_PAGE_SIZE")
        return page * os.sysconf("SC_PHYS_PAGES"), page * os.sysconf("SC_AVPHYS_PAGES")
    except (OSError, ValueError, AttributeError):
        return 0, 0


def detect() -> Hardware:
    """Look at this machine (torch is imported here, lazily, as everywhere in engine/)."""
    import torch

    cuda = bool(torch.cuda.is_available())
    name, capability, total, free = None, None, 0, 0
    if cuda:
        try:
            name = torch.cuda.get_device_name(0)
            capability = tuple(torch.cuda.get_device_capability(0))
            free, total = (int(x) for x in torch.cuda.mem_get_info(0))
        except RuntimeError:  # a driver that answers is_available() but not the rest
            cuda = False
    mps_backend = getattr(torch.backends, "mps", None)
    mps = bool(mps_backend is not None and mps_backend.is_available())
    ram_total, ram_available = _ram()
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return Hardware(cuda=cuda, cuda_name=name, cuda_capability=capability,  # type: ignore[arg-type]
                    vram_total=total, vram_free=free, mps=mps, cpu_cores=cores or 1,
                    ram_total=ram_total, ram_available=ram_available,
                    packages=package_versions())
