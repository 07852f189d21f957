"""Video encoders for re-encoding exports: the hardware encoders the FFmpeg in use offers and
really runs here, and the one each export uses (with the reason).

An FFmpeg build lists NVENC, QSV, AMF, VideoToolbox and VAAPI encoders whether or not the
machine has the GPU, driver and device they need, so each listed encoder is proven with a tiny
test encode (a fifth of a second of 256x144, well under a second, failing in milliseconds where
the hardware is missing). The verdicts are cached per machine in the cache folder, keyed by the
FFmpeg binary (path, version, size, modification time), so only the first export after an
FFmpeg change pays for them. `auto` takes the first hardware family that works, in the order of
HARDWARE (the best quality at the settings below first), and libx264 (or libx265) otherwise.

Settings, chosen to be comparable to x264 `veryfast` at CRF 18 (visually transparent for
editing, a little larger files): NVENC p5 + VBR CQ 19, QSV ICQ 20, AMF CQP 18/20/22,
VideoToolbox quality 65, VAAPI CQP 19; HEVC one step lower quality numbers (same look).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from marlin_desk.core.errors import MarlinError
from marlin_desk.media.ffmpeg_bin import FFmpegBinary
from marlin_desk.media.naming import write_atomically
from marlin_desk.paths import cache_dir

# The one list of encoder choices (CLI `--encoder`, the GUI's preferences).
ENCODER_CHOICES: tuple[str, ...] = ("auto", "x264", "nvenc", "qsv", "amf", "videotoolbox",
                                    "vaapi")
DEFAULT_ENCODER = "auto"
HARDWARE: tuple[str, ...] = ("nvenc", "qsv", "videotoolbox", "amf", "vaapi")  # auto's order
VAAPI_DEVICE_ENV = "MARLIN_DESK_VAAPI_DEVICE"
DEFAULT_VAAPI_DEVICE = "/dev/dri/renderD128"
CACHE_NAME = "encoders.json"
TEST_TIMEOUT_S = 20

# Quality options per family and codec (h264 / hevc): see the module docstring.
_QUALITY: dict[str, dict[str, dict[str, Any]]] = {
    "nvenc": {"h264": {"preset": "p5", "tune": "hq", "rc": "vbr", "cq": 19, "b:v": 0},
              "hevc": {"preset": "p5", "tune": "hq", "rc": "vbr", "cq": 21, "b:v": 0}},
    "qsv": {"h264": {"preset": "medium", "global_quality": 20},
            "hevc": {"preset": "medium", "global_quality": 22}},
    "amf": {"h264": {"quality": "quality", "rc": "cqp", "qp_i": 18, "qp_p": 20, "qp_b": 22},
            "hevc": {"quality": "quality", "rc": "cqp", "qp_i": 20, "qp_p": 22, "qp_b": 24}},
    "videotoolbox": {"h264": {"q:v": 65}, "hevc": {"q:v": 60}},
    "vaapi": {"h264": {"rc_mode": "CQP", "qp": 19}, "hevc": {"rc_mode": "CQP", "qp": 21}},
}
# Software encoder options that mean nothing to a hardware encoder.
_SOFTWARE_ONLY = ("preset", "crf", "x265-params", "bf")


@dataclass(frozen=True)
class Encoder:
    """The encoder one re-encode uses, and why it was chosen."""

    name: str  # FFmpeg's name: libx264, libx265, h264_nvenc, hevc_vaapi...
    family: str  # "x264" for the software encoders, else one of HARDWARE
    why: str

    @property
    def is_hardware(self) -> bool:
        return self.family != "x264"

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "family": self.family, "why": self.why}


def hardware_name(family: str, codec: str) -> str:
    """FFmpeg's encoder name for a hardware family and a codec (h264, hevc)."""
    return f"{codec}_{family}"


def listed(binary: FFmpegBinary, codec: str) -> list[str]:
    """The hardware families whose `codec` encoder this FFmpeg build lists, in auto's order."""
    return [f for f in HARDWARE if binary.has_encoder(hardware_name(f, codec))]


def vaapi_device() -> str:
    return os.environ.get(VAAPI_DEVICE_ENV) or DEFAULT_VAAPI_DEVICE


def input_args(family: str) -> list[str]:
    """Global options the encoder needs before the first input (VAAPI: its device)."""
    return ["-vaapi_device", vaapi_device()] if family == "vaapi" else []


def upload_filters(family: str) -> list[tuple[str, dict[str, Any]]]:
    """Filters (name, options) to append to the video chain so the encoder gets its frames
    (VAAPI takes frames uploaded to the GPU; the others take ordinary ones)."""
    return [("format", {"pix_fmts": "nv12"}), ("hwupload", {})] if family == "vaapi" else []


def hardware_args(software_args: dict[str, Any], encoder: Encoder, codec: str) -> dict[str, Any]:
    """The video options for `encoder`, made from the software ones (GOP, rate caps, profile,
    pixel format and tags are kept; x264/x265 tuning is replaced by the family's quality)."""
    args = {k: v for k, v in software_args.items() if k not in _SOFTWARE_ONLY}
    args["c:v"] = encoder.name
    if encoder.family == "vaapi":
        args.pop("pix_fmt", None)  # the frames are already on the GPU in nv12
    if codec == "hevc":
        args.pop("profile:v", None)  # the family's default HEVC profile is Main
    args.update(_QUALITY[encoder.family][codec])
    return args


def test_command(binary: FFmpegBinary, family: str, codec: str) -> list[str]:
    """A tiny encode that proves the encoder runs here (output discarded)."""
    chain = ",".join(name if not opts else f"{name}=" + ":".join(f"{k}={v}" for k, v in
                                                                 opts.items())
                     for name, opts in upload_filters(family))
    cmd = [binary.path, "-hide_banner", "-nostdin", "-v", "error", *input_args(family),
           "-f", "lavfi", "-i", "testsrc2=s=256x144:r=30:d=0.2"]
    if chain:
        cmd += ["-vf", chain]
    else:
        cmd += ["-pix_fmt", "yuv420p"]
    quality = [x for k, v in _QUALITY[family][codec].items() for x in (f"-{k}", str(v))]
    return [*cmd, "-c:v", hardware_name(family, codec), *quality, "-f", "null", "-"]


def run_test(binary: FFmpegBinary, family: str, codec: str) -> str | None:
    """None when the test encode works, else the reason (FFmpeg's last error line)."""
    try:
        proc = subprocess.run(test_command(binary, family, codec), capture_output=True,
                              text=True, timeout=TEST_TIMEOUT_S, check=False)
    except subprocess.TimeoutExpired:
        return f"the test encode took more than {TEST_TIMEOUT_S} s"
    except OSError as exc:
        return f"FFmpeg could not run: {exc}"
    if proc.returncode == 0:
        return None
    lines = [ln.strip() for ln in proc.stderr.splitlines() if ln.strip()]
    # The encoder's or the device's own words ("[h264_nvenc @ 0x...] Cannot load libcuda.so.1")
    # say more than FFmpeg's closing "Error initializing output stream".
    own = [re.sub(r"^\[[^\]]+ @ 0x[0-9a-f]+\]\s*", "", ln) for ln in lines if ln.startswith("[")]
    return (own or lines or [f"exit code {proc.returncode}"])[0 if own else -1]


def verdicts(binary: FFmpegBinary, codec: str) -> dict[str, str | None]:
    """family -> None (works) or the reason it does not, for each listed family; from the
    cache when this FFmpeg was tested before, else tested now and cached."""
    key = _binary_key(binary)
    cache = _load_cache()
    entry = cache.get(key, {}).get(codec)
    families = listed(binary, codec)
    if isinstance(entry, dict) and set(entry) == set(families):
        return {f: entry[f] for f in families}
    found = {f: run_test(binary, f, codec) for f in families}
    cache.setdefault(key, {})[codec] = found
    cache[key]["checked"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    _save_cache(cache)
    return found


def choose_encoder(binary: FFmpegBinary, software: str, wanted: str = DEFAULT_ENCODER
                   ) -> Encoder:
    """The encoder for a re-encode whose software encoder would be `software` (libx264 or
    libx265); `wanted` is one of ENCODER_CHOICES."""
    if wanted not in ENCODER_CHOICES:
        raise MarlinError(f"unknown encoder {wanted!r}; use {', '.join(ENCODER_CHOICES)}")
    codec = "hevc" if software == "libx265" else "h264"
    if wanted == "x264":
        return Encoder(software, "x264", f"{software} was asked for")
    found = verdicts(binary, codec)
    candidates = HARDWARE if wanted == "auto" else (wanted,)
    failures = []
    for family in candidates:
        name = hardware_name(family, codec)
        if family not in found:
            failures.append(f"this FFmpeg has no {name}")
        elif found[family] is None:
            why = "the best hardware encoder that works here" if wanted == "auto" \
                else f"{family} was asked for"
            return Encoder(name, family, f"{why} (its test encode succeeded)")
        else:
            failures.append(f"{name} failed its test encode: {found[family]}")
    if wanted == "auto" and not found:
        reason = f"this FFmpeg lists no hardware {codec} encoder"
    elif wanted == "auto":
        reason = "no hardware encoder works here (" + "; ".join(
            f for f in failures if "has no" not in f) + ")"
    else:
        reason = failures[0]
    return Encoder(software, "x264", f"{reason}; using {software}")


def _binary_key(binary: FFmpegBinary) -> str:
    try:
        st = os.stat(binary.path)
        stamp = f"{st.st_size}:{int(st.st_mtime)}"
    except OSError:
        stamp = "?"
    return f"{binary.path}|{binary.version}|{stamp}"


def _cache_path() -> Path:
    return cache_dir() / CACHE_NAME


def _load_cache() -> dict[str, Any]:
    try:
        data = json.loads(_cache_path().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _save_cache(cache: dict[str, Any]) -> None:
    # An unwritable cache only means testing again next time.
    with contextlib.suppress(MarlinError, OSError):
        write_atomically(_cache_path(), json.dumps(cache, indent=1).encode("utf-8"),
                         overwrite=True)
