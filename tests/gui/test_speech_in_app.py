"""What is said, in the app: Transcribe on the model worker fills the Said lane and table from
real speech (espeak-ng, Whisper tiny.en from its wheel); the transcript comes back when the
video is opened again; clip edges snap to words; a sentence becomes a clip; the export writes
speech subtitles and burns captions; the captions preview draws over the picture, inside the
9:16 crop when one shows; once transcribed, the reframing crop takes a moving mouth for the
speaker only while words are heard."""

from __future__ import annotations

import pysubs2
import pytest

from marlin_desk.core.project import Clip
from marlin_desk.dev.speech import make_speech_video, normalise_words, word_error_rate
from marlin_desk.gui import undo
from marlin_desk.gui.worker_protocol import TranscribeResult
from tests.gui.conftest import open_and_wait, open_with_clip
from tests.reframe.test_speaker import two_talking
from tests.speech.conftest import needs_speech

pytestmark = needs_speech


@pytest.fixture(scope="module")
def talk(tmp_path_factory: pytest.TempPathFactory):  # noqa: ANN201
    return make_speech_video(tmp_path_factory.mktemp("talk") / "talk 'one'.mp4",
                             size=(320, 180))


def test_transcribe_snap_clip_export_and_preview(qtbot, make_window, talk, tmp_path) -> None:
    w = make_window()
    open_and_wait(qtbot, w, talk.path)
    assert w.doc.transcript is None and w.timeline.data.speech.items == []
    with qtbot.waitSignal(w.engine.finished, timeout=120_000,
                          check_params_cb=lambda _j, _r, res: isinstance(res, TranscribeResult)):
        w.speech.transcribe()
    qtbot.waitUntil(lambda: w.doc.transcript is not None and bool(w.doc.transcript.words),
                    timeout=10_000)
    heard = normalise_words(w.doc.transcript.text)
    said = [x.text for x in talk.words]
    assert word_error_rate(said, heard) <= 0.15, (said, heard)
    lane = w.timeline.data.speech.items
    assert len(lane) == len(w.doc.transcript.words)
    assert w.speech_panel.model.rowCount() == len(w.doc.transcript.segments) >= 2

    # clip edges snap to the words: an In half a second before a word starts on it
    first = talk.words[4]
    w.edits.set_word_snap(True)
    w.doc.set_marks(first.start - 0.4, first.end + 0.3)
    clip = w.edits.add_clip_from_marks()
    spoken = [x for x in w.doc.transcript.words]
    assert min(abs(clip.start - x.start) for x in spoken) < 1e-6
    assert min(abs(clip.end - x.end) for x in spoken) < 1e-6

    # the second sentence as a clip, exported with speech subtitles and bold captions
    table = w.speech_panel.table
    table.selectRow(1)
    w.speech_panel.clip_button.click()
    sentence = w.doc.clips[-1]
    assert sentence.source == "speech" and "folder" in sentence.name
    assert w.exports.export([sentence.id], str(tmp_path / "out"), preset="reels",
                            subtitles="srt", captions="bold")
    qtbot.waitUntil(lambda: w.exports.results is not None, timeout=180_000)
    (result,) = w.exports.results
    assert result.status == "done", (result.error, w.errors)
    cues = pysubs2.load(str(result.subtitle_path))
    assert "folder" in " ".join(c.plaintext.lower() for c in cues)

    # the captions preview draws the spoken word over the picture
    w.speech.set_preview(True)
    word = talk.words[2]
    w.speech.overlay.show_at((word.start + word.end) / 2)
    current = w.speech.overlay.current
    assert current is not None
    assert any(run.lit and word.text.upper() in run.text.upper()
               for line in current.lines for run in line)

    # the 9:16 clip selected and played: its crop shows, and the captions are laid inside it,
    # as its export burns them
    w.undo_stack.push(undo.ChangeClip(w.doc, sentence.with_preset("reels"), "Reels"))
    w.clips_panel.select_id(sentence.id)
    w.player.seek(sentence.start + 0.2)
    qtbot.waitUntil(lambda: w.speech.overlay.crop is not None, timeout=15_000)
    area = w.speech.overlay.picture()
    assert abs(area.width() / area.height() - 9 / 16) < 0.02
    inside = next(x for x in talk.words if x.start >= sentence.start)
    w.speech.overlay.show_at((inside.start + inside.end) / 2)
    assert w.speech.overlay.current is not None
    w.reframe.set_shown(False)  # no crop on screen: the whole picture again
    whole = w.speech.overlay.picture()
    assert w.speech.overlay.crop is None and abs(whole.height() - area.height()) < 1
    assert whole.left() <= area.left() and area.right() <= whole.right()
    assert whole.width() > 1.5 * area.width()

    # opened again after a restart: the stored transcript comes back, no Whisper run
    again = make_window()  # the same cache file
    open_and_wait(qtbot, again, talk.path)
    qtbot.waitUntil(lambda: again.doc.transcript is not None, timeout=30_000)
    assert normalise_words(again.doc.transcript.text) == heard
    assert len(again.timeline.data.speech.items) == len(w.doc.transcript.words)
    assert again.speech.job is None


def test_the_library_queue_transcribes_and_search_finds_what_is_said(
        qtbot, make_window, settings, tiny_model, talk, tmp_path) -> None:
    import shutil

    folder = tmp_path / "shoot"
    folder.mkdir()
    shutil.copy(talk.path, folder / "meeting.mp4")
    settings.set("window_seconds", 10.0)
    w = make_window(model=str(tiny_model))
    w.speech.set_with_queue(True)
    w.library.add_folder(str(folder))
    qtbot.waitUntil(lambda: w.library_panel.videos.topLevelItemCount() == 1, timeout=30_000)
    with qtbot.waitSignal(w.engine.modelReady, timeout=120_000):
        w.model_jobs.load_model()
    with qtbot.waitSignal(w.queue.videoAnalysed, timeout=240_000):
        w.library_panel.video_list.queueAllRequested.emit()
    with qtbot.waitSignal(w.library.searched, timeout=30_000):
        w.library.search("launch date")
    best = w.library.result.hits[0]
    assert best.kind == "speech" and best.path.endswith("meeting.mp4")
    launch = next(x for x in talk.words if x.text == "launch")
    assert best.start == pytest.approx(launch.start, abs=0.5)


def test_after_transcribing_the_crop_waits_for_words_before_following_a_mouth(
        qtbot, make_window, tmp_path) -> None:
    video, left, right = two_talking(tmp_path)
    w = open_with_clip(qtbot, make_window, video, Clip(0.0, 10.0, "the two of them", "reels"),
                       analysed=True)

    def on(face: float, t: float) -> bool:
        r = w.reframe.path.crop_at(t)
        return r.x <= face <= r.x + r.w

    assert on(right, 3.0)  # no transcript: her moving mouth is taken for speech
    with qtbot.waitSignal(w.engine.finished, timeout=120_000,
                          check_params_cb=lambda _j, _r, res: isinstance(res, TranscribeResult)):
        w.speech.transcribe()
    qtbot.waitUntil(lambda: w.doc.transcript is not None and on(left, 3.0), timeout=10_000)
    assert on(right, 8.0)  # heard from 4 s: then it is her
