"""No-model GUI tests: opening, timeline, panels, clips, trimming, undo, projects, errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from PySide6.QtCore import QMimeData, QPoint, QPointF, Qt, QUrl
from PySide6.QtGui import QDropEvent
from PySide6.QtWidgets import QWidget

from marlin_desk.core import project as projfile
from marlin_desk.core.errors import BadInput
from marlin_desk.core.project import Clip, Project
from marlin_desk.core.timeline import Analysis, Event, Span
from tests.gui.conftest import open_and_wait

KNOWN = Analysis(duration=6.0, model="known", scene="test", video="",
                 events=[Event(0.0, 1.5, "a red screen"), Event(2.0, 3.9, "a green screen"),
                         Event(4.0, 5.8, "a blue screen")], windows=[])


def test_importing_the_gui_does_not_import_torch() -> None:
    code = ("import sys; import marlin_desk.gui.main_window, marlin_desk.gui.app, "
            "marlin_desk.gui.selftest, marlin_desk.cli.main; marlin_desk.cli.main.build_parser();"
            "bad = [m for m in ('torch', 'transformers') if m in sys.modules]; print(bad)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, check=True)
    assert out.stdout.strip() == "[]"


def test_pyside_does_not_leak_none_references(qtbot) -> None:
    """PySide6 6.12.0 drops a None reference per void call (aborts apps after minutes)."""
    w = QWidget()
    qtbot.addWidget(w)
    before = sys.getrefcount(None)
    for i in range(10_000):
        w.setObjectName(f"w{i % 7}")
    assert sys.getrefcount(None) >= before - 100


def test_project_file_round_trip_and_damage(tmp_path: Path) -> None:
    video = tmp_path / "v.mp4"
    video.write_bytes(b"x")
    proj = Project(str(video), "fp", {"key": "k"}, [Event(1, 2, "edited")],
                   [Clip(1.0, 2.5, "one", "reels", "marks")], {"query": "q"})
    path = projfile.save(proj, tmp_path / "p.marlin")
    assert json.loads(path.read_text())["video"]["path"] == "v.mp4"  # relative beside it
    back = projfile.load(path)
    assert back.video == str(video.resolve()) and back.clips == proj.clips
    assert back.events == proj.events and back.analysis == {"key": "k"}
    assert [p.name for p in tmp_path.iterdir() if p.suffix == ".tmp"] == []
    (tmp_path / "bad.marlin").write_text("{not json")
    with pytest.raises(BadInput):
        projfile.load(tmp_path / "bad.marlin")
    (tmp_path / "future.marlin").write_text(json.dumps({"format": projfile.FORMAT,
                                                        "schema": 99}))
    with pytest.raises(BadInput, match="newer"):
        projfile.load(tmp_path / "future.marlin")


def test_open_video_shows_player_thumbnails_and_waveform(qtbot, make_window,
                                                         sample_video) -> None:
    w = make_window()
    open_and_wait(qtbot, w, sample_video)
    assert w.doc.duration == pytest.approx(6.0, abs=0.1)
    assert w.timeline.duration == pytest.approx(6.0, abs=0.1)
    qtbot.waitUntil(lambda: len(w.timeline.data.thumbs) >= 2, timeout=30_000)
    qtbot.waitUntil(lambda: w.timeline.data.wave is not None, timeout=30_000)
    qtbot.waitUntil(lambda: w.player.duration > 5.0, timeout=30_000)
    assert "sample.mp4" in w.windowTitle()
    assert not w.grab().isNull()


def test_unreadable_file_shows_an_error_and_the_app_lives_on(qtbot, make_window, tmp_path,
                                                             sample_video) -> None:
    bad = tmp_path / "broken.mp4"
    bad.write_bytes(b"this is not a video" * 100)
    w = make_window()
    with qtbot.waitSignal(w.errorShown, timeout=30_000) as blocker:
        w.open_video(str(bad))
    assert "broken.mp4" in blocker.args[0]
    assert w.messages.isVisible()
    open_and_wait(qtbot, w, sample_video)  # still works
    assert w.doc.video == str(sample_video)


def test_known_analysis_fills_timeline_and_syncs_selection(qtbot, make_window,
                                                           sample_video) -> None:
    w = make_window()
    open_and_wait(qtbot, w, sample_video)
    w.doc.set_analysis(KNOWN)
    assert len(w.timeline.data.events.items) == 3
    assert w.events_panel.model.rowCount() == 3
    # timeline → table
    _, lane, top, row_h = w.timeline._lanes()[0]
    x = int(w.timeline.x_of(2.5))
    qtbot.mouseClick(w.timeline, Qt.MouseButton.LeftButton, pos=QPoint(x, int(top + row_h / 2)))
    assert w.events_panel.selected_row() == 1
    assert w.timeline.playhead == pytest.approx(2.0, abs=0.05)
    # hover shows the description
    qtbot.mouseMove(w.timeline, QPoint(int(w.timeline.x_of(4.5)), int(top + row_h / 2)))
    qtbot.waitUntil(lambda: "blue" in w.timeline.hover_text, timeout=5000)
    # table → timeline
    w.events_panel.table.selectRow(0)
    assert w.timeline.selected_event == 0


def test_event_edit_undo_redo(qtbot, make_window, sample_video) -> None:
    w = make_window()
    open_and_wait(qtbot, w, sample_video)
    w.doc.set_analysis(KNOWN)
    model = w.events_panel.model
    assert model.setData(model.index(1, 2), "the goal")
    assert model.setData(model.index(1, 0), "0:02.250")
    assert w.doc.events[1] == Event(2.25, 3.9, "the goal")
    assert not model.setData(model.index(1, 1), "0:01")  # ends before it starts: refused
    w.undo_stack.undo()
    assert w.doc.events[1] == Event(2.0, 3.9, "the goal")
    w.undo_stack.undo()
    assert w.doc.events[1] == KNOWN.events[1]
    w.undo_stack.redo()
    w.undo_stack.redo()
    assert w.doc.events[1] == Event(2.25, 3.9, "the goal")


def test_io_marks_make_a_clip_and_trim_by_drag(qtbot, make_window, sample_video) -> None:
    w = make_window()
    open_and_wait(qtbot, w, sample_video)
    w.views.seek(1.0)
    qtbot.keyClick(w, Qt.Key.Key_I)
    w.views.seek(3.0)
    qtbot.keyClick(w, Qt.Key.Key_O)
    # Out keeps the frame on screen: it ends one frame (25 fps) later
    assert (w.doc.mark_in, w.doc.mark_out) == pytest.approx((1.0, 3.04), abs=0.005)
    clip = w.add_clip_from_marks()
    assert clip is not None and w.doc.clips == [clip] and clip.source == "marks"
    assert w.clips_panel.model.rowCount() == 1
    tl = w.timeline
    tl.fit()
    _, _, top, row_h = next(lane for lane in tl._lanes() if lane[0] == "clips")
    y = int(top + row_h / 2)
    x_end = int(round(tl.x_of(3.04)))
    x_new = int(round(tl.x_of(4.5)))
    qtbot.mousePress(tl, Qt.MouseButton.LeftButton, pos=QPoint(x_end, y))
    qtbot.mouseMove(tl, QPoint((x_end + x_new) // 2, y))
    qtbot.mouseMove(tl, QPoint(x_new, y))
    qtbot.mouseRelease(tl, Qt.MouseButton.LeftButton, pos=QPoint(x_new, y))
    trimmed = w.doc.clips[0]
    assert trimmed.start == pytest.approx(1.0, abs=0.02)
    assert trimmed.end == pytest.approx(4.5, abs=2 / tl.pps)
    w.undo_stack.undo()
    assert w.doc.clips[0].end == pytest.approx(3.04, abs=0.005)
    w.undo_stack.redo()
    assert w.doc.clips[0].end == pytest.approx(trimmed.end)
    w.undo_stack.undo()  # trim
    w.undo_stack.undo()  # add
    assert w.doc.clips == []


def test_clip_bin_rename_reorder_delete_with_undo(qtbot, make_window, sample_video) -> None:
    w = make_window()
    open_and_wait(qtbot, w, sample_video)
    w.doc.set_results("red", [Span(0.5, 1.5, -0.2), Span(3.0, 4.0, -1.5)])
    w.edits.add_clips_from_results([0, 1])
    ids = [c.id for c in w.doc.clips]
    m = w.clips_panel.model
    m.setData(m.index(1, 0), "second")
    m.setData(m.index(1, 4), "reels")
    assert (w.doc.clips[1].name, w.doc.clips[1].preset) == ("second", "reels")
    w.edits.move_clip(ids[1], -1)
    assert [c.id for c in w.doc.clips] == [ids[1], ids[0]]
    w.edits.delete_clips([ids[0]])
    assert [c.id for c in w.doc.clips] == [ids[1]]
    for _ in range(4):
        w.undo_stack.undo()
    assert [c.id for c in w.doc.clips] == ids and w.doc.clips[1].name == "red #2"


def test_clicking_a_result_seeks_and_loops(qtbot, make_window, sample_video) -> None:
    w = make_window()
    open_and_wait(qtbot, w, sample_video)
    spans = [Span(3.0, 4.0, -0.1), Span(1.0, 2.0, -0.9)]
    w.doc.set_results("blue", spans)
    w.search_panel.set_results("blue", spans)
    item = w.search_panel.results.topLevelItem(0)
    rect = w.search_panel.results.visualItemRect(item)
    qtbot.mouseClick(w.search_panel.results.viewport(), Qt.MouseButton.LeftButton,
                     pos=rect.center())
    assert w.timeline.selected_result == 0
    assert w.player._loop == (3.0, 4.0)
    qtbot.waitUntil(lambda: 2.9 <= w.player.position <= 4.1, timeout=20_000)
    assert len(w.timeline.data.results.items) == 2


def test_project_save_reload_round_trip(qtbot, make_window, sample_video, tmp_path) -> None:
    w = make_window()
    open_and_wait(qtbot, w, sample_video)
    w.doc.set_analysis(KNOWN)
    m = w.events_panel.model
    m.setData(m.index(0, 2), "edited red")
    w.doc.set_results("x", [Span(1.0, 2.0, -0.3)])
    w.edits.add_clips_from_results([0])
    path = tmp_path / "proj" / "edit.marlin"
    assert w.project.save_to(path)
    assert w.undo_stack.isClean()
    w2 = make_window()
    with qtbot.waitSignal(w2.videoOpened, timeout=30_000):
        assert w2.project.open(path)
    assert w2.doc.events == w.doc.events and w2.doc.events[0].description == "edited red"
    assert w2.doc.clips == w.doc.clips
    assert w2.project.path == path
    assert len(w2.timeline.data.clips.items) == 1


def test_autosave_recovery_after_a_crash(qtbot, make_window, sample_video, tmp_path) -> None:
    w = make_window()
    open_and_wait(qtbot, w, sample_video)
    w.doc.set_results("x", [Span(2.0, 3.0, -0.3)])
    w.edits.add_clips_from_results([0])
    saved = w.project.autosave()
    assert saved is not None and saved.is_file()
    # The first window "crashes": its autosave stays; a new window finds it.
    w2 = make_window()
    with qtbot.waitSignal(w2.videoOpened, timeout=30_000):
        assert w2.project.recover()
    assert [(c.start, c.end) for c in w2.doc.clips] == [(2.0, 3.0)]
    assert w2.doc.video == str(sample_video)


def test_drag_and_drop_opens_the_file(qtbot, make_window, sample_video) -> None:
    w = make_window()
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(sample_video))])
    event = QDropEvent(QPointF(100, 100), Qt.DropAction.CopyAction, mime,
                       Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier)
    with qtbot.waitSignal(w.videoOpened, timeout=30_000):
        w.dropEvent(event)
    assert event.isAccepted()
    assert w.doc.video == str(sample_video)


def test_timeline_paints_thousands_of_events(qtbot, make_window) -> None:
    from marlin_desk.gui.timeline import TimelineWidget

    tl = TimelineWidget()
    qtbot.addWidget(tl)
    tl.resize(1600, 260)
    tl.set_duration(3600.0)
    tl.data.set_events([Event(i * 0.72, i * 0.72 + 2.0, f"event {i}") for i in range(5000)])
    tl.relayout()
    tl.show()
    assert not tl.grab().isNull()
    tl.zoom(40.0)
    assert not tl.grab().isNull()


def test_export_writes_the_clips(qtbot, make_window, sample_video, tmp_path) -> None:
    w = make_window()
    open_and_wait(qtbot, w, sample_video)
    w.doc.set_results("x", [Span(1.0, 2.0, -0.3)])
    w.edits.add_clips_from_results([0])
    assert w.exports.export([c.id for c in w.doc.clips], str(tmp_path / "out"))
    qtbot.waitUntil(lambda: w.exports.results is not None, timeout=120_000)
    assert [r.status for r in w.exports.results] == ["done"], w.errors
    assert w.exports.results[0].path.is_file()


def test_view_toggles_come_back_as_they_were_left(qtbot, make_window, settings) -> None:
    first = make_window()
    actions = {a.text(): a for a in first.actions()}
    assert actions["Show &Reframe Crop"].isChecked() and first.reframe.enabled
    actions["Show &Reframe Crop"].trigger()
    actions["Preview &Captions"].trigger()
    assert not first.reframe.enabled
    second = make_window()  # the next session, the same preferences
    actions = {a.text(): a for a in second.actions()}
    assert not actions["Show &Reframe Crop"].isChecked() and not second.reframe.enabled
    assert actions["Preview &Captions"].isChecked()
    assert settings.get("show_reframe_crop") is False
