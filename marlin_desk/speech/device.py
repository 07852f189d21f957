"""Where Whisper runs: the CPU (int8), or CUDA only when the GPU has room for it beside Marlin.

The rule is one pure function (`plan_device`) over the machine's facts, so tests can describe
any machine. Whisper must never be why Marlin falls back to a smaller backend or to the CPU: on
CUDA it runs only when CTranslate2 sees a CUDA device AND the free GPU memory holds Whisper's
need plus what Marlin still needs (its reserve; 0 when Marlin does not use this GPU). Without a
reading of the free memory the GPU is not used (no proof of room). On the CPU int8 is the
fastest of CTranslate2's compute types and, for Whisper, as accurate as float32 in practice.

Free GPU memory comes from NVML (`libnvidia-ml`, the driver's own library, loaded with ctypes):
it reads the memory without creating a CUDA context, so asking costs nothing on the GPU.
"""

from __future__ import annotations

import ctypes
import logging
from dataclasses import dataclass

from marlin_desk.core.errors import BadInput
from marlin_desk.core.options import SPEECH_DEVICES

log = logging.getLogger(__name__)

MIB = 1024 ** 2
GIB = 1024 ** 3
WORKING_BYTES = 1 * GIB  # activations of a 30 s window, beam 5, the CUDA allocator's slack


@dataclass(frozen=True)
class DevicePlan:
    device: str  # "cpu" or "cuda"
    compute_type: str  # CTranslate2's: "int8" on the CPU, "float16" on CUDA
    why: str  # one sentence

    def to_json(self) -> dict[str, str]:
        return {"device": self.device, "compute_type": self.compute_type, "why": self.why}


CPU = DevicePlan("cpu", "int8", "")


def whisper_need_bytes(model_bytes: int) -> int:
    """GPU memory Whisper takes: its float16 weights (model.bin's size) and working memory."""
    return int(model_bytes) + WORKING_BYTES


def plan_device(requested: str, cuda_devices: int, free_bytes: int | None, need_bytes: int,
                reserve_bytes: int) -> DevicePlan:
    """The device for a transcription.

    requested: "auto", "cpu" or "cuda"; cuda_devices: what CTranslate2 counts; free_bytes: the
    GPU's free memory now (None: unknown); need_bytes: Whisper's (whisper_need_bytes);
    reserve_bytes: what Marlin still needs on that GPU (0 when it runs elsewhere).
    """
    if requested not in SPEECH_DEVICES:
        raise BadInput(f"unknown speech device {requested!r}: use one of "
                       f"{', '.join(SPEECH_DEVICES)}")
    if requested == "cpu":
        return DevicePlan("cpu", "int8", "on the CPU (int8), as asked")
    if cuda_devices <= 0:
        if requested == "cuda":
            raise BadInput("no CUDA device for speech: CTranslate2 finds none on this machine "
                           "(use --speech-device auto or cpu)")
        return DevicePlan("cpu", "int8", "on the CPU (int8): no CUDA device")
    if free_bytes is None:
        return DevicePlan("cpu", "int8", "on the CPU (int8): the GPU's free memory cannot be "
                                         "read, so Whisper stays off it to leave Marlin room")
    left = free_bytes - reserve_bytes
    if left < need_bytes:
        return DevicePlan("cpu", "int8", f"on the CPU (int8): the GPU has {free_bytes / GIB:.1f}"
                                         f" GiB free, Marlin keeps {reserve_bytes / GIB:.1f} GiB"
                                         f" and Whisper needs {need_bytes / GIB:.1f} GiB")
    return DevicePlan("cuda", "float16", f"on CUDA (float16): {free_bytes / GIB:.1f} GiB free, "
                                         f"room for Whisper ({need_bytes / GIB:.1f} GiB) beside "
                                         f"Marlin ({reserve_bytes / GIB:.1f} GiB)")


def cuda_device_count() -> int:
    """CUDA devices CTranslate2 can use (0 when its CUDA libraries or a driver are missing)."""
    try:
        import ctranslate2

        return int(ctranslate2.get_cuda_device_count())
    except Exception as exc:  # noqa: BLE001 - no CUDA is an answer, not an error
        log.debug("no CUDA for CTranslate2: %s", exc)
        return 0


class _NvmlMemory(ctypes.Structure):
    _fields_ = [("total", ctypes.c_ulonglong), ("free", ctypes.c_ulonglong),
                ("used", ctypes.c_ulonglong)]


def gpu_free_bytes(index: int = 0) -> int | None:
    """Free memory of CUDA device `index` from NVML, or None when it cannot be read."""
    for name in ("libnvidia-ml.so.1", "libnvidia-ml.so", "nvml.dll"):
        try:
            nvml = ctypes.CDLL(name)
            break
        except OSError:
            continue
    else:
        return None
    try:
        if nvml.nvmlInit_v2() != 0:
            return None
        try:
            handle = ctypes.c_void_p()
            if nvml.nvmlDeviceGetHandleByIndex_v2(ctypes.c_uint(index), ctypes.byref(handle)):
                return None
            memory = _NvmlMemory()
            if nvml.nvmlDeviceGetMemoryInfo(handle, ctypes.byref(memory)):
                return None
            return int(memory.free)
        finally:
            nvml.nvmlShutdown()
    except (AttributeError, OSError) as exc:
        log.debug("NVML unreadable: %s", exc)
        return None
