"""Smart cut: what a re-encoded segment must share with the copied stream, and the encoder
options that give it.

A decoder meets the re-encoded frames and the copied ones in one stream, so the two must agree
on everything a decoder sets up once: codec, profile and level, pixel format (bit depth and
chroma), coded size, sample aspect ratio, colour tags, progressive frames and the time base.
Each segment starts with its own parameter sets (SPS/PPS, and the VPS in HEVC) written in-band
by the join, so the two sets of headers never need to be identical, only compatible.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from fractions import Fraction
from typing import Any


class SmartFallback(Exception):  # noqa: N818 - a reason, not an error: the clip is re-encoded
    """Smart cut is not possible or not right for this clip; the message says why."""

# Source profile (PyAV's name) -> (encoder profile, pixel formats it takes).
_X264_PROFILES: dict[str, tuple[str, frozenset[str]]] = {
    "Constrained Baseline": ("baseline", frozenset({"yuv420p", "yuvj420p"})),
    "Baseline": ("baseline", frozenset({"yuv420p", "yuvj420p"})),
    "Main": ("main", frozenset({"yuv420p", "yuvj420p"})),
    "High": ("high", frozenset({"yuv420p", "yuvj420p"})),
    "High 10": ("high10", frozenset({"yuv420p10le"})),
    "High 4:2:2": ("high422", frozenset({"yuv422p", "yuvj422p", "yuv422p10le"})),
    "High 4:4:4 Predictive": ("high444", frozenset({"yuv444p", "yuvj444p"})),
}
_X265_PROFILES: dict[str, tuple[str, frozenset[str]]] = {
    "Main": ("main", frozenset({"yuv420p", "yuvj420p"})),
    "Main 10": ("main10", frozenset({"yuv420p10le"})),
}
_UNSPECIFIED = 2  # AVCOL_PRI/TRC/SPC_UNSPECIFIED


@dataclass(frozen=True)
class StreamParams:
    """The decoder-relevant settings of one H.264/HEVC stream (from PyAV, no decoding)."""

    codec: str
    profile: str
    level: int  # level_idc as coded: 40 = H.264 level 4.0, 123 = HEVC level 4.1
    tier: int  # HEVC high tier flag (0 for H.264)
    pix_fmt: str
    width: int
    height: int
    sar: Fraction
    color_primaries: int
    color_trc: int
    colorspace: int
    color_range: int
    progressive: bool
    time_base: Fraction
    length_size: int  # bytes of each NAL unit's length prefix
    extradata: bytes

    def check_suitable(self) -> None:
        """SmartFallback when this stream cannot be matched by our encoders."""
        table = _X264_PROFILES if self.codec == "h264" else _X265_PROFILES
        if self.profile not in table:
            raise SmartFallback(f"the {self.codec} profile {self.profile!r} is not one the "
                                "encoder can match")
        if self.pix_fmt not in table[self.profile][1]:
            raise SmartFallback(f"the pixel format {self.pix_fmt} does not fit the "
                                f"{self.profile} profile")
        if not self.progressive:
            raise SmartFallback("the video is interlaced")
        if not self.extradata or self.extradata[0] != 1:
            raise SmartFallback("the video's parameter sets are in the stream itself (Annex B, "
                                "e.g. MPEG-TS), not in the container")
        if self.time_base.numerator != 1:
            raise SmartFallback(f"the time base {self.time_base} cannot be reproduced by a "
                                "re-encode")

    def mismatch(self, other: StreamParams) -> str | None:
        """Why a re-encoded segment with `other`'s settings cannot join this stream, or None."""
        skip = {"extradata", "length_size", "time_base", "profile"}
        for f in fields(self):
            if f.name in skip:
                continue
            mine, theirs = getattr(self, f.name), getattr(other, f.name)
            if mine != theirs:
                return f"the re-encoded frames have {f.name} {theirs}, the source {mine}"
        baseline = {"Baseline", "Constrained Baseline"}
        same_profile = other.profile == self.profile or (
            self.profile == "Baseline" and other.profile in baseline)
        if not same_profile:
            return f"the re-encoded frames have profile {other.profile}, the source {self.profile}"
        if other.length_size != self.length_size:
            return "the re-encoded frames use another NAL length size"
        return None

    def parameter_sets(self) -> list[bytes]:
        """The SPS/PPS (H.264) or VPS/SPS/PPS (HEVC) NAL units from the container's record."""
        return _avcc_sets(self.extradata) if self.codec == "h264" else _hvcc_sets(self.extradata)


def stream_params(stream: Any) -> StreamParams:
    """The settings of a PyAV video stream, from its header and extradata."""
    cc = stream.codec_context
    data = bytes(cc.extradata or b"")
    codec = cc.name
    is_record = bool(data) and data[0] == 1
    if codec == "h264":
        level = cc.level if cc.level and cc.level > 0 else (data[3] if len(data) > 3 else 0)
        length = (data[4] & 3) + 1 if is_record and len(data) > 4 else 4
        tier = 0
    else:
        level = cc.level if cc.level and cc.level > 0 else (data[12] if len(data) > 12 else 0)
        length = (data[21] & 3) + 1 if is_record and len(data) > 21 else 4
        tier = (data[1] >> 5) & 1 if is_record and len(data) > 1 else 0
    sar = stream.sample_aspect_ratio or cc.sample_aspect_ratio or Fraction(1)
    return StreamParams(
        codec=codec, profile=str(cc.profile or ""), level=int(level), tier=tier,
        pix_fmt=str(cc.pix_fmt or ""), width=cc.width, height=cc.height,
        sar=Fraction(sar) if sar else Fraction(1),
        color_primaries=int(cc.color_primaries), color_trc=int(cc.color_trc),
        colorspace=int(cc.colorspace), color_range=int(cc.color_range),
        progressive=int(cc.field_order or 0) in (0, 1), time_base=Fraction(stream.time_base),
        length_size=length, extradata=data)


def encoder_args(src: StreamParams, speed: str) -> list[str]:
    """Encoder options (after `-c:v`) for frames that join `src`: same profile, level, pixel
    format and colour tags, and no B-frames (so decode order is display order and the join can
    give each frame the copied stream's decode delay)."""
    args = ["-preset", speed, "-pix_fmt", src.pix_fmt]
    for name, value in (("color_primaries", src.color_primaries), ("color_trc", src.color_trc),
                        ("colorspace", src.colorspace)):
        if value != _UNSPECIFIED:
            args += [f"-{name}", str(value)]
    if src.color_range:
        args += ["-color_range", str(src.color_range)]
    if src.codec == "h264":
        profile = _X264_PROFILES[src.profile][0]
        level = "1b" if src.level == 9 else f"{src.level / 10:.1f}"
        return ["libx264", *args, "-crf", "18", "-profile:v", profile, "-level:v", level,
                "-bf", "0"]
    profile = _X265_PROFILES[src.profile][0]
    x265 = (f"log-level=error:bframes=0:level-idc={src.level / 30:.1f}:"
            f"high-tier={src.tier}")
    return ["libx265", *args, "-crf", "20", "-profile:v", profile, "-x265-params", x265]


def _avcc_sets(data: bytes) -> list[bytes]:
    out: list[bytes] = []
    i = 5
    for mask in (0x1F, 0xFF):  # SPS count in the low 5 bits, then a PPS count byte
        count = data[i] & mask
        i += 1
        for _ in range(count):
            size = int.from_bytes(data[i:i + 2], "big")
            out.append(data[i + 2:i + 2 + size])
            i += 2 + size
    return out


def _hvcc_sets(data: bytes) -> list[bytes]:
    out: list[bytes] = []
    arrays = data[22]
    i = 23
    for _ in range(arrays):
        kind = data[i] & 0x3F
        count = int.from_bytes(data[i + 1:i + 3], "big")
        i += 3
        for _ in range(count):
            size = int.from_bytes(data[i:i + 2], "big")
            if kind in (32, 33, 34):  # VPS, SPS, PPS (SEI arrays are left out)
                out.append(data[i + 2:i + 2 + size])
            i += 2 + size
    return out
