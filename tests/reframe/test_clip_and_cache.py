"""Pins and modes on the project's clips, the detections cache, and the app's API."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from marlin_desk.core import project
from marlin_desk.core.errors import BadInput
from marlin_desk.core.project import Clip, Project
from marlin_desk.core.reframe import Pin, ReframeSettings
from marlin_desk.media import reframe_detect
from marlin_desk.media.probe import probe
from marlin_desk.store.cache import AnalysisCache
from marlin_desk.store.fingerprint import fingerprint
from marlin_desk.workflows import reframe as wf

from .conftest import Footage


def test_clip_keeps_its_mode_and_pins_through_the_project_file(tmp_path: Path) -> None:
    clip = Clip(1.0, 5.0, "talk", "reels").with_reframe("auto").with_pins(
        [Pin(3.0, x=0.7), Pin(2.0, x=0.2), Pin(3.0, x=0.6)])
    assert [p.t for p in clip.pins] == [2.0, 3.0] and clip.pins[1].x == 0.6
    assert clip.with_times(1.5, 4.0).pins == clip.pins  # trimming keeps the pins
    saved = project.save(Project(str(tmp_path / "v.mp4"), clips=[clip]), tmp_path / "p.marlin")
    assert project.load(saved).clips == [clip]


def test_old_projects_read_unchanged_and_damage_is_reported(tmp_path: Path) -> None:
    old = {"id": "abc", "name": "x", "start": 1, "end": 2, "preset": "reels", "source": "marks"}
    clip = Clip.from_json(old)
    assert clip.reframe is None and clip.pins == ()
    assert clip.to_json() == {**old, "start": 1.0, "end": 2.0}  # nothing new written
    doc = Project(str(tmp_path / "v.mp4"), clips=[clip]).to_json()
    doc["clips"][0]["pins"] = [{"t": 1.5, "x": 3}]
    (tmp_path / "bad.marlin").write_text(json.dumps(doc))
    with pytest.raises(BadInput, match="damaged"):
        project.load(tmp_path / "bad.marlin")
    with pytest.raises(ValueError):
        clip.with_reframe("sideways")


def test_detections_are_cached_and_pins_recompute_without_decoding(
        footage: Footage, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    video, truth = footage("two_shots")
    cache = wf.ReframeCache(tmp_path / "reframe")
    first = wf.analyse_clip(str(video), 0.0, 2.5, "reels", cache=cache)
    assert not first.cached and len(list((tmp_path / "reframe").glob("*.json"))) == 1
    fresh = wf.analyse_clip(str(video), 0.5, 2.0, "reels",
                            cache=wf.ReframeCache(tmp_path / "elsewhere"))

    def no_decoding(*args: object, **kwargs: object) -> None:
        raise AssertionError("decoded again")

    monkeypatch.setattr(wf, "detect_span", no_decoding)
    again = wf.analyse_clip(str(video), 0.0, 2.5, "reels", cache=cache)
    assert again.cached and again.detections == first.detections
    # a clip trimmed inside the span: its part of the detections, and the same crop as a pass
    # over the part alone would give
    trimmed = wf.analyse_clip(str(video), 0.5, 2.0, "reels", cache=cache)
    assert trimmed.cached and trimmed.detections.start == 0.5
    assert trimmed.detections.first_frame == fresh.detections.first_frame
    assert trimmed.detections.cuts == fresh.detections.cuts and len(fresh.detections.cuts) == 1
    for t in (0.5, 1.0, 1.49, 1.6, 2.0):
        assert abs(trimmed.path().crop_at(t).x - fresh.path().crop_at(t).x) <= 2
    square = wf.analyse_clip(str(video), 0.0, 2.5, "square", cache=cache)  # same detections
    assert square.cached and square.path().crop_w == 360
    path = again.path()
    moved = again.path([path.pin_at(1.0, 300, 0)])
    assert abs(moved.crop_at(1.0).x - 300) <= 2 and moved.crop_at(2.5) == path.crop_at(2.5)
    with pytest.raises(AssertionError, match="decoded again"):
        wf.analyse_clip(str(video), 0.0, 3.0, "reels", cache=cache)  # longer: a miss
    with pytest.raises(AssertionError, match="decoded again"):
        wf.analyse_clip(str(video), 0.0, 2.5, "reels", cache=cache,
                        settings=ReframeSettings(detect_fps=4))
    with pytest.raises(BadInput, match="nothing to reframe"):
        wf.analyse_clip(str(video), 0.0, 3.0, "original", cache=cache)
    assert truth.cuts


def test_cuts_from_the_shots_cache_are_used(footage: Footage, tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    video, _ = footage("two_shots")
    store = AnalysisCache(tmp_path / "cache.sqlite")
    from marlin_desk.media.shots import ShotSettings

    store.put_shots(fingerprint(video), ShotSettings().to_json(), [1.0, 2.2])
    calls: list[object] = []
    real = reframe_detect.detect_span

    def spy(*args: object, **kwargs: object) -> object:
        calls.append(kwargs.get("cuts"))
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(wf, "detect_span", spy)
    cache = wf.ReframeCache(tmp_path / "reframe", shots=store)
    det = cache.detections(str(video), probe(str(video)), 0.0, 3.0, ReframeSettings())
    assert calls == [[1.0, 2.2]] and det.cuts == (1.0, 2.2)


def test_a_broken_cache_entry_is_detected_again(footage: Footage, tmp_path: Path) -> None:
    video, _ = footage("still")
    cache = wf.ReframeCache(tmp_path / "reframe")
    wf.analyse_clip(str(video), 0.0, 1.0, "reels", cache=cache)
    (entry,) = (tmp_path / "reframe").glob("*.json")
    entry.write_text("{not json")
    again = wf.analyse_clip(str(video), 0.0, 1.0, "reels", cache=cache)
    assert not again.cached and again.detections.samples
    assert cache.clear() == 1 and not list((tmp_path / "reframe").glob("*.json"))


def test_the_preview_path_follows_the_clips_mode(footage: Footage, tmp_path: Path) -> None:
    video, _ = footage("two_shots")
    reframing = wf.analyse_clip(str(video), 0.0, 3.0, "reels",
                                cache=wf.ReframeCache(tmp_path / "reframe"))
    auto = reframing.path_for(None)  # the reels default: auto
    assert auto is not None and auto.crop_at(0.5).x != auto.crop_at(2.5).x
    centre = reframing.path_for("centre")
    assert centre is not None and centre.crop_at(0.5) == centre.crop_at(2.5)
    assert centre.crop_at(0.5).x == (640 - 202) // 2 // 2 * 2
    assert reframing.path_for("off") is None
    assert reframing.path_for(None, fill="blur") is None  # blur keeps the picture by default
    assert reframing.path_for("auto", fill="blur") == auto
