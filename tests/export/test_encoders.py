"""Hardware encoder detection on the CPU: what this FFmpeg lists, the test encode that proves an
encoder (and falls back to x264 with the reason when it fails), the per-machine cache, and the
command line each encoder gets."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from marlin_desk.media import encoders
from marlin_desk.media.clip_export import (
    ClipSpec,
    ExportOptions,
    build_command,
    export_clip,
    plan_clip,
)
from marlin_desk.media.encoders import (
    ENCODER_CHOICES,
    HARDWARE,
    Encoder,
    choose_encoder,
    hardware_name,
    listed,
    verdicts,
)
from marlin_desk.media.ffmpeg_bin import find_ffmpeg
from marlin_desk.media.probe import probe

from .conftest import Videos


@pytest.fixture()
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("MARLIN_DESK_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache" / encoders.CACHE_NAME


def test_detection_lists_what_this_ffmpeg_offers() -> None:
    binary = find_ffmpeg()
    out = subprocess.run([binary.path, "-hide_banner", "-encoders"], capture_output=True,
                         text=True, check=True).stdout
    names = {line.split()[1] for line in out.splitlines() if len(line.split()) > 1}
    for codec in ("h264", "hevc"):
        assert listed(binary, codec) == [f for f in HARDWARE if hardware_name(f, codec) in names]
    assert set(ENCODER_CHOICES) == {"auto", "x264", *HARDWARE}


def test_failed_test_encode_falls_back_to_x264_with_the_reason(cache: Path, tmp_path: Path,
                                                               monkeypatch) -> None:
    binary = find_ffmpeg()
    if "vaapi" not in listed(binary, "h264"):
        pytest.skip("this FFmpeg lists no h264_vaapi")
    monkeypatch.setenv(encoders.VAAPI_DEVICE_ENV, str(tmp_path / "no-such-device"))
    enc = choose_encoder(binary, "libx264", "vaapi")
    assert (enc.name, enc.family, enc.is_hardware) == ("libx264", "x264", False)
    assert enc.why.startswith("h264_vaapi failed its test encode: ")
    assert "no-such-device" in enc.why and enc.why.endswith("; using libx264")
    # The verdict is cached for this FFmpeg, per codec and family.
    doc = json.loads(cache.read_text())
    (entry,) = doc.values()
    assert "no-such-device" in entry["h264"]["vaapi"]
    auto = choose_encoder(binary, "libx264", "auto")
    assert auto.is_hardware or "no hardware encoder works here" in auto.why


def test_cached_verdicts_are_reused_for_the_same_ffmpeg(cache: Path, monkeypatch) -> None:
    binary = find_ffmpeg()
    families = listed(binary, "h264")
    if not families:
        pytest.skip("this FFmpeg lists no hardware H.264 encoder")
    first = verdicts(binary, "h264")
    assert set(first) == set(families)
    # Pretend the machine proved the first family: the cache, not a new test, decides.
    doc = json.loads(cache.read_text())
    key = next(iter(doc))
    doc[key]["h264"][families[0]] = None
    cache.write_text(json.dumps(doc))
    monkeypatch.setattr(encoders, "run_test", lambda *a: pytest.fail("tested again"))
    enc = choose_encoder(binary, "libx264", "auto")
    assert enc.name == hardware_name(families[0], "h264") and "test encode succeeded" in enc.why
    # Another binary (another key) is tested afresh.
    other = type(binary)(binary.path, binary.source, binary.version + "-other")
    with pytest.raises(pytest.fail.Exception):
        verdicts(other, "h264")


@pytest.mark.parametrize(("family", "codec", "want"), [
    ("nvenc", "h264", ["-c:v", "h264_nvenc", "-preset", "p5", "-rc", "vbr", "-cq", "19"]),
    ("qsv", "h264", ["-c:v", "h264_qsv", "-global_quality", "20"]),
    ("amf", "h264", ["-c:v", "h264_amf", "-rc", "cqp", "-qp_i", "18"]),
    ("videotoolbox", "h264", ["-c:v", "h264_videotoolbox", "-q:v", "65"]),
    ("vaapi", "h264", ["-vaapi_device", "first", "-c:v", "h264_vaapi", "-rc_mode", "CQP",
                       "-qp", "19"]),
    ("nvenc", "hevc", ["-c:v", "hevc_nvenc", "-cq", "21", "-tag:v", "hvc1"]),
    ("x264", "h264", ["-c:v", "libx264", "-preset", "veryfast", "-crf", "18"]),
])
def test_command_line_per_encoder(videos: Videos, tmp_path: Path, family: str, codec: str,
                                  want: list[str]) -> None:
    info = probe(str(videos.main))
    if codec == "hevc":  # an HEVC source in the original preset stays HEVC
        from dataclasses import replace
        info = replace(info, video_codec="hevc")
    spec = ClipSpec(1.0, 2.0, mode="exact", preset="original" if codec == "hevc" else "youtube")
    plan = plan_clip(str(videos.main), spec, info)
    software = "libx265" if codec == "hevc" else "libx264"
    enc = Encoder(software if family == "x264" else hardware_name(family, codec), family, "test")
    binary = find_ffmpeg()
    if codec == "hevc" and not binary.has_encoder("libx265"):
        pytest.skip("no libx265: an HEVC source is re-encoded to H.264")
    cmd = build_command(binary, str(videos.main), plan, info, tmp_path / "o.mp4",
                        ExportOptions(tmp_path), encoder=enc)
    pairs = list(zip(cmd, cmd[1:], strict=False))
    for flag, value in zip(want[::2], want[1::2], strict=False):
        if flag == "-vaapi_device":
            assert cmd.index("-vaapi_device") < cmd.index("-i")  # a global option, first
            continue
        assert (flag, value) in pairs, (flag, value, cmd)
    graph = cmd[cmd.index("-filter_complex") + 1]
    assert ("hwupload" in graph) == (family == "vaapi")
    if family != "x264":
        assert "-crf" not in cmd and "-x265-params" not in cmd
        assert ("-maxrate", "12000k") in pairs or codec == "hevc"  # the preset's cap is kept


def test_export_reports_the_encoder_and_why(videos: Videos, out_dir: Path, cache: Path) -> None:
    r = export_clip(videos.no_audio, ClipSpec(0.2, 0.6, mode="exact"),
                    ExportOptions(out_dir, encoder="x264"))
    assert r.encoder == {"name": "libx264", "family": "x264", "why": "libx264 was asked for"}
    assert r.to_json()["encoder"]["name"] == "libx264"
    fast = export_clip(videos.no_audio, ClipSpec(0.0, 0.6, mode="fast"), ExportOptions(out_dir))
    assert fast.encoder is None  # a copy encodes nothing


def test_cli_encoder_choice_is_reported(videos: Videos, out_dir: Path, cache: Path,
                                        capsys) -> None:
    from marlin_desk.cli.main import main

    binary = find_ffmpeg()
    if "nvenc" not in listed(binary, "h264") or verdicts(binary, "h264")["nvenc"] is None:
        pytest.skip("needs an FFmpeg that lists NVENC on a machine where it does not run")
    rc = main(["export", str(videos.no_audio), "--clip", "0.2-0.6", "--mode", "exact",
               "--encoder", "nvenc", "--out", str(out_dir), "--json"])
    (clip,) = json.loads(capsys.readouterr().out)["clips"]
    assert rc == 0 and clip["encoder"]["name"] == "libx264"
    assert clip["encoder"]["why"].startswith("h264_nvenc failed its test encode")
    assert main(["export", str(videos.no_audio), "--clip", "0.2-0.6", "--mode", "exact",
                 "--encoder", "nvenc", "--out", str(out_dir)]) == 0
    assert "encoder libx264: h264_nvenc failed its test encode" in capsys.readouterr().err
