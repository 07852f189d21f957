"""The defects an editor found on a real desktop (issue #20), one test each, driving the real
window. scripts/test.sh runs these offscreen and again on Xvfb with GL."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtWidgets import QApplication

from marlin_desk.core.timeline import Analysis, Event, Span
from marlin_desk.gui.timefmt import fmt_time
from tests.gui.conftest import open_and_wait

KNOWN = Analysis(duration=6.0, model="known", scene="test", video="",
                 events=[Event(0.0, 1.5, "a red screen"), Event(2.0, 3.9, "a green screen"),
                         Event(4.0, 5.8, "a blue screen")], windows=[])


def _clip(w, a: float, b: float):  # noqa: ANN001, ANN202
    w.doc.set_marks(a, b)
    return w.add_clip_from_marks()


def _frame_time(w) -> float:  # noqa: ANN001
    frame = w.player.video_item.videoSink().videoFrame()
    return frame.startTime() / 1e6


# -- 2. nothing lost without asking ---------------------------------------------------------------
def test_quitting_with_unsaved_clips_asks_and_cancel_keeps_them(qtbot, make_window,
                                                                sample_video) -> None:
    asked: list[str] = []
    answers = iter(["cancel", "save"])
    w = make_window(ask_save=lambda q: asked.append(q) or next(answers))
    open_and_wait(qtbot, w, sample_video)
    _clip(w, 1.0, 2.0)
    assert w.windowTitle().endswith("•")
    w.close()
    assert asked and "Save the changes" in asked[0] and w.isVisible()  # cancel: still open
    assert len(w.doc.clips) == 1
    w.close()  # save: written as the video's own project, then closed
    assert not w.isVisible()


def test_reopening_a_video_brings_its_saved_clips_back(qtbot, make_window, sample_video,
                                                       tmp_path) -> None:
    w = make_window(ask_save=lambda q: "save")
    open_and_wait(qtbot, w, sample_video)
    clip = _clip(w, 1.0, 2.0)
    other = tmp_path / "other.mp4"
    other.write_bytes(Path(sample_video).read_bytes()[:2000])  # a truncated file
    assert w.open_video(str(other))  # asked, saved (the answer), then the open fails
    qtbot.waitUntil(lambda: bool(w.errors), timeout=30_000)
    assert w.doc.video == str(sample_video) and w.doc.clips == [clip]  # nothing lost
    w2 = make_window()
    open_and_wait(qtbot, w2, sample_video)
    assert [c.id for c in w2.doc.clips] == [clip.id] and w2.undo_stack.isClean()


def test_opening_another_video_with_unsaved_clips_can_be_cancelled(qtbot, make_window,
                                                                   sample_video) -> None:
    w = make_window(ask_save=lambda q: "cancel")
    open_and_wait(qtbot, w, sample_video)
    _clip(w, 1.0, 2.0)
    assert not w.open_video(str(sample_video))
    assert len(w.doc.clips) == 1


# -- 3. marks on the frame on screen --------------------------------------------------------------
def test_marks_after_play_and_pause_are_the_frame_on_screen(qtbot, make_window,
                                                            sample_video) -> None:
    w = make_window()
    open_and_wait(qtbot, w, sample_video)
    w.views.seek(1.0)
    w.player.play()
    qtbot.wait(700)
    w.player.pause()
    qtbot.wait(400)  # the last frames and clock updates land
    shown = _frame_time(w)
    qtbot.keyClick(w, Qt.Key.Key_I)
    assert w.doc.mark_in == pytest.approx(shown, abs=1e-6)
    assert fmt_time(shown) in w.player.time_label.text()
    assert w.timeline.playhead == pytest.approx(shown, abs=1e-6)
    qtbot.keyClick(w, Qt.Key.Key_O)
    assert w.doc.mark_out == pytest.approx(shown + 1 / 25, abs=1e-6)  # the frame stays in
    w.player.end()
    qtbot.wait(300)
    qtbot.keyClick(w, Qt.Key.Key_O)
    assert w.doc.mark_out == pytest.approx(6.0, abs=1e-3)  # End then O: the last frame too


# -- 4. the filmstrip shows the frame at each time ------------------------------------------------
@pytest.mark.parametrize("zoom", [1.0, 3.0])
def test_filmstrip_colour_under_a_time_is_that_frame(qtbot, make_window, sample_video,
                                                     zoom: float) -> None:
    from marlin_desk.gui.timeline.widget import FILM_H, RULER_H

    w = make_window()
    open_and_wait(qtbot, w, sample_video)
    worker = w.video._media_workers[0]
    qtbot.waitUntil(lambda: worker.isFinished(), timeout=60_000)
    qtbot.waitUntil(lambda: not w.video._thumbs, timeout=5_000)
    qtbot.wait(200)
    tl = w.timeline
    tl.fit()
    if zoom != 1.0:
        tl.set_playhead(2.0)
        tl.zoom(zoom)
    image = tl.grab().toImage()
    y = RULER_H + FILM_H // 2
    for t, colour in ((1.75, "red"), (2.25, "green"), (3.8, "green"), (4.25, "blue")):
        x = int(tl.x_of(t))
        if not 0 <= x < tl.width():
            continue
        c = image.pixelColor(x, y)
        rgb = {"red": c.red(), "green": c.green(), "blue": c.blue()}
        assert max(rgb, key=rgb.get) == colour, (t, zoom, rgb)


# -- 6. trimming shows the edge frame -------------------------------------------------------------
def test_dragging_a_clip_edge_shows_that_frame(qtbot, make_window, sample_video) -> None:
    w = make_window()
    open_and_wait(qtbot, w, sample_video)
    _clip(w, 1.0, 3.0)
    w.views.seek(0.2)
    tl = w.timeline
    tl.fit()
    _, _, top, row_h = next(lane for lane in tl._lanes() if lane[0] == "clips")
    y = int(top + row_h / 2)
    x_end, x_new = int(round(tl.x_of(3.0))), int(round(tl.x_of(4.5)))
    qtbot.mousePress(tl, Qt.MouseButton.LeftButton, pos=QPoint(x_end, y))
    qtbot.mouseMove(tl, QPoint(x_new, y))
    edge = w.doc.clips[0].end if tl._trim_preview is None else tl._trim_preview[2]
    assert w.player.position == pytest.approx(edge - 1 / 25, abs=2 / tl.pps + 0.04)
    qtbot.mouseRelease(tl, Qt.MouseButton.LeftButton, pos=QPoint(x_new, y))


# -- 5. re-analyse keeps the result until the new one is whole ------------------------------------
def test_a_cancelled_reanalysis_keeps_the_events_and_a_finished_one_can_be_undone(
        qtbot, make_window, settings, tiny_model, sample_video) -> None:
    settings.set("caption_tokens", 4000)  # long enough to be caught running
    w = make_window(model=str(tiny_model), cache=True)
    with qtbot.waitSignal(w.engine.modelReady, timeout=180_000):
        w.model_jobs.load_model()
    open_and_wait(qtbot, w, sample_video)
    w.doc.set_analysis(KNOWN)
    with qtbot.waitSignal(w.engine.jobStarted, timeout=60_000):
        w.model_jobs.reanalyse()
    assert w.doc.events == KNOWN.events  # kept while it runs
    with qtbot.waitSignal(w.engine.cancelled, timeout=120_000):
        w.cancel_jobs()
    assert w.doc.events == KNOWN.events and w.doc.analysis is KNOWN
    settings.set("caption_tokens", 6)
    with qtbot.waitSignal(w.analysisFinished, timeout=120_000):
        w.model_jobs.reanalyse()
    assert w.doc.analysis is not KNOWN
    w.undo_stack.undo()
    assert w.doc.analysis is KNOWN and w.doc.events == KNOWN.events


# -- 8. quitting during an export -----------------------------------------------------------------
def test_quitting_during_an_export_asks_and_can_wait_for_it(qtbot, make_window, sample_video,
                                                            tmp_path) -> None:
    answers = iter(["stay", "wait"])
    w = make_window(ask_quit_export=lambda: next(answers))
    open_and_wait(qtbot, w, sample_video)
    _clip(w, 0.0, 5.0)
    w.undo_stack.setClean()
    assert w.exports.export([c.id for c in w.doc.clips], str(tmp_path / "out"),
                            preset="square", mode="exact")
    w.close()
    assert w.isVisible() and w.exports.running  # keep working: nothing stopped
    w.close()  # quit when done
    assert w.isVisible()
    qtbot.waitUntil(lambda: not w.isVisible(), timeout=180_000)
    assert w.exports.results and w.exports.results[0].status == "done"
    assert w.exports.results[0].path.is_file()


# -- 9. the keyboard ------------------------------------------------------------------------------
def test_space_presses_the_focused_button_instead_of_playing(qtbot, make_window,
                                                            sample_video) -> None:
    w = make_window()
    open_and_wait(qtbot, w, sample_video)
    w.doc.set_marks(1.0, 2.0)
    button = next(b for b in w.clips_panel.findChildren(type(w.clips_panel.export_button))
                  if b.text().startswith("Add"))
    button.setFocus()
    qtbot.waitUntil(button.hasFocus, timeout=2000)
    qtbot.keyClick(button, Qt.Key.Key_Space)
    qtbot.waitUntil(lambda: len(w.doc.clips) == 1, timeout=2000)
    assert not w.player.playing
    qtbot.keyClick(button, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: len(w.doc.clips) == 2, timeout=2000)


def test_a_search_result_becomes_a_clip_by_shortcut_and_no_selection_is_said(
        qtbot, make_window, sample_video) -> None:
    w = make_window()
    open_and_wait(qtbot, w, sample_video)
    spans = [Span(2.0, 3.5, 0.9), Span(4.0, 5.0, 0.5)]
    w.doc.set_results("the green screen", spans)
    w.search_panel.set_results("the green screen", spans)
    actions = {a.text(): a for a in w.actions()}
    actions["Clip from Selected &Search Results"].trigger()
    assert not w.doc.clips and "Select a search result" in w.last_error
    w.search_panel.select(0)
    actions["Clip from Selected &Search Results"].trigger()
    assert [(c.start, c.end, c.source) for c in w.doc.clips] == [(2.0, 3.5, "find")]
    assert "1 moment " in w.search_panel.status.text() or "2 moments" in \
        w.search_panel.status.text()


# -- 11. nothing of the last video stays ----------------------------------------------------------
def test_opening_another_video_leaves_nothing_of_the_last(qtbot, make_window, sample_video,
                                                          tmp_path) -> None:
    import shutil

    second = tmp_path / "second.mp4"
    shutil.copy(sample_video, second)
    with open(second, "ab") as fh:
        fh.write(b"\0" * 16)  # another file (fingerprint), same pictures
    w = make_window()
    open_and_wait(qtbot, w, sample_video)
    w.doc.set_marks(1.0, 2.0)
    w.views.seek(3.0)
    # the frame at 3 s on screen first: a frame of the last file still decoding when the next
    # one opens is not what this test is about
    qtbot.waitUntil(lambda: abs(w.timeline.playhead - 3.0) < 0.05, timeout=10_000)
    w.doc.set_results("q", [Span(1.0, 2.0, 0.5)])
    w.search_panel.set_results("q", [Span(1.0, 2.0, 0.5)])
    w.undo_stack.setClean()
    open_and_wait(qtbot, w, second)
    assert (w.doc.mark_in, w.doc.mark_out) == (None, None)
    assert w.timeline.marks == (None, None)
    # the new file's first frame puts the playhead at its start (a frame of the last file that
    # was still queued when it closed is dropped, not drawn)
    qtbot.waitUntil(lambda: w.timeline.playhead < 0.05, timeout=10_000)
    assert w.search_panel.results.topLevelItemCount() == 0
    assert w.search_panel.status.text() == "" and not w.doc.results


# -- 12. zoom keeps the playhead in view ----------------------------------------------------------
def test_zooming_in_keeps_the_playhead_in_view(qtbot, make_window, sample_video) -> None:
    w = make_window()
    open_and_wait(qtbot, w, sample_video)
    w.views.seek(5.0)
    qtbot.waitUntil(lambda: abs(w.timeline.playhead - 5.0) < 0.05, timeout=5000)
    zoom_in = next(a for a in w.actions() if a.text() == "Zoom &In")
    x_before = w.timeline.x_of(w.timeline.playhead)
    for _ in range(4):
        zoom_in.trigger()
    x = w.timeline.x_of(w.timeline.playhead)
    assert 0 <= x <= w.timeline.width() and x == pytest.approx(x_before, abs=2)


# -- 15. polish -----------------------------------------------------------------------------------
def test_polish_counts_names_and_labels(qtbot, make_window, sample_video) -> None:
    w = make_window()
    open_and_wait(qtbot, w, sample_video)
    clip = _clip(w, 1.0, 2.0)
    assert w.clips_panel.summary.text().startswith("1 clip,")
    w.edits.trim_clip(clip.id, 1.5, 2.0)
    assert w.doc.clips[0].name == "Clip 0:01"  # the app's own name follows the In
    w.edits.rename_clip(clip.id, "goal")
    w.edits.trim_clip(clip.id, 0.5, 2.0)
    assert w.doc.clips[0].name == "goal"  # the editor's name stays
    m = w.clips_panel.model
    assert m.data(m.index(0, 4)) != "original"  # a label, not the bare id
    rows = {text: keys for text, keys in __import__(
        "marlin_desk.gui.actions", fromlist=["shortcut_sheet"]).shortcut_sheet()}
    w.undo_stack.undo()
    assert "Undo" in rows and not any(k.startswith("Undo ") for k in rows)
    assert QApplication.instance() is not None


# -- the hand-off from the app (#15) --------------------------------------------------------------
def test_the_clip_bin_goes_to_an_nle_as_a_timeline(qtbot, make_window, sample_video,
                                                   tmp_path) -> None:
    import opentimelineio as otio

    w = make_window()
    open_and_wait(qtbot, w, sample_video)
    w.doc.set_analysis(KNOWN)
    _clip(w, 1.0, 2.0)
    _clip(w, 4.0, 5.5)
    next(a for a in w.actions() if a.text() == "&Hand Off to an NLE…").trigger()
    dialog = w.exports.dialog
    dialog.target.setCurrentIndex(dialog.target.findData("otio"))
    dialog.file.setText(str(tmp_path / "cut.otio"))
    dialog.accept()
    qtbot.waitUntil(lambda: w.exports.handoff_result is not None or bool(w.errors),
                    timeout=30_000)
    assert not w.errors and w.exports.handoff_result.path == tmp_path / "cut.otio"
    timeline = otio.adapters.read_from_file(str(tmp_path / "cut.otio"))
    clips = list(timeline.video_tracks()[0].find_clips())
    assert len(clips) == 2
    assert clips[0].source_range.start_time.to_seconds() == pytest.approx(1.0, abs=0.02)
    assert clips[1].source_range.duration.to_seconds() == pytest.approx(1.5, abs=0.05)
    names = {m.name for c in clips for m in c.markers} | {m.name for m in timeline.tracks.markers}
    assert any("red" in n or "blue" in n for n in names), names


# -- what an editor expects next to this: navigation ------------------------------------------
def test_edit_points_jumps_and_playing_in_to_out(qtbot, make_window, sample_video) -> None:
    w = make_window()
    open_and_wait(qtbot, w, sample_video)
    w.doc.set_analysis(KNOWN)  # edges 0, 1.5, 2, 3.9, 4, 5.8 (and the end, 6)
    actions = {a.text(): a for a in w.actions()}
    w.views.seek(1.6)
    actions["Next Edit Point"].trigger()
    assert w.player.position == pytest.approx(2.0, abs=1e-6)
    actions["Next Edit Point"].trigger()
    assert w.player.position == pytest.approx(3.9, abs=1e-6)
    actions["Previous Edit Point"].trigger()
    assert w.player.position == pytest.approx(2.0, abs=1e-6)
    actions["Forward One Second"].trigger()
    assert w.player.position == pytest.approx(3.0, abs=1e-6)
    actions["Back One Second"].trigger()
    assert w.player.position == pytest.approx(2.0, abs=1e-6)
    w.doc.set_marks(1.0, 1.8)
    assert "In 0:01.000" in w.player.marks_label.text()
    assert "Length 0:00.800" in w.player.marks_label.text()
    actions["Play In to Out"].trigger()
    qtbot.waitUntil(lambda: w.player.playing, timeout=5000)
    qtbot.waitUntil(lambda: not w.player.playing, timeout=10_000)  # stops at the Out
    assert 1.7 <= w.player.position <= 1.8


def test_switching_theme_keeps_the_playhead(qtbot, make_window, sample_video) -> None:
    w = make_window()
    open_and_wait(qtbot, w, sample_video)
    w.views.seek(3.0)
    qtbot.wait(300)
    try:
        w.dialogs.set_theme("light")
        qtbot.wait(300)
        assert w.player.position == pytest.approx(3.0, abs=0.05)
        assert w.timeline.playhead == pytest.approx(3.0, abs=0.05)
    finally:
        w.dialogs.set_theme("dark")


# -- shot changes (#15): ticks on the timeline, clips snapped when asked ----------------------
def test_shot_changes_are_found_shown_and_snapped_to(qtbot, make_window, tmp_path) -> None:
    from marlin_desk.dev.videos import make_video

    video = make_video(tmp_path / "cuts.mp4", size=(160, 96), fps=25,
                       segments=[(2.0, (20, 20, 20)), (2.0, (235, 235, 235)),
                                 (2.0, (20, 20, 20))])  # two hard cuts, at 2 s and 4 s
    w = make_window()
    open_and_wait(qtbot, w, video)
    qtbot.waitUntil(lambda: len(w.timeline.data.shots) == 2, timeout=60_000)
    assert w.timeline.data.shots == pytest.approx([2.0, 4.0], abs=1e-6)
    assert w.edits.shots == w.timeline.data.shots
    w.doc.set_marks(1.6, 3.7)
    assert w.add_clip_from_marks().start == pytest.approx(1.6)  # no snap until asked
    toggle = next(a for a in w.actions() if a.text() == "S&nap Clips to Shot Changes")
    toggle.trigger()
    assert toggle.isChecked() and w.edits.snap
    clip = w.add_clip_from_marks()
    assert (clip.start, clip.end) == pytest.approx((2.0, 4.0))


def test_a_clip_dragged_out_of_the_bin_is_its_exported_file(qtbot, make_window, sample_video,
                                                            settings, tmp_path) -> None:
    settings.set("export_dir", str(tmp_path / "dragged"))
    w = make_window()
    open_and_wait(qtbot, w, sample_video)
    _clip(w, 1.0, 2.0)
    model = w.clips_panel.model
    first = model.mimeData([model.index(0, 0)])  # not exported yet: it is, now
    assert not first.urls()
    qtbot.waitUntil(lambda: w.exports.results is not None, timeout=120_000)
    assert w.exports.results[0].status == "done", w.exports.results[0].error
    qtbot.waitUntil(lambda: not w.exports.running, timeout=30_000)
    again = model.mimeData([model.index(0, 0)])
    (url,) = again.urls()
    path = Path(url.toLocalFile())
    assert path.is_file() and path.parent == tmp_path / "dragged"
