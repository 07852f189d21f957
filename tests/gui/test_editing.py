"""Export choices and progress from the clip bin, adding and deleting events, rotated
thumbnails, preferences, themes and the about dialog."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QImage, QPalette
from PySide6.QtWidgets import QApplication, QDialogButtonBox

from marlin_desk.core.timeline import Analysis, Event
from marlin_desk.dev.videos import ffmpeg_autorotated_first_frame, make_video, marker_corner
from tests.gui.conftest import open_and_wait

KNOWN = Analysis(duration=6.0, model="known", scene="test", video="",
                 events=[Event(0.0, 1.5, "a red screen"), Event(2.0, 3.9, "a green screen"),
                         Event(4.0, 5.8, "a blue screen")], windows=[])


def _click(qtbot, dialog, which: QDialogButtonBox.StandardButton) -> None:
    box = dialog.findChild(QDialogButtonBox)
    qtbot.mouseClick(box.button(which), Qt.MouseButton.LeftButton)


def _rgb(image: QImage) -> np.ndarray:
    image = image.convertToFormat(QImage.Format.Format_RGB888)
    w, h, bpl = image.width(), image.height(), image.bytesPerLine()
    return np.frombuffer(image.constBits(), np.uint8).reshape(h, bpl)[:, :w * 3] \
        .reshape(h, w, 3).copy()


# -- export --------------------------------------------------------------------------------------
def test_export_dialog_writes_srt_from_the_edited_events(qtbot, make_window, sample_video,
                                                         tmp_path) -> None:
    pysubs2 = pytest.importorskip("pysubs2")
    w = make_window()
    open_and_wait(qtbot, w, sample_video)
    w.doc.set_analysis(KNOWN)
    model = w.events_panel.model
    assert model.setData(model.index(1, 2), "the edited goal")  # an undoable edit
    w.doc.set_marks(1.5, 4.5)
    clip = w.add_clip_from_marks()
    assert clip is not None
    qtbot.mouseClick(w.clips_panel.export_button, Qt.MouseButton.LeftButton)
    dialog = w.exports.dialog
    assert dialog is not None and dialog.isVisible()
    assert dialog.folder.text() == str(w.settings.export_dir)  # the default: Preferences
    assert dialog.mode.currentData() == "auto"  # the default: smart where the preset allows
    dialog.set_choice(dialog.subtitles, "srt")
    dialog.folder.setText(str(tmp_path / "out"))
    _click(qtbot, dialog, QDialogButtonBox.StandardButton.Ok)
    qtbot.waitUntil(lambda: w.exports.results is not None, timeout=180_000)
    (result,) = w.exports.results
    assert result.status == "done", (w.errors, result.error)
    assert result.spec.subtitles == "srt" and result.spec.mode == "smart"
    assert result.mode_used in ("smart", "exact")  # exact, with the reason, when it must
    assert result.path.parent == tmp_path / "out"
    srt = result.subtitle_path
    assert srt is not None and srt.is_file() and srt.suffix == ".srt"
    assert srt.parent == result.path.parent  # beside the clip
    subs = pysubs2.load(str(srt))
    texts = [line.plaintext for line in subs]
    assert any("the edited goal" in t for t in texts), texts
    assert not any("a green screen" in t for t in texts), texts
    goal = next(line for line in subs if "the edited goal" in line.plaintext)
    shift = result.real_start  # video time of the clip's first frame (1.5 s: frame-exact)
    assert shift == pytest.approx(1.5, abs=0.05)
    assert goal.start == pytest.approx((2.0 - shift) * 1000, abs=60)
    assert goal.end == pytest.approx((3.9 - shift) * 1000, abs=60)
    progress = w.clips_panel.export_progress
    qtbot.waitUntil(lambda: not progress.running, timeout=30_000)
    assert progress.overall.value() == 1000 and progress.status(0) == "done"


def test_export_choices_reach_each_clip_and_one_clip_can_be_cancelled(
        qtbot, make_window, sample_video, tmp_path) -> None:
    w = make_window()
    open_and_wait(qtbot, w, sample_video)
    for a, b in ((0.5, 1.5), (2.0, 3.0)):
        w.doc.set_marks(a, b)
        w.add_clip_from_marks()
    ids = [c.id for c in w.doc.clips]
    assert w.exports.export(ids, str(tmp_path / "out"), preset="square", fill="blur",
                          mode="exact")
    w.clips_panel.export_progress.cancels[1].click()  # cancel the second clip only
    qtbot.waitUntil(lambda: w.exports.results is not None, timeout=180_000)
    res = w.exports.results
    assert [r.status for r in res] == ["done", "cancelled"], (w.errors, res[0].error)
    assert (res[0].spec.preset, res[0].spec.fill, res[0].spec.mode) == ("square", "blur",
                                                                          "exact")
    assert res[0].path.is_file()
    progress = w.clips_panel.export_progress
    qtbot.waitUntil(lambda: not progress.running, timeout=30_000)
    assert progress.status(0) == "done" and progress.status(1) == "cancelled"
    assert w.exports.worker is None  # a new export may start


def test_export_dialog_choices(qtbot, make_window) -> None:
    from marlin_desk.gui.dialogs.export import ExportDialog
    from marlin_desk.media.naming import DEFAULT_TEMPLATE

    w = make_window()
    d = ExportDialog(2, "/tmp/x", has_events=True, parent=w)
    qtbot.addWidget(d)
    assert d.choices() == {"out_dir": "/tmp/x", "preset": None, "fill": "crop",
                           "mode": "auto", "encoder": "auto", "loudness": "keep",
                           "channels": "keep", "subtitles": "none", "speed": "veryfast",
                           "audio_kbps": "", "template": DEFAULT_TEMPLATE,
                           "source": "events", "captions": None}  # no transcript: the events
    d.set_choice(d.preset, "youtube")
    assert not d.fill.isEnabled()  # fill only matters for 9:16 and 1:1
    d.set_choice(d.preset, "reels")
    d.set_choice(d.fill, "blur")
    d.set_choice(d.subtitles, "burn")
    assert d.fill.isEnabled()
    d.set_choice(d.mode, "exact")
    assert d.choices() == {"out_dir": "/tmp/x", "preset": "reels", "fill": "blur",
                           "mode": "exact", "encoder": "auto", "loudness": "keep",
                           "channels": "keep", "subtitles": "burn", "speed": "veryfast",
                           "audio_kbps": "", "template": DEFAULT_TEMPLATE,
                           "source": "events", "captions": None}
    d.set_choice(d.mode, "fast")  # stream copy: no resize, no burned subtitles
    assert d.choices()["preset"] == "original" and d.choices()["subtitles"] == "none"
    assert not d.preset.isEnabled() and not d.fill.isEnabled()
    with pytest.raises(ValueError):
        d.set_choice(d.subtitles, "ass")


def test_the_export_dialog_offers_the_last_choices_again(qtbot, make_window, settings,
                                                         sample_video, tmp_path) -> None:
    """Folder, preset, fill, mode, encoder and subtitles are kept between exports (and
    across restarts: they are in the settings file)."""
    w = make_window()
    open_and_wait(qtbot, w, sample_video)
    w.doc.set_marks(0.5, 1.5)
    w.add_clip_from_marks()
    w.exports.request([c.id for c in w.doc.clips])
    d = w.exports.dialog
    d.set_choice(d.preset, "reels")
    d.set_choice(d.fill, "blur")
    d.set_choice(d.mode, "exact")
    d.set_choice(d.encoder, "x264")
    d.set_choice(d.subtitles, "vtt")
    d.set_choice(d.loudness, "social (-14 LUFS)")
    d.set_choice(d.channels, "stereo")
    d.set_choice(d.speed, "medium")
    d.set_choice(d.audio_kbps, "128")
    d.template.setText("{video}-{index}-{preset}")
    d.folder.setText(str(tmp_path / "reels"))
    d.save_name.setText("Reels for the client")
    d._save_preset()  # the Save Settings button
    assert "Reels for the client" in settings.export_presets()
    chosen = d.choices()
    _click(qtbot, d, QDialogButtonBox.StandardButton.Ok)
    qtbot.waitUntil(lambda: w.exports.results is not None, timeout=180_000)
    result = w.exports.results[0]
    assert result.status == "done", result.error
    assert result.path.name.endswith("-1-reels.mp4"), result.path.name  # the template
    assert result.audio["channels"] == 2  # the sample video's mono sound, as asked
    assert result.audio["loudness"]["output"]["I"] == pytest.approx(-14.0, abs=1.0)
    qtbot.waitUntil(lambda: not w.exports.running, timeout=30_000)  # its thread has ended
    w.exports.request([c.id for c in w.doc.clips])
    again = w.exports.dialog
    assert again.isVisible() and again.choices() == chosen
    again.set_choice(again.mode, "fast")
    again.saved.setCurrentIndex(again.saved.findData("Reels for the client"))
    assert again.choices() == chosen  # the named settings, the folder included
    again.reject()


# -- events --------------------------------------------------------------------------------------
def test_add_and_delete_events_with_undo_redo(qtbot, make_window, sample_video) -> None:
    w = make_window()
    open_and_wait(qtbot, w, sample_video)
    w.doc.set_analysis(KNOWN)
    # at the playhead (no marks): 2 s long, in time order, selected, on the timeline
    w.views.seek(1.6)
    qtbot.mouseClick(w.events_panel.add_button, Qt.MouseButton.LeftButton)
    assert len(w.doc.events) == 4
    assert w.doc.events[1] == Event(1.6, 3.6, "New event")
    assert w.events_panel.selected_row() == 1 and w.events_panel.model.rowCount() == 4
    assert [i.start for i in w.timeline.data.events.items].count(1.6) == 1
    # from the I/O marks
    w.doc.set_marks(4.2, 5.0)
    row = w.add_event("from marks")
    assert w.doc.events[row] == Event(4.2, 5.0, "from marks")
    assert len(w.timeline.data.events.items) == 5
    # delete two selected events (rows 0 and 2: the red and the green screen)
    table = w.events_panel.table
    table.clearSelection()
    for r in (0, 2):
        table.selectionModel().select(
            w.events_panel.model.index(r, 0),
            table.selectionModel().SelectionFlag.Select
            | table.selectionModel().SelectionFlag.Rows)
    assert w.events_panel.selected_rows() == [0, 2]
    qtbot.mouseClick(w.events_panel.delete_button, Qt.MouseButton.LeftButton)
    assert [e.description for e in w.doc.events] == ["New event", "a blue screen", "from marks"]
    assert len(w.timeline.data.events.items) == 3
    assert w.doc.events_edited
    # undo: the deleted events come back at their rows; then the adds go
    w.undo_stack.undo()
    assert [e.description for e in w.doc.events] == [
        "a red screen", "New event", "a green screen", "a blue screen", "from marks"]
    assert len(w.timeline.data.events.items) == 5
    w.undo_stack.undo()
    w.undo_stack.undo()
    assert w.doc.events == KNOWN.events
    assert len(w.timeline.data.events.items) == 3
    # redo all three
    for _ in range(3):
        w.undo_stack.redo()
    assert [e.description for e in w.doc.events] == ["New event", "a blue screen", "from marks"]
    assert w.events_panel.model.rowCount() == 3 == len(w.timeline.data.events.items)
    # the delete action works on the timeline's selection too
    w.events_panel.table.clearSelection()
    w.timeline.selected_event = 2
    next(a for a in w.actions() if a.text().startswith("Delete Selected E")).trigger()
    assert [e.description for e in w.doc.events] == ["New event", "a blue screen"]
    assert w.timeline.selected_event is None


def test_add_event_needs_a_video(qtbot, make_window) -> None:
    w = make_window()
    assert w.add_event() is None and w.doc.events == []
    assert "Open a video" in w.last_error


# -- thumbnails ----------------------------------------------------------------------------------
def test_thumbnails_of_a_rotated_video_are_upright(qtbot, make_window, tmp_path) -> None:
    video = make_video(tmp_path / "rotated.mp4", segments=[(1.0, (30, 60, 200))],
                       size=(160, 96), fps=25, rotation=90, marker=(255, 0, 0))
    reference = ffmpeg_autorotated_first_frame(video)
    assert reference.shape[0] > reference.shape[1]  # FFmpeg shows it portrait
    w = make_window()
    open_and_wait(qtbot, w, video)
    assert w.doc.info.rotation == 90
    qtbot.waitUntil(lambda: len(w.timeline.data.thumbs) >= 1, timeout=30_000)
    image = w.timeline.data.thumbs[0][1].toImage()
    assert image.height() > image.width(), (image.width(), image.height())
    corner = marker_corner(reference, (255, 0, 0))
    assert corner is not None
    assert marker_corner(_rgb(image), (255, 0, 0)) == corner


# -- preferences, theme, about -------------------------------------------------------------------
def test_preferences_are_saved_and_applied(qtbot, make_window, settings, sample_video,
                                           monkeypatch) -> None:
    from marlin_desk.gui import theme
    from marlin_desk.gui.settings import Settings
    from marlin_desk.gui.worker_protocol import AnalyseRequest

    w = make_window()
    open_and_wait(qtbot, w, sample_video)
    w.engine.model_info = {"model": "tiny"}  # as if a model were loaded
    loads: list[int] = []
    submitted: list[tuple[str, dict]] = []
    monkeypatch.setattr(w.model_jobs, "load_model", lambda model=None: loads.append(1) or 0)
    monkeypatch.setattr(w.engine, "submit", lambda request: submitted.append(request) or 99)
    # cancel: nothing saved
    w.dialogs.show_preferences()
    w.dialogs.preferences.device.setCurrentText("cpu")
    _click(qtbot, w.dialogs.preferences, QDialogButtonBox.StandardButton.Cancel)
    assert Settings(settings.path).get("device") == "auto" and loads == []
    # OK: saved to the (temporary) settings file and applied
    w.dialogs.show_preferences()
    d = w.dialogs.preferences
    assert d.isVisible() and d.window.value() == 120.0
    d.device.setCurrentText("cpu")
    d.backend.setCurrentText("fp32")
    d.window.setValue(30.0)
    d.theme.setCurrentText("light")
    d.speech_model.setCurrentIndex(d.speech_model.findData("small"))
    d.speech_language.setCurrentText("de")
    _click(qtbot, d, QDialogButtonBox.StandardButton.Ok)
    try:
        fresh = Settings(settings.path)
        assert (fresh.get("device"), fresh.get("backend"), fresh.get("window_seconds"),
                fresh.get("theme")) == ("cpu", "fp32", 30.0, "light")
        assert "device=cpu" in settings.path.read_text()
        assert loads == [1]  # backend/device changed: the model reloads
        assert theme.colours() is theme.LIGHT
        assert QApplication.instance().palette().color(QPalette.ColorRole.Window).lightness() \
            > 150
        assert w.model_jobs.analyse() == 99
        assert isinstance(submitted[-1], AnalyseRequest) and submitted[-1].window == 30.0
        assert w.speech.transcribe() == 99  # the speech model and language chosen
        assert (submitted[-1].model, submitted[-1].language) == ("small", "de")
        # the same settings again: no reload
        w.dialogs.show_preferences()
        _click(qtbot, w.dialogs.preferences, QDialogButtonBox.StandardButton.Ok)
        assert loads == [1]
        # the remote backend: its server fields are enabled with it, saved, and reload
        w.dialogs.show_preferences()
        d = w.dialogs.preferences
        assert not d.server_url.isEnabled()
        d.backend.setCurrentText("remote")
        assert d.server_url.isEnabled() and d.server_windows_in_flight.isEnabled()
        d.server_url.setText(" http://gpu-box:8000/v1 ")
        d.server_windows_in_flight.setValue(8)
        _click(qtbot, d, QDialogButtonBox.StandardButton.Ok)
        assert loads == [1, 1]
        options = w.settings.model_options()
        assert (options.backend, options.server.url, options.server.served_model,
                options.server.api_key, options.server.windows_in_flight) == (
                    "remote", "http://gpu-box:8000/v1", None, None, 8)
    finally:
        w.dialogs.set_theme("dark")


def test_theme_switch_repaints_light_and_dark(qtbot, make_window, settings) -> None:
    from marlin_desk.gui import theme

    w = make_window()
    actions = {a.text(): a for a in w.actions()}

    def background() -> tuple[int, int, int]:
        img = w.timeline.grab().toImage()
        c = img.pixelColor(img.width() - 3, img.height() - 20)  # below the lanes
        return c.red(), c.green(), c.blue()

    def hex_rgb(h: str) -> tuple[int, int, int]:
        return int(h[1:3], 16), int(h[3:5], 16), int(h[5:7], 16)

    try:
        actions["&Light Theme"].trigger()
        assert settings.get("theme") == "light" and theme.colours() is theme.LIGHT
        assert background() == hex_rgb(theme.LIGHT.background)
        assert QApplication.instance().palette().color(QPalette.ColorRole.Window).lightness() \
            > 150
        actions["&Dark Theme"].trigger()
        assert settings.get("theme") == "dark" and theme.colours() is theme.DARK
        assert background() == hex_rgb(theme.DARK.background)
        assert QApplication.instance().palette().color(QPalette.ColorRole.Window).lightness() \
            < 80
    finally:
        w.dialogs.set_theme("dark")


def test_about_dialog_shows_the_versions(qtbot, make_window) -> None:
    import importlib.metadata

    import PySide6
    from PySide6.QtCore import qVersion

    from marlin_desk import __version__

    w = make_window()
    w.model_jobs.model_info = {"model": "tiny-model", "device": "cpu", "dtype": "float32"}
    next(a for a in w.actions() if a.text() == "&About Marlin Desk").trigger()
    dialog = w.dialogs.about
    assert dialog.isVisible()
    text = dialog.label.text()
    for needle in (f"<b>Marlin Desk</b></td><td>{__version__}<", f"<td>{PySide6.__version__}<",
                   f"<td>{qVersion()}<", f"<td>{importlib.metadata.version('av')}<",
                   "tiny-model (cpu, float32)"):
        assert needle in text, needle
    dialog.reject()


# -- responsiveness while the workers run ----------------------------------------------------------
def test_partial_windows_and_thumbnails_reach_the_views_in_batches(qtbot, make_window) -> None:
    from types import SimpleNamespace

    w = make_window()
    w.model_jobs.analysis_job = 7  # as if an analysis were running
    changes: list[int] = []
    w.doc.eventsChanged.connect(lambda: changes.append(len(w.doc.events)))
    for i in range(40):  # a burst of partial windows
        w.model_jobs._on_window(7, SimpleNamespace(events=[Event(i, i + 0.5, f"e{i}")]))
    w.model_jobs._on_window(8, SimpleNamespace(events=[Event(99, 100, "another job")]))  # ignored
    assert changes == [] and w.model_jobs.windows_done == 40  # nothing repainted per window
    qtbot.waitUntil(lambda: len(w.doc.events) == 40, timeout=10_000)
    assert changes == [40]  # one document change (one table reset, one timeline relayout)
    assert len(w.timeline.data.events.items) == 40
    image = QImage(32, 18, QImage.Format.Format_RGB888)
    image.fill(0)
    w.video._on_thumbnail(0.0, image)
    assert len(w.timeline.data.thumbs) == 1  # the first thumbnail shows at once
    for i in range(1, 50):
        w.video._on_thumbnail(i * 0.1, image)
    assert len(w.timeline.data.thumbs) == 1
    qtbot.waitUntil(lambda: len(w.timeline.data.thumbs) == 50, timeout=10_000)


def test_progress_notes_are_coalesced(qtbot) -> None:
    from types import SimpleNamespace

    from marlin_desk.gui.worker import Job, ModelWorker

    worker = ModelWorker()
    got: list[tuple[int, int]] = []
    worker.progress.connect(lambda _job, done, total, _eta, _msg: got.append((done, total)))
    report = worker._progress_reporter(Job(1, "analyse", {}))
    for done in range(3):
        for _ in range(200):  # token notes within one window: a flood
            report(SimpleNamespace(done=done, total=3, eta=None, message="note"))
    report(SimpleNamespace(done=3, total=3, eta=0.0, message="done"))
    assert [d for d, _ in got][:1] == [0] and got[-1] == (3, 3)
    assert {d for d, _ in got} == {0, 1, 2, 3}  # every step is reported
    assert len(got) < 20  # not 601


@pytest.mark.skipif(not __import__("sys").platform.startswith("linux"),
                    reason="QThread priorities do this elsewhere")
def test_worker_threads_yield_the_cpu_to_the_gui_thread(qtbot) -> None:
    import os
    import threading

    from marlin_desk.gui.media_workers import _Worker

    class Probe(_Worker):
        nice: int | None = None

        def work(self) -> None:
            self.nice = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())

    gui = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
    probe = Probe()
    with qtbot.waitSignal(probe.finished, timeout=10_000):
        probe.start()
    assert probe.nice is not None and (probe.nice > gui or gui == 19)
    assert os.getpriority(os.PRIO_PROCESS, threading.get_native_id()) == gui  # GUI unchanged


# -- time display: seconds or timecode (#20.14) --------------------------------------------------
def test_typed_times_read_both_forms() -> None:
    from fractions import Fraction

    from marlin_desk.gui.timefmt import display, fmt_time, parse_time, set_display

    try:
        set_display("seconds", "30000/1001")
        assert parse_time("1:02:03.25") == pytest.approx(3723.25) and parse_time("2:30") == 150
        assert parse_time("00:01:00;02") == pytest.approx(1800 * 1001 / 30000)  # DF at 29.97
        assert fmt_time(60.06) == "1:00.060" and fmt_time(5.0, mode="timecode") == "00:00:05;00"
        set_display("timecode")
        assert display.timecode and fmt_time(1800 * 1001 / 30000) == "00:01:00;02"
        assert parse_time("02:03:04") == float(Fraction((2 * 60 + 3) * 30 + 4 - 4) / display.rate)
        assert parse_time("12.5") == 12.5 and fmt_time(3.0, mode="seconds") == "0:03.000"
        with pytest.raises(ValueError, match="not a drop-frame label"):
            parse_time("00:01:00;00")
        set_display(rate=None)  # no video: seconds, and timecode cannot be read
        assert fmt_time(2.0) == "0:02.000"
        with pytest.raises(ValueError, match="needs the video's frame rate"):
            parse_time("00:00:02:00")
    finally:
        set_display("seconds", None)


def test_timecode_display_shows_and_takes_frames(qtbot, make_window, settings,
                                                 sample_video) -> None:
    from marlin_desk.core.timeline import Span

    settings.set("time_display", "timecode")
    w = make_window()
    open_and_wait(qtbot, w, sample_video)  # 25 fps
    w.doc.set_analysis(KNOWN)
    events = w.events_panel.model
    assert events.data(events.index(1, 0)) == "00:00:02:00"
    assert events.setData(events.index(1, 0), "00:00:02:12")  # frame 62 of 25 fps
    assert w.doc.events[1].start == 2.48
    w.doc.set_marks(1.5, 4.5)
    clip = w.add_clip_from_marks()
    clips = w.clips_panel.model
    assert clips.data(clips.index(0, 3)) == "00:00:03:00"  # the length too
    assert clips.setData(clips.index(0, 1), "01:05")  # SS:FF in the timecode display
    assert w.doc.clip(clip.id).start == 1.2
    w.search_panel.set_results("q", [Span(0.5, 1.0)])
    assert w.search_panel.results.topLevelItem(0).text(1) == "00:00:00:13"  # frame 12.5: half up
    assert w.player.time_label.text().startswith("00:00:")
    # back to seconds through Preferences: every view shows seconds, and timecode still types
    w.dialogs.show_preferences()
    d = w.dialogs.preferences
    assert d.time_display.currentText() == "timecode"
    d.time_display.setCurrentText("seconds")
    _click(qtbot, d, QDialogButtonBox.StandardButton.Ok)
    assert settings.get("time_display") == "seconds"
    assert events.data(events.index(1, 0)) == "0:02.480"
    assert w.search_panel.results.topLevelItem(0).text(1) == "0:00.500"
    assert w.clips_panel.summary.text() == "1 clip, 0:03.300 in all"
    assert events.setData(events.index(1, 1), "00:00:03:05")
    assert w.doc.events[1].end == 3.2
    assert not events.setData(events.index(1, 1), "00:00:03:25")  # no frame 25 at 25 fps
    assert "frame 25 does not exist" in w.last_error
