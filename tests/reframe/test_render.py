"""Reframed exports through real FFmpeg, measured in the written file.

Each exported frame is scaled back to the crop's size and found again in the known source frame
by matching (dev.reframe_videos.locate_crop): that is where the crop really was. The checks: the
crop is where the path says (the preview shows what the export renders), the face's known box
is inside it in at least 95 % of frames, it does not move while the face sits still, it jumps at
the cut, and a video without a face gets the centre crop. ffprobe reads the size back.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import av
import numpy as np
import pytest
from PIL import Image

from marlin_desk.core.reframe import Pin
from marlin_desk.dev.reframe_videos import ReframeTruth, locate_crop
from marlin_desk.media.clip_export import ClipSpec, ExportOptions, export_clip
from marlin_desk.media.ffmpeg_bin import find_ffmpeg
from marlin_desk.media.presets import get_preset
from marlin_desk.media.probe import probe
from marlin_desk.media.reframe import clip_path

from .conftest import Footage


def _ffprobe_size(path: Path) -> tuple[int, int]:
    ffprobe = str(Path(find_ffmpeg().path).with_name("ffprobe"))
    doc = json.loads(subprocess.run(
        [ffprobe, "-v", "error", "-select_streams", "v:0", "-show_entries",
         "stream=width,height", "-of", "json", str(path)],
        capture_output=True, text=True, check=True).stdout)
    return doc["streams"][0]["width"], doc["streams"][0]["height"]


def _measured(out: Path, truth: ReframeTruth, crop_w: int, crop_h: int, first: float,
              every: int = 1) -> list[tuple[float, int]]:
    """(video time, measured crop x) of the exported frames."""
    found = []
    with av.open(str(out)) as container:
        for i, frame in enumerate(container.decode(video=0)):
            if i % every:
                continue
            t = first + float(frame.time)
            small = frame.to_ndarray(width=crop_w, height=crop_h, format="rgb24")
            x, _ = locate_crop(small, truth.frame_at(t), crop_w, crop_h)
            found.append((t, x))
    return found


def _export(video: Path, tmp_path: Path, **kwargs: object) -> tuple[Path, dict[str, object]]:
    info = probe(str(video))
    spec = ClipSpec(0.0, info.duration, preset="reels", mode="exact", **kwargs)  # type: ignore[arg-type]
    result = export_clip(video, spec, ExportOptions(tmp_path, encoder="x264"), info=info)
    assert result.path is not None and result.reframe is not None
    return result.path, result.reframe


def test_moving_face_stays_inside_the_crop(footage: Footage, tmp_path: Path) -> None:
    video, truth = footage("moving")
    out, report = _export(video, tmp_path)
    assert report["mode"] == "auto" and report["shots"] == 1
    assert report["shots_with_subject"] == 1
    assert _ffprobe_size(out) == (1080, 1920)
    info = probe(str(video))
    path, first, _ = clip_path(str(video), info, 0.0, info.duration, get_preset("reels"),
                               "crop", "auto")
    assert path is not None and first is not None
    measured = _measured(out, truth, path.crop_w, path.crop_h, first)
    assert len(measured) == round(truth.duration * truth.fps)
    inside = 0
    for t, x in measured:
        assert abs(x - path.crop_at(t).x) <= 2, f"at {t:.2f} s the crop is at {x}"
        face = truth.face_at(t)
        assert face is not None
        inside += x <= face[0] and face[0] + face[2] <= x + path.crop_w
    assert inside / len(measured) >= 0.95
    xs = [x for _, x in measured]
    assert xs[-1] - xs[0] > 200  # it really followed her across the frame


def test_a_subject_without_a_face_is_followed_by_its_motion(footage: Footage,
                                                           tmp_path: Path) -> None:
    video, truth = footage("walker")  # her suit, no face, walking across
    out, report = _export(video, tmp_path)
    assert report["shots_with_subject"] == 1 and report["shots_following_motion"] == 1
    crop_w, crop_h = 202, 360
    measured = _measured(out, truth, crop_w, crop_h, 0.0, every=2)
    centred = 0
    for t, x in measured:
        body = truth.face_at(t)
        assert body is not None
        centre = body[0] + body[2] / 2
        centred += x + 0.2 * crop_w <= centre <= x + 0.8 * crop_w
    assert centred / len(measured) >= 0.95, f"{centred} of {len(measured)} frames"
    assert measured[-1][1] - measured[0][1] > 200  # it followed her across the frame


def test_still_face_still_crop_and_no_face_centre(footage: Footage, tmp_path: Path) -> None:
    video, truth = footage("jitter")  # small moves inside the dead zone
    out, report = _export(video, tmp_path)
    assert report["shots_with_subject"] == 1
    crop_w, crop_h = 202, 360
    xs = {x for _, x in _measured(out, truth, crop_w, crop_h, 0.0, every=3)}
    assert len(xs) == 1
    (x,) = xs
    face = truth.face_at(0.0)
    assert face is not None and x <= face[0] and face[0] + face[2] <= x + crop_w

    blank, blank_truth = footage("no_face")
    out, report = _export(blank, tmp_path)
    assert report["shots_with_subject"] == 0
    centre = (640 - crop_w) // 2 // 2 * 2
    assert {x for _, x in _measured(out, blank_truth, crop_w, crop_h, 0.0, every=5)} == {centre}


@pytest.mark.parametrize("scenario", ["two_shots", "two_shots@90"])
def test_jumps_at_the_cut_and_pins_move_the_crop(scenario: str, footage: Footage,
                                                 tmp_path: Path) -> None:
    video, truth = footage(scenario)  # @90: a phone's file, stored turned with a display matrix
    out, report = _export(video, tmp_path)
    assert report["shots"] == 2 and report["shots_with_subject"] == 2
    (cut,) = report["cuts"]  # type: ignore[misc]
    assert abs(cut - truth.cuts[0]) <= 1 / truth.fps
    measured = _measured(out, truth, 202, 360, 0.0)
    before = {x for t, x in measured if t < cut - 1e-3}
    after = {x for t, x in measured if t >= cut - 1e-3}
    assert len(before) == 1 and len(after) == 1  # still in each shot: a jump, no pan
    assert after.pop() - before.pop() > 300

    if "@" in scenario:
        return  # the pins below do not depend on how the file is stored
    pinned, report = _export(video, tmp_path, pins=(Pin(0.4, x=0.5),))
    assert report["pins"] == [{"t": 0.4, "x": 0.5, "y": 0.5}]
    at_pin = dict(_measured(pinned, truth, 202, 360, 0.0))
    assert abs(at_pin[min(at_pin, key=lambda t: abs(t - 0.4))] - (320 - 101) // 2 * 2) <= 2


def test_centre_and_off_keep_todays_crop(footage: Footage, tmp_path: Path) -> None:
    video, truth = footage("still")
    for mode in ("centre", "off"):
        spec = ClipSpec(0, 1, preset="reels", mode="exact", reframe=mode)
        out = export_clip(video, spec, ExportOptions(tmp_path, encoder="x264")).path
        assert out is not None
        xs = {x for _, x in _measured(out, truth, 202, 360, 0.0, every=5)}
        assert xs == {218}


def test_bad_mode_is_refused(footage: Footage, tmp_path: Path) -> None:
    from marlin_desk.core.errors import BadInput

    video, _ = footage("still")
    with pytest.raises(BadInput, match="reframe mode"):
        export_clip(video, ClipSpec(0, 1, preset="reels", mode="exact", reframe="left"),
                    ExportOptions(tmp_path))
    assert not list(tmp_path.iterdir())


def test_blur_fill_keeps_the_shots_without_a_subject(footage: Footage, tmp_path: Path) -> None:
    video, truth = footage("face_then_empty")
    out, report = _export(video, tmp_path, fill="blur", reframe="auto")
    assert report["shots"] == 2 and report["shots_with_subject"] == 1
    assert report["without_subject"] == "blur"
    (cut,) = report["cuts"]  # type: ignore[misc]
    with av.open(str(out)) as container:
        frames = [(float(f.time), f.to_ndarray(format="rgb24"))
                  for i, f in enumerate(container.decode(video=0)) if i % 6 == 0]
    face = truth.face_at(0.0)
    assert face is not None
    for t, rgb in frames:
        # The blurred fill shows the whole 16:9 picture across the width, centred.
        band = rgb[(1920 - 608) // 2:(1920 + 608) // 2]
        whole = np.asarray(Image.fromarray(band).resize((640, 360)), dtype=np.float32)
        fill_diff = float(np.abs(whole - truth.frame_at(t)).mean())
        if t < cut - 1e-3:
            small = np.asarray(Image.fromarray(rgb).resize((202, 360)))
            x, _ = locate_crop(small, truth.frame_at(t), 202, 360)
            assert x <= face[0] and face[0] + face[2] <= x + 202
            assert fill_diff > 20
        else:
            assert fill_diff < 12, f"at {t:.2f} s the frame is not the blurred fill"


def test_cancel_during_the_analysis_leaves_no_file(footage: Footage, tmp_path: Path) -> None:
    import threading

    from marlin_desk.core.errors import Cancelled

    video, _ = footage("moving")
    stop = threading.Event()
    seen: list[float] = []

    def progress(fraction: float) -> None:
        seen.append(fraction)
        if fraction > 0:
            stop.set()  # while the faces are still being looked for

    with pytest.raises(Cancelled):
        export_clip(video, ClipSpec(0, 3, preset="reels", mode="exact"),
                    ExportOptions(tmp_path / "out", encoder="x264"), on_progress=progress,
                    cancel=stop)
    assert seen and max(seen) < 0.2  # the analysis' share of the bar, not the encode's
    assert list((tmp_path / "out").iterdir()) == []  # no clip, no partial file
