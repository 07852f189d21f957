"""The model download dialog against the fake hub (tests/models/fake_hub.py): progress on the
bar and in words, Cancel, Download again resuming, a checksum failure, offline; and a finished
download is the model the window loads next, without a restart."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from marlin_desk.gui.dialogs.download import DownloadDialog, offline_message
from marlin_desk.models import DEFAULT_MODEL, PARTIAL_DIR, ModelManager
from marlin_desk.models.choice import DEMO_SENTENCE, choose_model
from marlin_desk.models.speech import choose_speech_model
from tests.models.fake_hub import MODEL, FakeHub, model_files

TRAINED = Path(__file__).resolve().parents[2] / "resources" / "models" / "marlin-tiny-trained"
BIG = "model-00002-of-00002.safetensors"
WAIT = 30_000


def dialog_for(qtbot, manager: ModelManager) -> DownloadDialog:
    manager.progress_interval = 0.0  # every chunk reported
    dialog = DownloadDialog(manager=manager)
    qtbot.addWidget(dialog)
    dialog.show()
    assert dialog.model_id() == DEFAULT_MODEL == MODEL
    return dialog


def finished(dialog: DownloadDialog) -> bool:
    return not dialog.busy() and dialog.start.isEnabled()


def test_progress_reaches_the_bar_and_the_words(qtbot, hub: FakeHub,
                                                manager: ModelManager) -> None:
    hub.add(MODEL, model_files(weights=400_000))
    dialog = dialog_for(qtbot, manager)
    values: list[int] = []
    words: list[str] = []
    dialog.bar.valueChanged.connect(values.append)
    shown = dialog._on_progress

    def show_and_read(p: object) -> None:  # connected by start_download, before any report
        shown(p)
        words.append(dialog.status.text())

    dialog._on_progress = show_and_read  # type: ignore[method-assign]
    with qtbot.waitSignal(dialog.downloaded, timeout=WAIT) as done:
        dialog.start.click()
        assert dialog.bar.isVisible() and dialog.cancel.isEnabled()
        assert not dialog.start.isEnabled()
    qtbot.waitUntil(lambda: finished(dialog), timeout=WAIT)
    assert done.args == [MODEL]
    assert values == sorted(values) and values[-1] == 1000
    assert any(0 < v < 1000 for v in values)  # it moved, not just jumped to the end
    assert any(w.startswith(f"download: {BIG} — ") and " of " in w for w in words)
    assert dialog.status.text().startswith(f"{MODEL} is downloaded and verified")
    assert "State here: verified" in dialog.licence.text()
    assert manager.status(MODEL).state == "verified"


def test_cancel_keeps_the_partial_files_and_download_again_resumes(
        qtbot, hub: FakeHub, manager: ModelManager) -> None:
    files = model_files(weights=1_000_000)
    hub.add(MODEL, files)
    reached, release = threading.Event(), threading.Event()

    def pause_in_the_big_file(name: str, offset: int) -> None:
        if name == BIG and offset >= 300_000 and not reached.is_set():
            reached.set()
            release.wait(WAIT / 1000)  # the download thread waits here for Cancel

    hub.on_chunk = pause_in_the_big_file
    dialog = dialog_for(qtbot, manager)
    dialog.start.click()
    qtbot.waitUntil(reached.is_set, timeout=WAIT)
    dialog.cancel.click()
    assert dialog.status.text() == "Cancelling…"
    release.set()
    qtbot.waitUntil(lambda: finished(dialog), timeout=WAIT)
    assert dialog.status.text() == \
        "Download cancelled. Download again to go on where it stopped."
    assert not dialog.cancel.isEnabled()
    folder = manager.folder_for(MODEL)
    part = folder / PARTIAL_DIR / (BIG + ".part")
    kept = part.stat().st_size
    assert 300_000 <= kept < len(files[BIG])  # the partial file stays for the resume
    assert (folder / "model-00001-of-00002.safetensors").is_file()  # the finished shard too
    assert manager.status(MODEL).state == "partial" and manager.installed_folder(MODEL) is None
    assert "State here: partial" in dialog.licence.text()

    hub.on_chunk, hub.requests, hub.served = None, [], {}
    with qtbot.waitSignal(dialog.downloaded, timeout=WAIT):
        dialog.start.click()  # Download again
    qtbot.waitUntil(lambda: finished(dialog), timeout=WAIT)
    assert hub.fetched(BIG) == [kept]
    assert hub.served == {BIG: len(files[BIG]) - kept}  # nothing already here came again
    assert (folder / BIG).read_bytes() == files[BIG]
    assert manager.status(MODEL).state == "verified"
    assert dialog.status.text().startswith(f"{MODEL} is downloaded and verified")


def test_a_checksum_failure_is_shown_and_the_model_is_not_usable(
        qtbot, hub: FakeHub, manager: ModelManager) -> None:
    hub.add(MODEL, model_files())
    hub.corrupt.add(BIG)
    dialog = dialog_for(qtbot, manager)
    emitted: list[str] = []
    dialog.downloaded.connect(emitted.append)
    dialog.start.click()
    qtbot.waitUntil(lambda: finished(dialog), timeout=WAIT)
    text = dialog.status.text()
    assert text.startswith("The download failed: ")
    assert f"{BIG} of {MODEL} does not match the hub's checksum" in text
    assert "Traceback" not in text and "\n" not in text
    assert not dialog.bar.isVisible() and not emitted
    status = manager.status(MODEL)
    assert not status.usable and manager.installed_folder(MODEL) is None
    assert not (manager.folder_for(MODEL) / BIG).exists()
    assert "State here: verified" not in dialog.licence.text()


def test_offline_the_dialog_says_how_to_bring_the_model(qtbot, manager: ModelManager,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    dialog = dialog_for(qtbot, manager)
    dialog.start.click()
    assert dialog.status.text() == offline_message(MODEL)
    assert f"models pull --from FOLDER {MODEL}" in dialog.status.text()
    assert dialog._pull is None and not dialog.bar.isVisible() and dialog.start.isEnabled()


def test_a_downloaded_model_is_what_the_window_loads_next(qtbot, hub: FakeHub,
                                                         make_window) -> None:
    """The window's own Download dialog (the app's models folder, ModelManager()); the hub
    serves the trained tiny model's files as Marlin-2B, so the reload really loads them."""
    hub.add(MODEL, {p.name: p.read_bytes() for p in TRAINED.iterdir() if p.is_file()})
    w = make_window()
    with qtbot.waitSignal(w.engine.modelReady, timeout=120_000):
        w.model_jobs.load_model()
    assert DEMO_SENTENCE in w.model_label.toolTip()  # nothing downloaded yet: the demo model
    assert "demo model" in w.model_label.text()

    w.dialogs.show_model_download()
    dialog = w.dialogs.download
    with qtbot.waitSignal(w.engine.modelReady, timeout=120_000), \
            qtbot.waitSignal(dialog.downloaded, timeout=WAIT):
        dialog.start.click()  # downloaded -> dialogs._on_downloaded -> load_model
    assert w.model_jobs.model_info["model"] == MODEL
    assert f"{MODEL} from the models folder" in w.model_label.text()
    assert choose_model().source == "pulled"
    assert ModelManager().status(MODEL).state == "verified"
    qtbot.waitUntil(lambda: finished(dialog), timeout=WAIT)
    assert not w.errors


def test_a_speech_model_is_downloaded_from_the_same_dialog(qtbot, hub: FakeHub,
                                                          make_window) -> None:
    base = "Systran/faster-whisper-base"
    hub.add(base, {"config.json": b'{"lang_ids": [1, 2]}', "model.bin": b"CT2" * 40_000,
                   "tokenizer.json": b"{}", "vocabulary.txt": b"a\nb\n"})
    w = make_window()
    w.dialogs.show_model_download()
    dialog = w.dialogs.download
    names = [dialog.model.itemText(i) for i in range(dialog.model.count())]
    assert any(n.startswith("Speech: small — Systran/faster-whisper-small") for n in names)
    dialog.model.setCurrentIndex(dialog.model.findData(base))
    with qtbot.waitSignal(dialog.downloaded, timeout=WAIT) as done:
        dialog.start.click()
    assert done.args == [base]
    qtbot.waitUntil(lambda: finished(dialog), timeout=WAIT)
    assert ModelManager().status(base).state == "verified"
    # chosen for the next transcription; the Marlin model is not reloaded for it
    assert w.settings.get("speech_model") == "base"
    assert "Transcribe Speech uses it" in w.notice.text()
    assert choose_speech_model(w.settings.get("speech_model")).source == "user"
