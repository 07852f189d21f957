"""Exporting clips: the dialog (what and where), the export worker, its progress in the clip
bin and the status bar, and the outcome in plain words."""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, Signal, Slot
from PySide6.QtWidgets import QDockWidget, QWidget

from marlin_desk.core.errors import MarlinError
from marlin_desk.gui.document import Document
from marlin_desk.gui.media_workers import ExportWorker
from marlin_desk.gui.notifier import Notifier
from marlin_desk.gui.panels.clips import ClipsPanel
from marlin_desk.gui.settings import Settings
from marlin_desk.gui.statusbar import JobBar
from marlin_desk.gui.timefmt import count
from marlin_desk.media.audio import AUDIO_CHANNEL_CHOICES, LOUDNESS_TARGETS
from marlin_desk.media.encoders import DEFAULT_ENCODER
from marlin_desk.media.export import ClipSpec, ExportOptions
from marlin_desk.media.export_sources import SourceClips
from marlin_desk.media.naming import DEFAULT_TEMPLATE
from marlin_desk.media.presets import DEFAULT_SPEED, FILLED_PRESETS, default_mode
from marlin_desk.media.subtitle_sources import default_subtitle_source
from marlin_desk.workflows import video_events
from marlin_desk.workflows.speech import cached_transcript

WAIT, CANCEL_EXPORT, STAY = "wait", "cancel", "stay"


class ExportController(QObject):
    exportDone = Signal(object)  # list[ExportResult]
    finishedAll = Signal()  # the export thread has ended (a quit may wait for it)
    choicesChanged = Signal()  # the export dialog's choices were kept for the next export

    def __init__(self, doc: Document, settings: Settings, notifier: Notifier, jobs: JobBar,
                 clips: ClipsPanel, clips_dock: QDockWidget, window: QWidget,
                 parent: QObject | None = None, cache: Any = None,
                 reframe_detections: Any = None) -> None:
        super().__init__(parent)
        self.cache = cache  # for the events of clips cut from other videos
        # the preview's reframing detections (workflows.reframe.ReframeCache.detections)
        self.reframe_detections = reframe_detections
        self.doc, self.settings, self.notifier, self.jobs = doc, settings, notifier, jobs
        self.clips, self.clips_dock, self.window = clips, clips_dock, window
        self.worker: ExportWorker | None = None
        self.results: list[Any] | None = None
        self.dialog: Any = None
        self.handoff_worker: Any = None
        self.handoff_result: Any = None
        progress = clips.export_progress
        progress.cancelClip.connect(self.cancel_clip)
        progress.cancelAll.connect(self.cancel)
        clips.exportRequested.connect(self.request)
        clips.model.exportForDragRequested.connect(self.export_for_drag)
        self._ids: list[str] = []  # the clips of the running export, in order

    @property
    def running(self) -> bool:
        return self.worker is not None

    def ask_before_quit(self) -> str:
        """An export runs and the editor quits: wait for it (the app closes when it is done),
        cancel it and quit, or keep working."""
        from PySide6.QtWidgets import QMessageBox

        left = len(self.clips.export_progress.bars)
        box = QMessageBox(QMessageBox.Icon.Question, "An export is running",
                          f"Marlin Desk is still exporting {count(left, 'clip')}.",
                          parent=self.window)
        box.setInformativeText("Quit when it is done, or cancel it and quit now? Clips "
                               "already exported are kept.")
        wait = box.addButton("Quit When Done", QMessageBox.ButtonRole.AcceptRole)
        cancel = box.addButton("Cancel Export and Quit", QMessageBox.ButtonRole.DestructiveRole)
        box.addButton("Keep Working", QMessageBox.ButtonRole.RejectRole)
        box.setDefaultButton(wait)
        box.exec()
        return {wait: WAIT, cancel: CANCEL_EXPORT}.get(box.clickedButton(), STAY)

    @Slot(list)
    def request(self, ids: list[str]) -> None:
        """Ask how to export (preset, fill, mode, subtitles, folder), then export."""
        if not ids:
            self.notifier.error("There are no clips to export: add some to the clip bin first.")
            return
        if self.running:
            self.notifier.error("An export is already running.")
            return
        from marlin_desk.gui.dialogs.export import ExportDialog

        dialog = ExportDialog(len(ids), str(self.settings.export_dir), bool(self.doc.events),
                              self.window, last=self.settings.export_choices(),
                              presets=self.settings.export_presets(),
                              has_transcript=self._has_transcript())
        dialog.presetSaved.connect(self.settings.save_export_preset)
        dialog.accepted.connect(lambda: self._accepted(list(ids), dialog.choices()))
        dialog.finished.connect(dialog.deleteLater)
        self.dialog = dialog
        dialog.open()

    def _accepted(self, ids: list[str], choices: dict[str, Any]) -> None:
        self.settings.set_export_choices(choices)  # offered again next time
        self.choicesChanged.emit()
        self.export(ids, **choices)

    def export(self, ids: list[str], out_dir: str | None = None, *, preset: str | None = None,
               fill: str | None = None, mode: str = "auto", subtitles: str = "none",
               encoder: str = DEFAULT_ENCODER, loudness: str = "keep",
               channels: str = "keep", speed: str = DEFAULT_SPEED, audio_kbps: str = "",
               template: str = DEFAULT_TEMPLATE, source: str | None = None,
               captions: str | None = None) -> bool:
        """Export the clips; `preset` None keeps each clip's own; mode "auto" is the media
        layer's default for each clip's preset. Subtitles are made from the events as edited
        in the Events panel or from what is said (`source`; None: speech when the video has a
        transcript); `captions` burns what is said in that caption style."""
        if not ids:
            self.notifier.error("There are no clips to export: add some to the clip bin first.")
            return False
        if self.running:
            self.notifier.error("An export is already running.")
            return False
        if not self.doc.video:
            self.notifier.error("Open a video before exporting clips.")
            return False
        clips = self._by_source([self.doc.clip(i) for i in ids])
        sources: dict[str, SourceClips] = {}
        for c in clips:
            p = preset or c.preset
            clip_mode = default_mode(p) if mode == "auto" else mode
            video = c.video_of(self.doc.video)
            if video not in sources:  # another video's are read on the export thread
                own = video == self.doc.video
                events: Any = list(self.doc.events) if own \
                    else partial(video_events, video, self.cache)
                transcript: Any = self.doc.transcript if own \
                    else partial(cached_transcript, video, cache=self.cache)
                sources[video] = SourceClips(video, [], events, transcript,
                                             detections=self.reframe_detections)
            sources[video].clips.append(ClipSpec(
                c.start, c.end, c.name, preset=p, mode=clip_mode,  # type: ignore[arg-type]
                fill=fill if p in FILLED_PRESETS else None,  # type: ignore[arg-type]
                subtitles=subtitles, captions=captions or None,  # type: ignore[arg-type]
                reframe=c.reframe, pins=c.pins))  # the clip's own mode and the editor's pins
        target = out_dir or str(self.settings.export_dir)
        source = source or default_subtitle_source(self._has_transcript())
        try:
            worker = ExportWorker(list(sources.values()), target, self,
                                  options=ExportOptions(
                                      Path(target), name_template=template, speed=speed,
                                      subtitle_source=source,  # type: ignore[arg-type]
                                      encoder=encoder, loudness=LOUDNESS_TARGETS.get(loudness),
                                      audio_channels=AUDIO_CHANNEL_CHOICES.get(channels),
                                      audio_kbps=int(audio_kbps) if audio_kbps else None))
        except (MarlinError, OSError, ValueError) as exc:
            self.notifier.error(f"The export could not start: {exc}")
            return False
        ids = [c.id for c in clips]
        specs = [spec for source in sources.values() for spec in source.clips]
        worker.progress.connect(self._on_progress)
        worker.clipDone.connect(self._on_clip_done)
        worker.done.connect(self._on_done)
        worker.failed.connect(self._on_failed)
        worker.finished.connect(self._on_thread_finished)
        self.worker, self.results, self._ids = worker, None, list(ids)
        self.clips_dock.show()
        self.clips.export_progress.start([c.name for c in clips])
        self.jobs.add("export", f"Exporting {count(len(specs), 'clip')}", worker.cancel)
        worker.start()
        return True

    def _has_transcript(self) -> bool:
        return self.doc.transcript is not None and bool(self.doc.transcript.segments)

    def _by_source(self, clips: list[Any]) -> list[Any]:
        """The clips grouped by the video they are cut from (the open video's first), each
        group in the bin's order: one export pass per file."""
        order = list(dict.fromkeys([self.doc.video] + [c.video_of(self.doc.video)
                                                       for c in clips]))
        return sorted(clips, key=lambda c: order.index(c.video_of(self.doc.video)))

    # -- hand-off to an NLE ------------------------------------------------------------------
    @Slot()
    def request_handoff(self) -> None:
        if not self.doc.video:
            self.notifier.error("Open a video first.")
            return
        if not self.doc.clips:
            self.notifier.error("Add clips to the clip bin first: they become the timeline.")
            return
        from marlin_desk.gui.dialogs.handoff import HandoffDialog

        dialog = HandoffDialog(self.doc.video, len(self.doc.clips),
                               self.settings.get("handoff_target") or None, self.window)
        dialog.accepted.connect(lambda: self.handoff(*dialog.choices()))
        dialog.finished.connect(dialog.deleteLater)
        self.dialog = dialog
        dialog.open()

    def handoff(self, target: str, out: str | None = None) -> None:
        """Write the timeline on a worker; the outcome is said in the message bar."""
        from marlin_desk.gui.dialogs.handoff import HandoffWorker
        from marlin_desk.handoff import SearchHit

        self.settings.set("handoff_target", target)
        searches = [SearchHit(self.doc.query, s) for s in self.doc.results]
        worker = HandoffWorker(self.doc.video, target, out or None, list(self.doc.clips),
                               list(self.doc.events), searches, self)
        worker.written.connect(self._on_handoff_written)
        worker.failed.connect(lambda m: self.notifier.error(f"The timeline was not written: {m}"))
        worker.finished.connect(lambda: self.jobs.remove("handoff"))
        worker.finished.connect(worker.deleteLater)
        self.handoff_worker = worker
        self.jobs.add("handoff", "Writing the timeline", None)
        worker.start()

    @Slot(object)
    def _on_handoff_written(self, result: Any) -> None:
        from marlin_desk.handoff import target

        self.handoff_result = result
        self.notifier.notice(f"Timeline written to {result.path} — {target(result.target).help}")

    @Slot()
    def cancel(self) -> None:
        if self.worker is not None:
            self.worker.cancel()

    @Slot(int)
    def cancel_clip(self, index: int) -> None:
        if self.worker is not None:
            self.worker.cancel_clip(index)

    def wait(self, ms: int = 10_000) -> None:
        if self.worker is not None:
            self.worker.wait(ms)

    @Slot(int, float, float)
    def _on_progress(self, index: int, clip: float, overall: float) -> None:
        self.clips.export_progress.set_progress(index, clip, overall)
        self.jobs.update_job("export", int(overall * 1000), 1000, -1.0, f"clip {index + 1}")

    @Slot(list)
    def export_for_drag(self, ids: list[str]) -> None:
        """Clips dragged out of the bin before they had a file: exported now with the last
        export's settings, to the export folder; the next drag carries the files."""
        if self.running:
            self.notifier.error("An export is running: drag the clips again when it is done.")
            return
        choices = {k: v for k, v in self.settings.export_choices().items() if v is not None}
        if self.export(ids, **choices):
            self.notifier.notice(f"Exporting {count(len(ids), 'clip')} to drag: drag again "
                                 "when the export is done.")

    @Slot(object)
    def _on_clip_done(self, result: Any) -> None:
        self.clips.export_progress.set_result(result)
        if result.status == "done" and result.path and 0 < result.index <= len(self._ids):
            self.clips.model.exported[self._ids[result.index - 1]] = result.path

    @Slot(object)
    def _on_done(self, results: object) -> None:
        res: list[Any] = list(results)  # type: ignore[call-overload]
        self.results = res
        done = [r for r in res if r.status == "done"]
        failed = [r for r in res if r.status == "failed"]
        if failed:
            self.notifier.error(f"{len(failed)} of {count(len(res), 'clip')} failed to export: "
                                f"{failed[0].error}")
        elif done:
            folder = done[0].path.parent if done[0].path else ""
            skipped = len(res) - len(done)
            more = f" ({skipped} cancelled)" if skipped else ""
            self.notifier.notice(f"Exported {count(len(done), 'clip')} to {folder}{more}")
        else:
            self.notifier.transient("Export cancelled", 5000)
        self.exportDone.emit(res)

    @Slot(str)
    def _on_failed(self, message: str) -> None:
        self.results = []
        self.notifier.error(f"The export failed: {message}")

    @Slot()
    def _on_thread_finished(self) -> None:
        self.jobs.remove("export")
        self.clips.export_progress.finish()
        if self.worker is not None:
            self.worker.deleteLater()
        self.worker = None
        self.finishedAll.emit()
