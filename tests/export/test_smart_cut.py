"""Smart cut (`smart` mode) against the files it writes: every frame is the right source frame
(re-encoded ones nearly, copied ones exactly), the frame count and duration are exact, the codec,
profile and pixel format are the source's, the audio starts in sync, the whole clip decodes
without one error; and sources it cannot match fall back to `exact` with the reason."""

from __future__ import annotations

import contextlib
import math
import subprocess
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

import av
import numpy as np
import pytest

from marlin_desk.media.clip_export import ClipSpec, ExportOptions, export_clip
from marlin_desk.media.ffmpeg_bin import find_ffmpeg
from marlin_desk.media.presets import MODES, PRESETS, default_mode
from marlin_desk.media.probe import probe
from marlin_desk.media.smart_cut import smart_blocker

from .conftest import Videos, _ffmpeg
from .verify import diff, ffprobe_json, frames, stream


@dataclass(frozen=True)
class Case:
    video: list[str]  # encoder arguments
    fps: str = "25"
    audio: bool = True
    extra: tuple[str, ...] = ()  # output options (offsets)
    rotate: bool = False
    clip: tuple[float, float] = (1.3, 3.5)
    needs: str = "libx264"
    ext: str = ".mp4"
    audio_offset: float = 0.0
    acodec: tuple[str, ...] = ("-c:a", "aac", "-b:a", "128k")  # AAC is copied, others encoded


X264 = ["-c:v", "libx264", "-preset", "veryfast", "-sc_threshold", "0"]
X265 = ["-c:v", "libx265", "-preset", "veryfast", "-tag:v", "hvc1"]
CASES = {
    # High profile with B-frames (pyramid): a head, a copy and a re-encoded tail.
    "h264-high-bframes": Case([*X264, "-profile:v", "high", "-bf", "3", "-g", "25",
                               "-pix_fmt", "yuv420p"]),
    # Baseline (no B-frames) at 29.97 fps, no audio: the copy ends exactly on the out-point.
    "h264-baseline-29.97": Case([*X264, "-profile:v", "baseline", "-g", "30",
                                 "-pix_fmt", "yuv420p"], fps="30000/1001", audio=False,
                                clip=(0.5, 3.0)),
    "hevc-8bit": Case([*X265, "-pix_fmt", "yuv420p", "-x265-params",
                       "keyint=25:min-keyint=25:open-gop=0:log-level=error"],
                      clip=(0.7, 3.3), needs="libx265"),
    "hevc-10bit": Case([*X265, "-pix_fmt", "yuv420p10le", "-x265-params",
                        "keyint=25:min-keyint=25:open-gop=0:log-level=error"], audio=False,
                       clip=(0.7, 3.3), needs="libx265"),
    # Timestamps that start at 3 s (an MP4 edit list), Main profile.
    "start-offset": Case([*X264, "-profile:v", "main", "-g", "25", "-pix_fmt", "yuv420p"],
                         extra=("-output_ts_offset", "3"), clip=(1.1, 3.0)),
    # Matroska (no decode times stored, millisecond times at 29.97 fps), full-range BT.709
    # tags, FLAC sound (re-encoded to AAC from the first frame's time).
    "mkv-bt709-full-range": Case([*X264, "-profile:v", "high", "-bf", "2", "-g", "30",
                                  "-pix_fmt", "yuvj420p", "-color_primaries", "bt709",
                                  "-color_trc", "bt709", "-colorspace", "bt709"],
                                 fps="30000/1001", clip=(0.7, 3.3), ext=".mkv",
                                 acodec=("-c:a", "flac")),
    # Sound that starts 0.5 s after the picture: the clip keeps the offset.
    "audio-starts-late": Case([*X264, "-profile:v", "high", "-g", "25", "-pix_fmt", "yuv420p"],
                              audio_offset=0.5, clip=(0.2, 2.5)),
    # A phone video: a display matrix turning it 90 degrees, kept as it is.
    "rotated": Case([*X264, "-profile:v", "high", "-g", "25", "-pix_fmt", "yuv420p"],
                    rotate=True, clip=(0.5, 2.5)),
}


def _make(case: Case, path: Path) -> None:
    audio = ["-itsoffset", str(case.audio_offset), "-f", "lavfi", "-i",
             "anoisesrc=d=4:c=pink:seed=7:a=0.5:r=48000"] if case.audio else []
    acodec = list(case.acodec) if case.audio else []
    target = path.with_name("plain.mp4") if case.rotate else path
    _ffmpeg("-f", "lavfi", "-i", f"testsrc2=s=320x240:r={case.fps}:d=4", *audio, *case.video,
            *acodec, *case.extra, "-shortest", str(target))
    if case.rotate:  # as conftest: FFmpeg 5.1 turns the tag into a display matrix
        with contextlib.suppress(subprocess.CalledProcessError):
            _ffmpeg("-i", str(target), "-c", "copy", "-metadata:s:v:0", "rotate=90", str(path))
        if not path.exists() or not probe(str(path)).rotation:
            path.unlink(missing_ok=True)
            _ffmpeg("-display_rotation", "90", "-i", str(target), "-c", "copy", str(path))


@pytest.fixture(scope="module")
def sources(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return {name: tmp_path_factory.mktemp(name) / f"source{case.ext}"
            for name, case in CASES.items()}


def _source(sources: dict[str, Path], name: str) -> Path:
    case = CASES[name]
    if not find_ffmpeg().has_encoder(case.needs):
        pytest.skip(f"this FFmpeg has no {case.needs}")
    path = sources[name]
    if not path.exists():
        _make(case, path)
    return path


def _audio(path: Path, start: float | None, seconds: float) -> tuple[np.ndarray, int, float]:
    """(mono samples from `start` on, sample rate, time of the first decoded sample), times on
    the file's own clock; `start` None: from the first sample."""
    with av.open(str(path)) as c:
        s = c.streams.audio[0]
        rate = s.codec_context.sample_rate
        chunks, first = [], None
        for frame in c.decode(s):
            data = frame.to_ndarray().astype(np.float64)
            data = data.reshape(-1) if data.shape[0] == 1 else data.mean(axis=0)
            if first is None:
                first = float(frame.pts * frame.time_base)
            chunks.append(data)
    samples = np.concatenate(chunks)
    i = 0 if start is None else round((start - first) * rate)
    assert i >= 0
    return samples[i:i + round(seconds * rate)], rate, first


def _lag_ms(ref: np.ndarray, got: np.ndarray, rate: int) -> float:
    """Where `got` best lines up inside `ref`, in ms from the start of `ref`."""
    corr = np.correlate(ref, got, mode="valid")
    return int(np.argmax(corr)) * 1000 / rate


@pytest.mark.parametrize("name", list(CASES))
def test_smart_cut_is_frame_exact_and_decodes_cleanly(name: str, sources, out_dir: Path,
                                                      ffprobe) -> None:
    src = _source(sources, name)
    case = CASES[name]
    a, b = case.clip
    info = probe(str(src))
    r = export_clip(src, ClipSpec(a, b, mode="smart"), ExportOptions(out_dir))
    assert (r.mode_used, r.fallback) == ("smart", None)
    assert r.smart["copied_s"] > 0.9 and r.smart["reencoded_head_s"] > 0
    if name == "h264-high-bframes":  # a B-frame before the out-point needs a later reference
        assert r.smart["reencoded_tail_s"] > 0
    if name == "h264-baseline-29.97":  # no B-frames: the copy stops on the out-point itself
        assert r.smart["reencoded_tail_s"] == 0
    fps = Fraction(case.fps)
    frame = float(1 / fps)
    src_frames = frames(src)
    times = [t - info.start_time for t, _ in src_frames]
    first = next(i for i, t in enumerate(times) if t >= a - 0.0005)
    expected = [i for i in range(first, len(times)) if times[i] < b - 0.0005]
    out = frames(r.path)
    assert len(out) == len(expected)
    head = round(r.smart["reencoded_head_s"] * float(fps))
    for i, (_, img) in enumerate(out):
        k = expected[i]
        near = {j: src_frames[j][1] for j in (k - 1, k, k + 1) if 0 <= j < len(src_frames)}
        assert min(near, key=lambda j: diff(img, near[j])) == k, f"frame {i}"
        if head <= i < head + round(r.smart["copied_s"] * float(fps)):
            assert diff(img, src_frames[k][1]) < 0.01, f"copied frame {i} is not the source's"
    assert abs(r.real_duration - (b - a)) <= frame + 1e-6
    assert r.real_duration == pytest.approx(len(expected) * frame, abs=1e-3)
    src_doc, out_doc = ffprobe_json(ffprobe, src), ffprobe_json(ffprobe, r.path)
    sv, ov = stream(src_doc, "video"), stream(out_doc, "video")
    for key in ("codec_name", "profile", "pix_fmt", "width", "height", "color_range",
                "color_space", "color_transfer", "color_primaries", "sample_aspect_ratio"):
        assert ov.get(key) == sv.get(key), key
    assert probe(str(r.path)).rotation == info.rotation
    if case.audio:
        assert r.smart["audio"] == ("copied" if "aac" in case.acodec else "aac")
        t_first = info.start_time + times[first]  # container time of the clip's first frame
        _, rate, src_audio = _audio(src, None, 0)
        out_audio = _audio(r.path, None, 0)[2] - probe(str(r.path)).start_time
        offset = max(0.0, src_audio - t_first)
        # Sound that starts after the in-point keeps its offset, give or take the encoder's
        # priming (one AAC frame, which the MP4 edit list cannot hide after an empty edit).
        tolerance = 0.001 if offset == 0 else 1024 / rate + 0.001
        assert abs(out_audio - offset) <= tolerance  # the start offset
        # The sound under the picture is the source's sound at the same time, to 1 ms.
        t = max(t_first, src_audio) + 0.05
        ref, rate, _ = _audio(src, t - 0.01, 0.6)
        got, _, _ = _audio(r.path, probe(str(r.path)).start_time + t - t_first, 0.3)
        assert abs(_lag_ms(ref, got, rate) - 10.0) <= 1.0
        oa = stream(out_doc, "audio")
        assert float(oa["duration"]) == pytest.approx(r.real_duration - out_audio, abs=0.03)
    errors = subprocess.run([find_ffmpeg().path, "-v", "error", "-i", str(r.path), "-f", "null",
                             "-"], capture_output=True, text=True, check=True).stderr
    assert errors.strip() == ""


def test_clip_on_a_keyframe_is_a_pure_copy(sources, out_dir: Path) -> None:
    src = _source(sources, "h264-high-bframes")
    r = export_clip(src, ClipSpec(1.0, 4.0, mode="smart"), ExportOptions(out_dir))
    assert r.mode_used == "smart" and r.smart["reencoded_head_s"] == 0
    assert r.smart["reencoded_tail_s"] == 0  # to the end of the video: nothing to cut after
    assert len(frames(r.path)) == 75


@pytest.mark.parametrize(("make", "clip", "reason"), [
    ("vfr", (0.5, 2.5), "variable frame rate"),
    ("one-gop", (1.1, 1.8), "no keyframe between"),
    ("open-gop", (0.7, 3.3), "open GOP"),
])
def test_unsuitable_sources_fall_back_to_exact(make: str, clip, reason: str, videos: Videos,
                                               sources, tmp_path: Path, out_dir: Path) -> None:
    if make == "vfr":
        src = videos.vfr
    elif make == "one-gop":
        src = _source(sources, "h264-high-bframes")
    else:
        src = tmp_path / "open-gop.mp4"
        _ffmpeg("-f", "lavfi", "-i", "testsrc2=s=320x240:r=25:d=4", *X264, "-bf", "3",
                "-g", "25", "-x264-params", "open-gop=1", "-pix_fmt", "yuv420p", str(src))
    r = export_clip(src, ClipSpec(*clip), ExportOptions(out_dir))  # smart is the default
    assert r.spec.mode == "smart" and r.mode_used == "exact"
    assert reason in r.fallback
    doc = r.to_json()
    assert doc["mode_used"] == "exact" and reason in doc["fallback_reason"]
    n = len(frames(r.path))
    assert abs(n - (clip[1] - clip[0]) * probe(str(r.path)).fps) <= 1


def test_mode_vocabulary_and_defaults(videos: Videos) -> None:
    assert MODES == ("exact", "smart", "fast")
    assert default_mode("original") == "smart"
    assert {default_mode(p) for p in PRESETS if p != "original"} == {"exact"}
    info = probe(str(videos.main))
    binary = find_ffmpeg()
    assert smart_blocker(PRESETS["original"], "none", info, binary) is None
    assert "resizes" in smart_blocker(PRESETS["reels"], "none", info, binary)
    assert "burned" in smart_blocker(PRESETS["original"], "burn", info, binary)
    assert math.isclose(info.fps, 25)


def test_cli_defaults_to_smart_and_reports_a_fallback(sources, videos: Videos, out_dir: Path,
                                                      capsys) -> None:
    import json

    from marlin_desk.cli.main import main

    src = _source(sources, "h264-high-bframes")
    assert main(["export", str(src), "--clip", "1.3-3.5", "--out", str(out_dir), "--json"]) == 0
    (clip,) = json.loads(capsys.readouterr().out)["clips"]
    assert (clip["mode"], clip["mode_used"], clip["fallback_reason"]) == ("smart", "smart", None)
    assert clip["smart"]["keyframe"] == 2.0 and clip["smart"]["encoder"] == "libx264"
    assert main(["export", str(videos.vfr), "--clip", "0.5-1.5", "--out", str(out_dir)]) == 0
    captured = capsys.readouterr()
    assert captured.out.strip().endswith(".mp4")
    assert "no smart cut, re-encoded in exact mode: the video has a variable frame rate" \
        in captured.err
