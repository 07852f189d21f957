"""The audio of an exported clip: its channels, its level, and loudness normalisation.

The level is kept unless loudness normalisation is asked for. FFmpeg's own channel conversion
(`-ac 2`) spreads a mono channel over two at -3 dB each (constant power, libswresample's
M_SQRT1_2), so a mono source upmixed by a stereo preset played 3 dB quieter (issue #20, defect
10). So: the layout is kept (mono stays mono, stereo stays stereo) unless the export asks for
other channels, the social presets only bring more than two channels down to stereo (FFmpeg's
standard downmix), and a mono/stereo conversion is an explicit `pan` at full level: mono to
stereo copies the channel into both, stereo to mono averages the two.

Loudness (`ExportOptions.loudness`, a target in LUFS) is FFmpeg's `loudnorm` in two passes:
the clip's audio is measured first (print_format=json), then normalised with the measured
values and linear=true, a plain gain that lands on the target, with the true peak held at
TRUE_PEAK_DB. Where that gain would push the peak above the limit (or the loudness range is
wider than loudnorm's linear mode takes) loudnorm itself falls back to its dynamic mode, which
still lands within about 1 LU; the result says which method ran. A clip without audio or with
silent audio is written as it is, with a note.

The choices are defined once here (LOUDNESS_TARGETS, AUDIO_CHANNEL_CHOICES, AUDIO_BITRATES):
the CLI and the GUI read them.
"""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from marlin_desk.core.errors import BadInput, Cancelled, MarlinError

if TYPE_CHECKING:  # the CLI reads the vocabulary below without loading PyAV
    from marlin_desk.media.export_run import CancelToken
    from marlin_desk.media.ffmpeg_bin import FFmpegBinary
    from marlin_desk.media.presets import Preset
    from marlin_desk.media.probe import VideoInfo

# Loudness targets (integrated LUFS; None keeps the source level), label -> value.
LOUDNESS_TARGETS: dict[str, float | None] = {
    "keep": None,
    "social (-14 LUFS)": -14.0,  # YouTube, Instagram, TikTok, Spotify
    "podcast (-16 LUFS)": -16.0,  # Apple Podcasts / AES streaming
    "broadcast (-23 LUFS)": -23.0,  # EBU R128
}
LOUDNESS_MIN, LOUDNESS_MAX = -70.0, -5.0  # what loudnorm accepts
TRUE_PEAK_DB = -1.0
DEFAULT_LRA = 11.0  # loudness range target; raised to the measured one (linear mode needs it)
_MAX_LRA = 20.0  # loudnorm's limit in FFmpeg 5.1

# Output channels, label -> count (None keeps the source's layout).
AUDIO_CHANNEL_CHOICES: dict[str, int | None] = {"keep": None, "mono": 1, "stereo": 2}
# AAC bit rates offered (kbps); ExportOptions.audio_kbps None uses the preset's (192).
AUDIO_BITRATES: tuple[int, ...] = (96, 128, 160, 192, 256, 320)

SILENCE_LUFS = -70.0  # below this the audio counts as silent (loudnorm's gate)


def parse_loudness(text: str | float | None) -> float | None:
    """A loudness target from a CLI/GUI value: "keep"/None, a label of LOUDNESS_TARGETS, or a
    number of LUFS (-14, "-16", "-23.5")."""
    if text is None:
        return None
    if isinstance(text, str):
        key = text.strip()
        if key.casefold() in ("keep", "none", "off", ""):
            return None
        if key in LOUDNESS_TARGETS:
            return LOUDNESS_TARGETS[key]
        try:
            value = float(key)
        except ValueError:
            raise BadInput(f"bad loudness {text!r}: use keep or a target in LUFS such as -14, "
                           "-16 or -23") from None
    else:
        value = float(text)
    return check_loudness(value)


def check_loudness(value: float | None) -> float | None:
    if value is None:
        return None
    if not (math.isfinite(value) and LOUDNESS_MIN <= value <= LOUDNESS_MAX):
        raise BadInput(f"loudness target {value:g} LUFS is out of range "
                       f"({LOUDNESS_MIN:g} to {LOUDNESS_MAX:g})")
    return float(value)


def parse_channels(text: str | int | None) -> int | None:
    """Output channels from "keep"/None, "mono"/"stereo" or 1/2."""
    if text is None:
        return None
    key = str(text).strip().casefold()
    if key in AUDIO_CHANNEL_CHOICES:
        return AUDIO_CHANNEL_CHOICES[key]
    if key in ("1", "2"):
        return int(key)
    raise BadInput(f"bad audio channels {text!r}: use keep, 1 (mono) or 2 (stereo)")


def check_options(loudness: float | None, channels: int | None, kbps: int | None) -> None:
    """BadInput when an export's audio options make no sense."""
    check_loudness(loudness)
    if channels not in (None, 1, 2):
        raise BadInput(f"bad audio channels {channels!r}: use None (keep), 1 or 2")
    if kbps is not None and not 32 <= kbps <= 512:
        raise BadInput(f"audio bit rate {kbps} kbps is out of range (32 to 512)")


Filter = tuple[str, dict[str, Any]]  # an FFmpeg audio filter: name, options


@dataclass(frozen=True)
class AudioPlan:
    """How one clip's audio is written (has_audio False: there is none)."""

    has_audio: bool
    source_channels: int  # 0 when unknown
    channels: int  # the output's (0 when unknown: FFmpeg keeps the source's)
    filters: tuple[Filter, ...]  # after the cut, before the encoder
    encode: dict[str, Any]  # AAC encoder options for a re-encode
    reshapes: bool  # the channels or the sample rate change
    loudness: dict[str, Any] | None = None  # target, input, method (filled once measured)
    note: str | None = None

    @property
    def changes(self) -> bool:
        """The audio itself changes (channels, rate, loudness): it cannot be copied."""
        return self.reshapes or any(name == "loudnorm" for name, _ in self.filters)

    def to_json(self) -> dict[str, Any]:
        return {"channels": self.channels or None, "source_channels": self.source_channels or None,
                "loudness": self.loudness, "note": self.note}


def plan_audio(preset: Preset, info: VideoInfo, *, channels: int | None = None,
               kbps: int | None = None, loudness: float | None = None) -> AudioPlan:
    """The channels, filters and encoder options of a clip's audio (loudness not yet
    measured: with_loudnorm adds it)."""
    if not info.has_audio:
        note = "the video has no audio" + (", so loudness is not normalised"
                                           if loudness is not None else "")
        return AudioPlan(False, 0, 0, (), {}, False, note=note)
    src = info.audio_channels
    want = channels
    if want is None and preset.max_audio_channels and src > preset.max_audio_channels:
        want = preset.max_audio_channels
    encode: dict[str, Any] = {"c:a": "aac", "profile:a": "aac_low",
                              "b:a": f"{kbps or preset.audio_kbps}k"}
    filters: list[Filter] = []
    out = src
    if want is not None and want != src:
        out = want
        if src == 1 and want == 2:  # both channels at the source's level
            filters.append(("pan", {"args": "stereo|c0=c0|c1=c0"}))
        elif src == 2 and want == 1:  # the average: the level of identical channels kept
            filters.append(("pan", {"args": "mono|c0=0.5*c0+0.5*c1"}))
        else:  # more channels (or an unknown count): FFmpeg's standard downmix
            encode["ac"] = want
    rate = preset.audio_rate
    if loudness is not None and not rate:
        rate = info.audio_sample_rate or 48_000  # loudnorm works (and outputs) at 192 kHz
    if rate:
        encode["ar"] = rate
    reshapes = out != src or bool(preset.audio_rate
                                  and preset.audio_rate != info.audio_sample_rate)
    plan = AudioPlan(True, src, out, tuple(filters), encode, reshapes)
    if loudness is not None:
        plan = replace(plan, loudness={"target": loudness})
    return plan


def with_loudnorm(plan: AudioPlan, measured: dict[str, float] | None) -> AudioPlan:
    """The plan with the second loudnorm pass added, given the first pass's measurement (None
    when it could not be measured); silent audio is left as it is, with a note."""
    if plan.loudness is None:
        return plan
    target = plan.loudness["target"]
    if measured is None:
        return replace(plan, loudness=None,
                       note="the audio could not be measured, so loudness is not normalised")
    if not math.isfinite(measured["I"]) or measured["I"] < SILENCE_LUFS:
        return replace(plan, loudness=None,
                       note="the audio is silent, so loudness is not normalised")
    lra = min(_MAX_LRA, max(DEFAULT_LRA, math.ceil(measured["LRA"] * 10 + 1) / 10))
    gain = target - measured["I"]
    linear = measured["TP"] + gain <= TRUE_PEAK_DB and measured["LRA"] <= lra
    opts = {"I": f"{target:g}", "TP": f"{TRUE_PEAK_DB:g}", "LRA": f"{lra:g}",
            "measured_I": f"{measured['I']:.2f}", "measured_LRA": f"{measured['LRA']:.2f}",
            "measured_TP": f"{measured['TP']:.2f}", "measured_thresh": f"{measured['thresh']:.2f}",
            "offset": f"{measured['offset']:.2f}", "linear": "true", "print_format": "none"}
    method = ("two-pass linear (one gain for the whole clip)" if linear else
              "two-pass dynamic (a plain gain would push the true peak above "
              f"{TRUE_PEAK_DB:g} dBTP or the range is too wide, so loudnorm compresses)")
    loud = {"target": target, "input": _rounded(measured), "method": method,
            "gain_db": round(gain, 2)}
    return replace(plan, filters=(*plan.filters, ("loudnorm", opts)), loudness=loud)


def filter_text(filters: tuple[Filter, ...]) -> str:
    """The filters as an FFmpeg -af chain."""
    return ",".join(name + ("=" + ":".join(f"{k}={_escape(str(v))}" for k, v in opts.items())
                            if opts else "") for name, opts in filters)


def _escape(value: str) -> str:
    return re.sub(r"([\\':,;\[\]])", r"\\\1", value)


def measure_loudness(binary: FFmpegBinary, path: str, *, start: float | None = None,
                     duration: float | None = None, filters: tuple[Filter, ...] = (),
                     target: float = -14.0,
                     cancel: CancelToken | None = None) -> dict[str, float] | None:
    """loudnorm's first-pass measurement of the first audio stream of `path` (from `start`,
    an absolute timestamp, for `duration` seconds; after `filters`): I (LUFS), LRA (LU),
    TP (dBTP), thresh and offset; None when FFmpeg gives none. Raises Cancelled (FFmpeg
    stopped) as soon as `cancel` is set."""
    cmd = [binary.path, "-hide_banner", "-nostdin", "-nostats", "-v", "info"]
    if start is not None:
        cmd += ["-seek_timestamp", "1", "-ss", f"{start:.6f}"]
    if duration is not None:
        cmd += ["-t", f"{duration:.6f}"]
    first = ("loudnorm", {"I": f"{target:g}", "TP": f"{TRUE_PEAK_DB:g}",
                          "LRA": f"{DEFAULT_LRA:g}", "print_format": "json"})
    cmd += ["-i", "file:" + os.path.abspath(path), "-map", "0:a:0", "-vn", "-sn", "-dn",
            "-af", filter_text((*filters, first)), "-f", "null", "-"]
    try:
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, text=True, errors="replace",
                                creationflags=getattr(subprocess, "CREATE_NO_WINDOW", 0))
    except OSError as exc:
        raise MarlinError(f"measuring the loudness failed: {exc}") from None
    try:
        while True:
            if cancel is not None and cancel.is_set():
                raise Cancelled("export cancelled")
            try:
                _, stderr = proc.communicate(timeout=0.1)
                break
            except subprocess.TimeoutExpired:
                continue
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    return parse_loudnorm_json(stderr)


def parse_loudnorm_json(stderr: str) -> dict[str, float] | None:
    """The measurement loudnorm prints (print_format=json) as floats; None if absent."""
    blocks = re.findall(r"\{[^{}]*\"input_i\"[^{}]*\}", stderr)
    if not blocks:
        return None
    try:
        doc = json.loads(blocks[-1])
        return {"I": float(doc["input_i"]), "LRA": float(doc["input_lra"]),
                "TP": float(doc["input_tp"]), "thresh": float(doc["input_thresh"]),
                "offset": float(doc.get("target_offset", 0.0))}
    except (KeyError, TypeError, ValueError):
        return None


def _rounded(measured: dict[str, float]) -> dict[str, float | None]:
    return {k: round(v, 2) if math.isfinite(v) else None for k, v in measured.items()
            if k in ("I", "LRA", "TP")}


def output_loudness(binary: FFmpegBinary, path: str, target: float,
                    cancel: CancelToken | None = None) -> dict[str, float | None]:
    """I, LRA and TP of a written file's audio (the check of a normalised clip)."""
    measured = measure_loudness(binary, path, target=target, cancel=cancel)
    return {} if measured is None else _rounded(measured)
