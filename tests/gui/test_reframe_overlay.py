"""Reframing in the app (#17): the selected reels clip's crop over the player follows the face
(the real detector on the astronaut footage), a drag pins it, Undo takes the pin back, the
project keeps it and the app's export renders it, reusing the preview's detections."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import av
import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QAction

from marlin_desk.core import project as projfile
from marlin_desk.core.project import Clip
from marlin_desk.dev.reframe_videos import locate_crop, make_reframe_video
from marlin_desk.gui import undo
from marlin_desk.media import face_detector
from tests.gui.conftest import open_and_wait, open_with_clip

pytestmark = pytest.mark.skipif(face_detector.available() is not None,
                                reason="no face detector wheel on this platform")

SIZE = (640, 360)
CUT = 1.5  # two_shots of 3 s: the face on the left, then on the right


@pytest.fixture(scope="module")
def two_shots(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any]:
    path = tmp_path_factory.mktemp("reframe") / "two shots.mp4"
    truth = make_reframe_video(path, "two_shots", size=SIZE, duration=3.0)
    return path, truth


def _reels_clip(qtbot: Any, w: Any, video: Path, **kw: Any) -> Clip:
    open_and_wait(qtbot, w, video)
    clip = Clip(0.0, 2.6, "two people", "reels", **kw)
    w.undo_stack.push(undo.AddClips(w.doc, [clip]))
    return clip


def _window_with(qtbot: Any, make_window: Any, video: Path, scenario: str, seconds: float,
                 clip: Clip) -> Any:
    """A window on a new scenario video, with `clip` in its bin."""
    make_reframe_video(video, scenario, size=SIZE, duration=seconds)
    return open_with_clip(qtbot, make_window, video, clip)


def _show(qtbot: Any, w: Any, t: float) -> None:
    """Seek and wait for that frame on screen (the overlay draws at the frame's own time)."""
    w.player.seek(t)
    qtbot.waitUntil(lambda: abs(w.player.position - t) < 0.03
                    and not w.reframe.overlay.picture_rect().isEmpty(), timeout=15_000)


def _expected(w: Any, t: float) -> tuple[float, float, float, float]:
    """path.crop_at(t) scaled from frame pixels to the picture's place in the view."""
    path, pic = w.reframe.path, w.reframe.overlay.picture_rect()
    r = path.crop_at(t)
    sx, sy = pic.width() / path.frame_w, pic.height() / path.frame_h
    return (pic.left() + r.x * sx, pic.top() + r.y * sy, r.w * sx, r.h * sy)


def _drawn(w: Any) -> tuple[float, float, float, float]:
    rect = w.reframe.overlay.displayed_crop()
    assert rect is not None, "no crop drawn"
    return (rect.left(), rect.top(), rect.width(), rect.height())


def test_the_crop_follows_the_face_a_drag_pins_it_and_the_export_renders_the_pin(
        qtbot: Any, make_window: Any, two_shots: tuple[Path, Any], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    from marlin_desk.media import reframe as media_reframe
    from marlin_desk.workflows import reframe as wf

    detected: list[float] = []
    real_detect = wf.detect_span

    def counting(*args: Any, **kw: Any) -> Any:  # the real pass, counted
        detected.append(args[2])
        return real_detect(*args, **kw)

    # the cached look-up's pass and the export's own (when it is given no detections)
    monkeypatch.setattr(wf, "detect_span", counting)
    monkeypatch.setattr(media_reframe, "detect_span", counting)
    video, truth = two_shots
    w = make_window()
    clip = _reels_clip(qtbot, w, video)
    with qtbot.waitSignal(w.reframe.analysed, timeout=60_000):
        w.clips_panel.select_id(clip.id)  # selecting the clip is what starts the analysis
    assert w.reframe.active == clip.id and w.reframe.draggable
    path = w.reframe.path
    assert (path.frame_w, path.frame_h) == SIZE and path.axis == "x"
    assert path.cuts == pytest.approx((CUT,), abs=0.05)

    # the rectangle on screen is the path's crop at the frame shown, scaled to the picture
    centres = {}
    for t in (0.6, 2.2):
        _show(qtbot, w, t)
        shown = w.player.position
        assert _drawn(w) == pytest.approx(_expected(w, shown), abs=0.01)
        r = path.crop_at(shown)
        centres[t] = r.x + r.w / 2
        fx, _, fw, _ = truth.face_at(shown)
        assert abs(centres[t] - (fx + fw / 2)) < r.w * 0.2  # on the face
    assert centres[0.6] < SIZE[0] * 0.4 < SIZE[0] * 0.6 < centres[2.2]  # left shot, right shot
    assert w.reframe.overlay.paint_ms < 20

    # outside the clip's span there is no rectangle
    _show(qtbot, w, 2.8)
    assert w.reframe.overlay.displayed_crop() is None

    # drag the crop 90 view pixels to the right at 0.6 s: a pin there
    _show(qtbot, w, 0.6)
    t = w.player.position
    before = path.crop_at(t)
    view = w.player.view
    rect = w.reframe.overlay.displayed_crop()
    start = view.mapFromScene(rect.center())
    scale = w.reframe.overlay.picture_rect().width() / SIZE[0]
    qtbot.mousePress(view.viewport(), Qt.MouseButton.LeftButton, pos=start)
    qtbot.mouseMove(view.viewport(), start + QPoint(45, 0))
    qtbot.mouseMove(view.viewport(), start + QPoint(90, 0))
    qtbot.mouseRelease(view.viewport(), Qt.MouseButton.LeftButton, pos=start + QPoint(90, 0))
    pinned = w.doc.clip(clip.id)
    assert len(pinned.pins) == 1 and pinned.pins[0].t == pytest.approx(t, abs=1e-6)
    after = w.reframe.path.crop_at(t)
    assert abs(after.x - (before.x + 90 / scale)) <= 2  # the path passes through the pin
    assert w.reframe.overlay.pinned
    assert _drawn(w) == pytest.approx(_expected(w, t), abs=0.01)
    assert w.reframe.path.crop_at(2.2) == path.crop_at(2.2)  # the other shot is its own
    saved = projfile.load(projfile.save(w.project.current(), tmp_path / "p" / "reels.marlin"))
    assert saved.clips[0].pins == pinned.pins
    doc = w.project.current().to_json()
    assert doc["clips"][0]["pins"] == [pinned.pins[0].to_json()]
    assert w.timeline.data.pins == [(pinned.pins[0].t,) * 2 + (0,)]  # a diamond on its lane

    w.undo_stack.undo()  # the pin goes and the path re-smooths back to the automatic one
    assert w.doc.clip(clip.id).pins == () and w.timeline.data.pins == []
    assert w.reframe.path.crop_at(t) == before
    assert _drawn(w) == pytest.approx(_expected(w, t), abs=0.01)
    w.undo_stack.redo()
    assert w.doc.clip(clip.id).pins == pinned.pins
    w.player.seek(2.2)
    w.navigation.previous_edit()  # Up: a pin is an edit point
    assert w.player.position == pytest.approx(t, abs=1e-6)

    # the app's export renders the pinned crop, from the detections the preview made
    assert w.exports.export([clip.id], str(tmp_path / "out"))
    qtbot.waitUntil(lambda: w.exports.results is not None, timeout=180_000)
    (result,) = w.exports.results
    assert result.status == "done", (result.error, w.errors)
    report = result.reframe
    assert report["mode"] == "auto" and report["applied"] and report["shots"] == 2
    assert report["pins"] == [pinned.pins[0].to_json()]
    assert len(detected) == 1  # the export reused the preview's detections
    with av.open(str(result.path)) as c:
        frames = {round(f.time, 2): f.to_ndarray(format="rgb24") for f in c.decode(video=0)}
    at = min(frames, key=lambda ft: abs(ft - (t - result.real_start)))
    x, _ = locate_crop(frames[at], truth.frame_at(at + result.real_start), after.w, after.h)
    assert abs(x - after.x) <= 4, (x, after.x)


def test_mode_changes_are_undoable_and_other_videos_clips_get_no_crop(
        qtbot: Any, make_window: Any, two_shots: tuple[Path, Any], tmp_path: Path) -> None:
    video, _ = two_shots
    w = make_window()
    clip = _reels_clip(qtbot, w, video)
    model = w.clips_panel.model
    cell = model.index(0, 6)
    assert model.data(cell) == "Auto (default)"
    _, _, top, row_h = next(lane for lane in w.timeline._lanes() if lane[0] == "clips")
    where = QPoint(int(w.timeline.x_of(1.0)), int(top + row_h / 2))
    with qtbot.waitSignal(w.reframe.analysed, timeout=60_000):
        qtbot.mouseClick(w.timeline, Qt.MouseButton.LeftButton, pos=where)
    assert w.reframe.active == clip.id
    _show(qtbot, w, 2.2)
    t = w.player.position
    followed = w.reframe.path.crop_at(t)

    assert model.setData(cell, "centre")  # the Reframe column of the clip bin
    assert w.doc.clip(clip.id).reframe == "centre"
    assert model.data(cell) == "Centre"
    assert model.data(cell, Qt.ItemDataRole.ToolTipRole) == "reframing: Centre crop"
    centre = w.reframe.path.crop_at(t)
    assert abs(centre.x + centre.w / 2 - SIZE[0] / 2) <= 2
    assert centre != followed and w.reframe.overlay.axis is None  # fixed: nothing to drag
    w.undo_stack.undo()
    assert w.doc.clip(clip.id).reframe is None and w.reframe.path.crop_at(t) == followed

    w.reframe.set_mode("off")  # Edit > Reframe: Off, on the selected clip
    assert w.doc.clip(clip.id).reframe == "off"
    assert w.reframe.path is None and w.reframe.overlay.displayed_crop() is None
    w.undo_stack.undo()
    assert w.reframe.overlay.displayed_crop() is not None

    show = next(a for a in w.findChildren(QAction)
                if a.text().replace("&", "") == "Show Reframe Crop")
    assert show.isChecked()
    show.trigger()  # View > Show Reframe Crop off
    assert w.reframe.overlay.displayed_crop() is None
    show.trigger()
    assert w.reframe.overlay.displayed_crop() is not None

    other = Clip(0.0, 2.0, "elsewhere", "reels", video=str(tmp_path / "other.mp4"))
    w.undo_stack.push(undo.AddClips(w.doc, [other]))
    w.clips_panel.select_id(other.id)  # cut from another video: not on this player
    assert w.reframe.active == other.id
    assert w.reframe.path is None and w.reframe.overlay.displayed_crop() is None


def test_the_analysis_is_a_job_that_can_be_cancelled_and_runs_again_on_reselect(
        qtbot: Any, make_window: Any, tmp_path: Path) -> None:
    clip = Clip(0.0, 8.0, "walk", "square")
    w = _window_with(qtbot, make_window, tmp_path / "walk.mp4", "moving", 8.0, clip)
    w.clips_panel.select_id(clip.id)
    job = ("reframe", w.reframe.key(w.doc.clip(clip.id)))
    assert job in w.jobs.jobs and w.jobs.label.text().startswith("Finding the subject in walk")
    w.jobs.cancel_current()  # the status bar's Cancel
    qtbot.waitUntil(lambda: job not in w.jobs.jobs, timeout=30_000)
    assert not w.reframe.draggable and w.reframe.path is not None  # the centre crop stays
    assert w.reframe.path.crop_at(1.0).x == (SIZE[0] - SIZE[1]) // 2 // 2 * 2 and not w.errors
    w.reframe.set_active("")  # another clip, then this one again: analysed this time
    with qtbot.waitSignal(w.reframe.analysed, timeout=60_000):
        w.reframe.set_active(clip.id)
    assert w.reframe.draggable and w.reframe.path.axis == "x"


def test_the_bin_keeps_its_selection_through_clip_edits(qtbot: Any, make_window: Any,
                                                       two_shots: tuple[Path, Any]) -> None:
    video, _ = two_shots
    w = make_window()
    clip = _reels_clip(qtbot, w, video)
    second = Clip(2.6, 3.0, "after", "reels")
    w.undo_stack.push(undo.AddClips(w.doc, [second]))
    w.clips_panel.select_id(second.id)
    w.reframe.set_mode("centre")  # an edit of the selected clip resets the table's rows
    assert w.doc.clip(second.id).reframe == "centre" and w.doc.clip(clip.id).reframe is None
    assert w.clips_panel.selected_ids() == [second.id]
    w.undo_stack.undo()
    assert w.clips_panel.selected_ids() == [second.id]


def test_a_trimmed_clip_is_analysed_again_and_keeps_its_crop_meanwhile(
        qtbot: Any, make_window: Any, two_shots: tuple[Path, Any]) -> None:
    video, _ = two_shots
    w = make_window()
    clip = _reels_clip(qtbot, w, video)
    with qtbot.waitSignal(w.reframe.analysed, timeout=60_000):
        w.clips_panel.select_id(clip.id)
    followed = w.reframe.path.crop_at(2.2)
    with qtbot.waitSignal(w.reframe.analysed, timeout=60_000):
        w.edits.trim_clip(clip.id, 0.4, 2.6)  # a new span: its own detections
        assert not w.reframe.draggable  # until they are in...
        assert w.reframe.path.crop_at(2.2) == followed  # ...the last crop, not the centre
    assert w.reframe.draggable and w.reframe.path.start == pytest.approx(0.4, abs=0.05)
    assert w.reframe.path.crop_at(2.2) == followed


def test_a_phone_file_stored_turned_gets_its_crop_on_the_upright_picture(
        qtbot: Any, make_window: Any, tmp_path: Path) -> None:
    video = tmp_path / "phone.mp4"
    truth = make_reframe_video(video, "two_shots", size=SIZE, duration=2.0, rotation=90)
    w = open_with_clip(qtbot, make_window, video, Clip(0.0, 2.0, "phone", "reels"),
                       analysed=True)
    _show(qtbot, w, 0.4)
    pic = w.reframe.overlay.picture_rect()  # the turned picture, not the stored one's rect
    assert pic.width() / pic.height() == pytest.approx(SIZE[0] / SIZE[1], rel=0.01)
    assert _drawn(w) == pytest.approx(_expected(w, w.player.position), abs=0.01)
    r = w.reframe.path.crop_at(w.player.position)
    fx, _, fw, _ = truth.face_at(w.player.position)
    assert abs(r.x + r.w / 2 - (fx + fw / 2)) < r.w * 0.2


def test_with_the_blurred_fill_the_preview_shows_what_that_export_renders(
        qtbot: Any, make_window: Any, tmp_path: Path) -> None:
    clip = Clip(0.0, 3.0, "her, then the room", "reels", reframe="auto")
    w = _window_with(qtbot, make_window, tmp_path / "face then nobody.mp4", "face_then_empty",
                     3.0, clip)
    with qtbot.waitSignal(w.reframe.analysed, timeout=60_000):
        w.clips_panel.select_id(clip.id)
    w.settings.set_export_choices({"fill": "blur"})  # what the export dialog keeps
    w.exports.choicesChanged.emit()
    _show(qtbot, w, 1.0)
    assert w.reframe.overlay.displayed_crop() is not None  # her shot: cropped
    _show(qtbot, w, 2.2)
    assert w.reframe.overlay.displayed_crop() is None  # nobody: whole, over the blur
    w.undo_stack.push(undo.ChangeClip(w.doc, clip.with_reframe(None), "Default reframing"))
    assert w.reframe.path is None  # blur's own default: no crop window at all
    w.settings.set_export_choices({"fill": "crop"})
    w.exports.choicesChanged.emit()
    _show(qtbot, w, 2.25)
    assert w.reframe.overlay.displayed_crop() is not None  # crop fill: the centre there


def test_hold_the_crop_through_the_shot_keeps_it_still_and_undo_lets_it_follow(
        qtbot: Any, make_window: Any, tmp_path: Path) -> None:
    clip = Clip(0.0, 4.0, "the walk", "reels")
    w = _window_with(qtbot, make_window, tmp_path / "walk.mp4", "moving", 4.0, clip)
    with qtbot.waitSignal(w.reframe.analysed, timeout=60_000):
        w.clips_panel.select_id(clip.id)
    following = w.reframe.path
    assert following.crop_at(3.5).x - following.crop_at(0.5).x > 100  # it follows her
    _show(qtbot, w, 2.0)
    here = w.reframe.path.crop_at(w.player.position).x
    actions = {a.text(): a for a in w.actions()}
    actions["Hold the Crop Through This Shot"].trigger()
    held = w.reframe.path
    (pin,) = w.doc.clip(clip.id).pins  # one held pin for the shot, not one per turn
    assert pin.t == 0.0 and pin.until == pytest.approx(4.0 - 1 / w.doc.fps, abs=1e-6)
    assert w.timeline.data.pins == [(pin.t, pin.until, 0)]  # drawn as one bar
    assert all(abs(held.crop_at(t).x - here) <= 2 for t in (0.0, 0.5, 2.0, 3.5, 3.95))
    _show(qtbot, w, 3.0)  # dragging inside the span moves the whole hold
    there = 0 if here >= 100 else held.frame_w - held.crop_w
    w.reframe.pin_here(there, 0)
    (moved,) = w.doc.clip(clip.id).pins
    assert (moved.t, moved.until) == (pin.t, pin.until)
    assert all(abs(w.reframe.path.crop_at(t).x - there) <= 2 for t in (0.5, 2.0, 3.5))
    w.undo_stack.undo()
    w.reframe.remove_pin_here()  # at 3.0 s, inside the span: releases the hold
    assert not w.doc.clip(clip.id).pins
    assert w.reframe.path.crop_at(3.5) == following.crop_at(3.5)
    w.undo_stack.undo()
    w.undo_stack.undo()
    assert not w.doc.clip(clip.id).pins
    assert w.reframe.path.crop_at(3.5) == following.crop_at(3.5)
