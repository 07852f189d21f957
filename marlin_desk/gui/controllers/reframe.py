"""Reframing in the app: the selected clip's crop drawn over the player at the frame on screen,
dragged by the editor into pins, and the clip's mode (auto / centre / off).

The analysis (workflows.reframe.analyse_clip: the span's detections, cached in files beside the
analysis cache) runs on a ReframeWorker, with its progress and Cancel in the status bar's job
list; until it is done the centre crop shows, dashed. The path from the detections and the pins
is recomputed on the GUI thread on every change (about a millisecond), so a drop, an Undo or a
mode change re-smooths it at once. Every edit (a pin, a removed pin, a mode) is one undo command
on the clip (gui/undo.py ChangeClip); the project saves what the clip holds.

Which clips get a crop is the core's rule (media.reframe default_mode / can_reframe, as
ClipReframing.path_for applies it): presets that crop to another aspect than the source's. Clips
cut from another video (library results) are not on this player: no crop for them.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, cast

from PySide6.QtCore import QObject, QRectF, Signal, Slot
from PySide6.QtGui import QAction, QActionGroup, QUndoStack
from PySide6.QtWidgets import QMenu

from marlin_desk.core.project import Clip
from marlin_desk.core.reframe import REFRAME_LABELS, REFRAME_MODES, Pin
from marlin_desk.gui import undo
from marlin_desk.gui.document import Document
from marlin_desk.gui.media_workers import ReframeWorker
from marlin_desk.gui.notifier import Notifier
from marlin_desk.gui.panels.clips import ClipsPanel
from marlin_desk.gui.player import PlayerWidget
from marlin_desk.gui.reframe_overlay import CropOverlay
from marlin_desk.gui.statusbar import JobBar
from marlin_desk.media.presets import FILLED_PRESETS, Fill, get_preset
from marlin_desk.media.reframe import can_reframe, default_mode
from marlin_desk.media.reframe_path import CropPath
from marlin_desk.workflows.reframe import ClipReframing, ReframeCache, centre_only

log = logging.getLogger(__name__)

Key = tuple[str, float, float, str]  # video, start, end, preset: one analysis


def shown_mode(clip: Clip, info: Any, fill: str | None = None) -> str | None:
    """The mode the export applies to this clip when it draws a crop window ("auto" or
    "centre"), or None when it keeps the preset's own picture: the rule of
    ClipReframing.path_for, answered before any analysis. `fill`: the export's (None: the
    preset's)."""
    p = get_preset(clip.preset)
    chosen = cast(Fill, fill or p.fill)
    if info is None or not (p.width and p.height) or not can_reframe(p, info, chosen):
        return None
    mode = clip.reframe or default_mode(p, info, chosen)
    if mode == "off" or (mode == "centre" and chosen != "crop"):
        return None
    return mode


class ReframeController(QObject):
    pathChanged = Signal()  # the active clip's crop path was recomputed (or went)
    analysed = Signal(str)  # a clip's analysis is in: its id
    cropShown = Signal(object)  # QRectF of the crop drawn, in fractions of the frame, or None

    def __init__(self, doc: Document, stack: QUndoStack, player: PlayerWidget,
                 clips: ClipsPanel, jobs: JobBar, notifier: Notifier, cache: ReframeCache,
                 parent: QObject | None = None,
                 export_fill: Callable[[], str | None] = lambda: None) -> None:
        super().__init__(parent)
        self.doc, self.stack, self.player, self.clips = doc, stack, player, clips
        self.jobs, self.notifier, self.cache = jobs, notifier, cache
        self.export_fill = export_fill  # the fill the next export uses for 9:16 and 1:1
        self.fill: str | None = None  # ...as read at the last refresh
        self.enabled = True  # View > Show Reframe Crop
        self.active: str | None = None  # the clip whose crop is shown (the last selected)
        self.path: CropPath | None = None
        self.draggable = False  # the path follows the subject and is analysed: pins apply
        self._analyses: dict[Key, ClipReframing] = {}
        self._latest: dict[str, ClipReframing] = {}  # clip id -> its last analysis, any span
        self._failed: dict[Key, str] = {}
        self._worker: ReframeWorker | None = None
        self._stopping: list[ReframeWorker] = []
        self._video = ""
        self._menu: QMenu | None = None
        self.overlay = CropOverlay(player.video_item)
        player.view.scene().addItem(self.overlay)
        player.view.fitted.connect(self.overlay.refit)
        player.positionChanged.connect(self._draw)
        doc.clipsChanged.connect(self._on_clips_changed)
        doc.transcriptChanged.connect(self._on_transcript)
        clips.table.selectionModel().selectionChanged.connect(self._on_bin_selection)
        clips.clipActivated.connect(self.set_active)
        clips.model.reframeRequested.connect(self.set_clip_mode)
        self.overlay.dragStarted.connect(player.pause)  # the pin goes on the frame shown
        self.overlay.dragged.connect(self.pin_here)
        self.overlay.menuRequested.connect(self._show_menu)

    # -- which clip ------------------------------------------------------------------------
    @Slot(str)
    def set_active(self, clip_id: str) -> None:
        self.active = clip_id
        # an analysis the editor cancelled is tried again when they come back to the clip
        self._failed = {k: v for k, v in self._failed.items() if v != "cancelled"}
        self.refresh()

    def clip(self) -> Clip | None:
        """The active clip when it is on this player, else None."""
        if self.active is None:
            return None
        try:
            clip = self.doc.clip(self.active)
        except KeyError:
            return None
        return clip if clip.video_of(self.doc.video) == self.doc.video else None

    def _targets(self) -> list[str]:
        """What the menu's actions change: the bin's selection, else the active clip."""
        ids = self.clips.selected_ids()
        if not ids and self.active is not None and any(c.id == self.active
                                                       for c in self.doc.clips):
            ids = [self.active]
        return ids

    @Slot()
    def _on_bin_selection(self, *_: Any) -> None:
        ids = self.clips.selected_ids()
        if ids and ids[0] != self.active:
            self.set_active(ids[0])

    @Slot()
    def _on_clips_changed(self) -> None:
        if self.doc.video != self._video:  # another video: nothing of the last one applies
            self._video = self.doc.video
            self._cancel_worker()
            self._analyses.clear()
            self._latest.clear()
            self._failed.clear()
            self.active = None
        self.refresh()

    # -- the path ----------------------------------------------------------------------------
    def key(self, clip: Clip) -> Key:
        end = min(clip.end, self.doc.duration) if self.doc.duration > 0 else clip.end
        return (self.doc.video, round(clip.start, 6), round(end, 6), clip.preset)

    @Slot()
    def refresh(self) -> None:
        """The active clip's path from what is known now; starts its analysis if needed."""
        clip = self.clip()
        filled = clip is not None and clip.preset in FILLED_PRESETS
        self.fill = self.export_fill() if filled else None
        shown = clip is not None and self.enabled
        mode = shown_mode(clip, self.doc.info, self.fill) if clip is not None and shown else None
        path, draggable = None, False
        if clip is not None and mode is not None:
            key = self.key(clip)
            analysis = self._analyses.get(key)
            if mode == "auto" and analysis is not None:
                path = analysis.path_for(clip.reframe, clip.pins, self.fill)
                draggable = path is not None and path.axis is not None
            else:  # the centre crop: the clip's mode, or a stand-in until the analysis is in
                path = centre_only(self.doc.info, key[1], key[2], clip.preset)
                if mode == "auto" and key not in self._failed:
                    self._start(key, clip)
                    stale = self._latest.get(clip.id)  # before a trim: no jump to the centre
                    if stale is not None and stale.preset == clip.preset:
                        path = stale.path_for(clip.reframe, clip.pins, self.fill) or path
        self.path, self.draggable = path, draggable
        self._draw(self.player.position)
        self.pathChanged.emit()

    @Slot(float)
    def _draw(self, t: float) -> None:
        clip, path = self.clip(), self.path
        if clip is None or path is None or not clip.start <= t < clip.end:
            self._clear()
            return
        if self.fill not in (None, "crop") and not path.shot_at(t).subject:
            self._clear()  # the export shows this shot whole, over its blurred copy
            return
        r = path.crop_at(t)
        self.cropShown.emit(QRectF(r.x / path.frame_w, r.y / path.frame_h, r.w / path.frame_w,
                                   r.h / path.frame_h))
        self.overlay.show_crop(path.frame_w, path.frame_h, r.x, r.y, r.w, r.h,
                               path.axis if self.draggable else None,
                               pinned=self._pin_covering(clip, t) is not None)

    def _clear(self) -> None:
        self.overlay.clear()
        self.cropShown.emit(None)

    def _same_frame(self, a: float, b: float) -> bool:
        return abs(a - b) < 0.5 / self.doc.fps

    def _pin_covering(self, clip: Clip, t: float) -> Pin | None:
        """The pin at this frame, or the held pin whose span this frame is in."""
        return next((p for p in clip.pins if p.covers(t, 0.5 / self.doc.fps)), None)

    # -- the analysis worker -------------------------------------------------------------------
    def _start(self, key: Key, clip: Clip) -> None:
        if self._worker is not None:
            if self._job_key(self._worker) == key:
                return
            self._cancel_worker()
        worker = ReframeWorker(key[0], key[1], key[2], key[3], self.doc.info, self.cache, self)
        worker.progress.connect(self._on_progress)
        worker.analysed.connect(self._on_analysed)
        worker.failed.connect(self._on_failed)
        worker.finished.connect(self._on_worker_finished)
        self._worker = worker
        self.jobs.add(("reframe", key), f"Finding the subject in {clip.name or 'the clip'}",
                      worker.cancel)
        worker.start(worker.Priority.LowPriority)

    @staticmethod
    def _job_key(worker: ReframeWorker) -> Key:
        return (worker.video, worker.start_t, worker.end_t, worker.preset)

    def _cancel_worker(self) -> None:
        if self._worker is not None:
            self._worker.cancel()
            self._stopping.append(self._worker)
            self._worker = None

    @Slot()
    def _on_transcript(self) -> None:
        """What is said decides when a moving mouth is the speaker's: the analyses (all of
        this video's) hear the new transcript, and the crop is recomputed."""
        heard = self.doc.transcript
        self._analyses = {k: a.hearing(heard) for k, a in self._analyses.items()}
        self._latest = {c: a.hearing(heard) for c, a in self._latest.items()}
        self.refresh()

    @Slot(float)
    def _on_progress(self, fraction: float) -> None:
        worker = self.sender()
        if isinstance(worker, ReframeWorker):
            self.jobs.update_job(("reframe", self._job_key(worker)), int(fraction * 1000), 1000)

    @Slot(object)
    def _on_analysed(self, analysis: ClipReframing) -> None:
        worker = self.sender()
        if not isinstance(worker, ReframeWorker) or worker.video != self.doc.video:
            return
        key = self._job_key(worker)
        if self.doc.transcript is not None:  # what the editor sees in the Said lane
            analysis = analysis.hearing(self.doc.transcript)
        self._analyses[key] = analysis
        log.info("reframing analysis of %s-%s: %.2f s%s", key[1], key[2], analysis.seconds,
                 " (cached)" if analysis.cached else "")
        note = analysis.detections.note
        if note:
            self.notifier.notice(f"Reframing: {note}")
        for c in self.doc.clips:
            if self.key(c) == key:
                self._latest[c.id] = analysis
                self.analysed.emit(c.id)
        self.refresh()

    @Slot(str)
    def _on_failed(self, message: str) -> None:
        worker = self.sender()
        if isinstance(worker, ReframeWorker):
            self._failed[self._job_key(worker)] = message
        self.notifier.error(f"The subject could not be followed: {message}. The crop stays "
                            "in the centre.")

    @Slot()
    def _on_worker_finished(self) -> None:
        worker = self.sender()
        if not isinstance(worker, ReframeWorker):
            return
        self.jobs.remove(("reframe", self._job_key(worker)))
        if worker is self._worker:
            self._worker = None
            if worker.cancelled:  # the editor cancelled it: the centre crop, no new try
                self._failed[self._job_key(worker)] = "cancelled"
        if worker in self._stopping:
            self._stopping.remove(worker)
        worker.deleteLater()

    def wait(self, ms: int = 30_000) -> None:
        for w in [self._worker, *self._stopping]:
            if w is not None:
                w.wait(ms)

    def shutdown(self) -> None:
        self._cancel_worker()
        for w in list(self._stopping):
            w.wait(10_000)

    # -- edits: every one an undo command --------------------------------------------------------
    @Slot(int, int)
    def pin_here(self, x: int, y: int) -> None:
        """The editor dropped the crop with its top-left at (x, y) frame pixels: a pin at the
        frame on screen (one at the same frame is replaced; in a held span the hold moves)."""
        clip, path, t = self.clip(), self.path, self.player.position
        if clip is None or path is None or not self.draggable or not clip.start <= t < clip.end:
            self._draw(t)
            return
        held = self._pin_covering(clip, t)
        pin = path.pin_at(t, x, y)
        if held is not None and held.until is not None:
            pin = Pin(held.t, pin.x, pin.y, held.until)
        pin = _as_saved(pin)
        pins = [p for p in clip.pins if p is not held and not self._same_frame(p.t, t)]
        self.stack.push(undo.ChangeClip(self.doc, clip.with_pins([*pins, pin]),
                                        "Move the held crop" if pin.until else "Pin the crop"))

    @Slot()
    def hold_shot(self) -> None:
        """Keep the crop where it is now for the whole shot on screen (within the clip), in
        place of the pins inside it: one held pin from the shot's first to its last frame."""
        clip, path, t = self.clip(), self.path, self.player.position
        if clip is None or path is None or not self.draggable or not clip.start <= t < clip.end:
            self.notifier.transient("Show a frame of a reframed clip first.", 4000)
            return
        shot, rect = path.shot_at(t), path.crop_at(t)
        first = max(shot.start, clip.start)
        last = max(first, min(shot.end, clip.end) - 1.0 / self.doc.fps)
        if last <= first:
            self.notifier.transient("This shot is one frame long: drag the crop instead.", 4000)
            return
        here = path.pin_at(t, rect.x, rect.y)
        held = _as_saved(Pin(first, here.x, here.y, last))
        slack = 0.5 / self.doc.fps
        pins = [p for p in clip.pins if p.end < first - slack or p.t > last + slack] + [held]
        self.stack.push(undo.ChangeClip(self.doc, clip.with_pins(pins), "Hold the crop"))

    @Slot()
    def remove_pin_here(self) -> None:
        """Remove the pin at the frame on screen, or the hold this frame is in."""
        clip, t = self.clip(), self.player.position
        if clip is None:
            return
        here = self._pin_covering(clip, t)
        if here is None:
            self.notifier.transient("No pin at this frame.", 4000)
            return
        pins = [p for p in clip.pins if p is not here]
        self.stack.push(undo.ChangeClip(self.doc, clip.with_pins(pins),
                                        "Release the held crop" if here.until
                                        else "Remove crop pin"))

    @Slot()
    def clear_pins(self) -> None:
        clips = [self.doc.clip(i) for i in self._targets()]
        clips = [c for c in clips if c.pins]
        if not clips:
            self.notifier.transient("The clip has no pins.", 4000)
            return
        self._change([c.with_pins([]) for c in clips], "Clear crop pins")

    def set_mode(self, mode: str | None) -> None:
        """The menu's mode for the selected clips (None: the preset's default)."""
        ids = self._targets()
        if not ids:
            self.notifier.error("Select a clip in the clip bin first.")
            return
        changed = [self.doc.clip(i).with_reframe(mode) for i in ids]
        self._change([c for c in changed if c.reframe != self.doc.clip(c.id).reframe],
                     "Set reframing")

    @Slot(str, object)
    def set_clip_mode(self, clip_id: str, mode: str | None) -> None:
        clip = self.doc.clip(clip_id)
        if clip.reframe != mode:
            self._change([clip.with_reframe(mode)], "Set reframing")

    def _change(self, clips: list[Clip], text: str) -> None:
        if not clips:
            return
        self.stack.beginMacro(text)
        for c in clips:
            self.stack.push(undo.ChangeClip(self.doc, c, text))
        self.stack.endMacro()

    @Slot(bool)
    def set_shown(self, on: bool) -> None:
        """View > Show Reframe Crop."""
        self.enabled = bool(on)
        if not self.enabled:
            self._cancel_worker()
        self.refresh()

    # -- the right-click menu on the picture -----------------------------------------------------
    @Slot(object)
    def _show_menu(self, where: Any) -> None:
        clip = self.clip()
        if clip is None:
            return
        menu = QMenu(self.clips)
        covering = self._pin_covering(clip, self.player.position)
        text = "Release the Held Crop" if covering and covering.until else \
            "Remove Pin at This Frame"
        here = menu.addAction(text, self.remove_pin_here)
        here.setEnabled(covering is not None)
        hold = menu.addAction("Hold the Crop Through This Shot", self.hold_shot)
        hold.setEnabled(self.draggable)
        clear = menu.addAction(f"Clear All Pins ({len(clip.pins)})", self.clear_pins)
        clear.setEnabled(bool(clip.pins))
        menu.addSeparator()
        group = QActionGroup(menu)
        for mode in (None, *REFRAME_MODES):
            action = QAction(mode_text(mode, clip, self.doc.info), menu)
            action.setCheckable(True)
            action.setChecked(clip.reframe == mode)
            action.triggered.connect(lambda _=False, m=mode: self.set_clip_mode(clip.id, m))
            group.addAction(action)
            menu.addAction(action)
        self._menu = menu
        menu.popup(where)


def mode_text(mode: str | None, clip: Clip, info: Any) -> str:
    """How a mode is offered: its label, or the preset's default with what that is."""
    if mode is not None:
        return REFRAME_LABELS[mode]
    p = get_preset(clip.preset)
    default = default_mode(p, info, p.fill) if info is not None else None
    return f"Preset's default ({REFRAME_LABELS[default]})" if default else "Preset's default"


def _as_saved(pin: Pin) -> Pin:
    """The pin rounded as the project file writes it: a reopened project has this very pin."""
    return Pin.from_json(pin.to_json())
