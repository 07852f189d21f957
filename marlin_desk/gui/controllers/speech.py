"""What is said in the open video: its stored transcript shown when it opens, Transcribe on the
model worker (TranscribeRequest: workflows.speech.transcribe, chunk by chunk, resumable; the
"Said" lane and table fill as chunks finish), the library queue transcribing after each
analysis when asked, and the captions previewed over the player."""

from __future__ import annotations

import os
from typing import Any

from PySide6.QtCore import QObject, QSizeF, QTimer, SignalInstance, Slot

from marlin_desk.core.transcript import Segment, Transcript
from marlin_desk.gui.caption_overlay import CaptionOverlay
from marlin_desk.gui.controllers.edits import EditsController
from marlin_desk.gui.controllers.library import LibraryController
from marlin_desk.gui.document import Document
from marlin_desk.gui.notifier import Notifier
from marlin_desk.gui.panels.speech import SpeechPanel
from marlin_desk.gui.player import PlayerWidget
from marlin_desk.gui.settings import Settings
from marlin_desk.gui.timefmt import count
from marlin_desk.gui.timeline import TimelineWidget
from marlin_desk.gui.worker import EngineClient
from marlin_desk.gui.worker_protocol import TranscribeRequest, TranscribeResult

FLUSH_MS = 250  # chunks arriving close together are shown together


class SpeechController(QObject):
    def __init__(self, doc: Document, engine: EngineClient, settings: Settings,
                 notifier: Notifier, player: PlayerWidget, library: LibraryController,
                 opened: SignalInstance, panel: SpeechPanel, timeline: TimelineWidget,
                 edits: EditsController, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.doc, self.engine, self.settings, self.notifier = doc, engine, settings, notifier
        self.player, self.library, self.timeline = player, library, timeline
        panel.transcribeRequested.connect(self.transcribe)
        panel.seekRequested.connect(lambda t: (player.clear_loop(), player.seek(t)))
        panel.clipsRequested.connect(edits.add_clips_from_speech)
        self.job: int | None = None
        self.with_queue = False  # the library's queue transcribes after each analysis
        self._chunks: dict[int, Any] = {}
        self._flush = QTimer(self)
        self._flush.setSingleShot(True)
        self._flush.setInterval(FLUSH_MS)
        self._flush.timeout.connect(self._show_partial)
        self.overlay = CaptionOverlay(player.video_item)
        player.view.scene().addItem(self.overlay)
        player.positionChanged.connect(self.overlay.show_at)
        doc.transcriptChanged.connect(self._on_transcript)
        opened.connect(self._on_opened)
        engine.window.connect(self._on_chunk)
        engine.finished.connect(self._on_finished)
        engine.failed.connect(self._on_failed)
        engine.cancelled.connect(self._on_cancelled)

    # -- the stored transcript ---------------------------------------------------------------
    @Slot(str)
    def _on_opened(self, path: str) -> None:
        """The stored transcript of the video just opened, read off the GUI thread."""
        from marlin_desk.workflows.speech import cached_transcript

        self.job, self._chunks = None, {}
        cache = self.library.cache
        if cache is None:
            return
        self.library._run(lambda: (path, cached_transcript(path, cache=cache)), self._on_cached)

    def _on_cached(self, outcome: tuple[str, Transcript | None]) -> None:
        path, transcript = outcome
        if transcript is not None and os.path.abspath(path) == self.doc.video \
                and self.doc.transcript is None:
            self.doc.set_transcript(transcript)

    # -- transcribing ------------------------------------------------------------------------
    @Slot()
    def transcribe(self) -> int | None:
        if not self.doc.video:
            self.notifier.error("Open a video first, then transcribe what is said in it.")
            return None
        if self.job is not None:
            return self.job
        self._chunks = {}
        self.job = self.engine.submit(TranscribeRequest(
            self.doc.video, self.doc.info, str(self.settings.get("speech_model") or ""),
            str(self.settings.get("speech_language") or "auto")))
        return self.job

    @Slot(bool)
    def set_with_queue(self, on: bool) -> None:
        self.with_queue = bool(on)

    @Slot(int, object)
    def _on_chunk(self, job: int, chunk: object) -> None:
        if job == self.job:
            self._chunks[int(getattr(chunk, "index", len(self._chunks)))] = chunk
            if not self._flush.isActive():
                self._flush.start()

    def _show_partial(self) -> None:
        """What is heard so far, in order, while the rest is transcribed."""
        if self.job is None or not self._chunks:
            return
        segments: list[Segment] = [s for i in sorted(self._chunks)
                                   for s in self._chunks[i].segments]
        self.doc.set_transcript(Transcript(None, tuple(segments), note="transcribing…"))

    @Slot(int, object, object)
    def _on_finished(self, job: int, _request: object, result: object) -> None:
        if job != self.job or not isinstance(result, TranscribeResult):
            return
        self.job = None
        self._flush.stop()
        transcript: Transcript = result.transcript
        if os.path.abspath(result.video) != self.doc.video:
            return
        self.doc.set_transcript(transcript)
        if transcript.segments:
            self.notifier.transient(f"Transcribed {count(len(transcript.words), 'word')}", 6000)
        else:
            self.notifier.notice(f"Nothing to caption: {transcript.note or 'no speech found'}")
        self.library.refresh()

    @Slot(int, object, str)
    def _on_failed(self, job: int, _request: object, message: str) -> None:
        if job == self.job:
            self.job = None
            self.notifier.error(f"The transcription stopped: {message}")

    @Slot(int, object)
    def _on_cancelled(self, job: int, _request: object) -> None:
        if job == self.job:
            self.job = None
            self._flush.stop()
            self.doc.set_transcript(None)  # the finished chunks are kept: Transcribe resumes

    # -- the captions' preview ---------------------------------------------------------------
    @Slot(bool)
    def set_preview(self, on: bool) -> None:
        self.overlay.setVisible(bool(on))
        self._on_transcript()
        self.overlay.show_at(self.player.position)

    def _on_transcript(self) -> None:
        info = self.doc.info
        self.overlay.frame = QSizeF(info.width, info.height) if info is not None else QSizeF()
        words = self.doc.transcript.words if self.doc.transcript is not None else []
        self.timeline.data.set_words(words)  # the "Said" lane
        self.timeline.relayout()
        self.overlay.set_words(words, str(self.settings.get("caption_style")))
        self.overlay.current = None
        self.overlay.show_at(self.player.position)
