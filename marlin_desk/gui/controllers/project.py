"""The project: what a save writes, opening a .marlin file, the autosave and recovery, and
asking "Save changes?" before anything would drop unsaved work.

Every video has its own project in the app's folder (workflows.video_work_path, by content):
Save writes there, and to the project file too when one is open, so reopening the video
brings its clips back. The autosave is only for a crash.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QObject, Signal, Slot
from PySide6.QtGui import QUndoStack
from PySide6.QtWidgets import QFileDialog, QMessageBox, QWidget

from marlin_desk.core import project as projfile
from marlin_desk.core.errors import MarlinError
from marlin_desk.core.project import Project
from marlin_desk.gui.document import Document
from marlin_desk.gui.notifier import Notifier
from marlin_desk.workflows import saved_project, video_work_path

log = logging.getLogger(__name__)

PROJECT_FILTER = "Marlin Desk projects (*.marlin)"
SAVE, DISCARD, CANCEL = "save", "discard", "cancel"


class ProjectController(QObject):
    saved = Signal(str)  # the path written
    # (path to open, project or None): the window opens the video after the checks
    openRequested = Signal(str, object)

    def __init__(self, doc: Document, stack: QUndoStack, notifier: Notifier, window: QWidget,
                 autosave_dir: Path, playhead: Callable[[], float],
                 ask_save: Callable[[str], str] | None = None,
                 confirm: Callable[[str], bool] | None = None,
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.doc, self.stack, self.notifier, self.window = doc, stack, notifier, window
        self.autosave_dir, self.playhead = autosave_dir, playhead
        self.ask_save = ask_save or self._ask_save
        self.confirm = confirm or self._confirm
        self.path: Path | None = None  # the open .marlin file, if any
        self._path_after_open: Path | None = None

    # -- what a save holds --------------------------------------------------------------------
    def current(self) -> Project:
        d = self.doc
        return Project(video=d.video, fingerprint=d.fingerprint, analysis=d.analysis_ref,
                       events=list(d.events), clips=list(d.clips),
                       extra={"events_edited": d.events_edited, "query": d.query,
                              "playhead": round(self.playhead(), 3)})

    def unsaved(self) -> bool:
        return bool(self.doc.video) and not self.stack.isClean()

    def confirm_discard(self, doing: str) -> bool:
        """Before `doing` drops the open video's unsaved edits: Save / Discard / Cancel.
        True when it may go on."""
        if not self.unsaved():
            return True
        answer = self.ask_save(f"Save the changes to {Path(self.doc.video).name} before "
                               f"{doing}?")
        if answer == SAVE:
            return self.save()
        return answer == DISCARD

    # -- saving ----------------------------------------------------------------------------------
    @Slot()
    def save(self) -> bool:
        """The video's own project, and the open project file when there is one."""
        if not self.doc.video:
            self.notifier.error("Open a video before saving.")
            return False
        targets = [video_work_path(self.doc.fingerprint)] if self.doc.fingerprint else []
        if self.path is not None:
            targets.append(self.path)
        if not targets:
            return self.save_as()
        return self._write(targets)

    @Slot()
    def save_as(self) -> bool:
        start = str(Path(self.doc.video).with_suffix(projfile.SUFFIX)) if self.doc.video else ""
        path, _ = QFileDialog.getSaveFileName(self.window, "Save project", start,
                                              PROJECT_FILTER)
        return bool(path) and self.save_to(path)

    def save_to(self, path: str | os.PathLike[str]) -> bool:
        if not self.doc.video:
            self.notifier.error("Open a video before saving a project.")
            return False
        own = [video_work_path(self.doc.fingerprint)] if self.doc.fingerprint else []
        if not self._write([*own, Path(path)]):
            return False
        self.path = Path(path)
        return True

    def _write(self, targets: list[Path]) -> bool:
        project = self.current()
        try:
            written = [projfile.save(project, t) for t in targets]
        except (OSError, MarlinError) as exc:
            self.notifier.error(f"The project could not be saved: {exc}")
            return False
        self.doc.dirty = False
        self.stack.setClean()
        shown = written[-1]
        self.notifier.transient(f"Saved {shown}", 5000)
        self.saved.emit(str(shown))
        return True

    # -- opening ---------------------------------------------------------------------------------
    @Slot()
    def choose(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self.window, "Open project", "", PROJECT_FILTER)
        if path:
            self.open(path)

    def open(self, path: str | os.PathLike[str], remember: bool = True) -> bool:
        try:
            project = projfile.load(path)
        except MarlinError as exc:
            self.notifier.error(str(exc))
            return False
        if not os.path.isfile(project.video):
            self.notifier.error(f"The project's video is missing: {project.video}")
            return False
        self._path_after_open = Path(path) if remember else None
        self.openRequested.emit(project.video, project)
        return True

    def apply(self, project: Project | None) -> float | None:
        """After the video opened: its saved work (this project, else the video's own).
        Returns the playhead to seek to, if the project has one."""
        self.path, self._path_after_open = self._path_after_open, None
        if project is None:  # the same look-up as `marlin-desk handoff`
            project = saved_project(self.doc.video, self.doc.fingerprint or None)
        if project is None:
            return None
        d = self.doc
        if project.analysis is not None:
            d.analysis_ref = project.analysis
        if project.events is not None:
            d.set_events(project.events, edited=bool(project.extra.get("events_edited", True)))
        d.set_clips(project.clips)
        d.dirty = False
        playhead = project.extra.get("playhead")
        return float(playhead) if playhead else None

    # -- autosave and recovery -------------------------------------------------------------------
    def autosave_path(self) -> Path:
        return self.autosave_dir / "session.marlin"

    @Slot()
    def autosave(self) -> Path | None:
        if not self.doc.video or not self.doc.dirty:
            return None
        project = self.current()
        if self.path:
            project.extra["project_path"] = str(self.path)
        try:
            path = projfile.save(project, self.autosave_path())
        except OSError as exc:
            log.warning("autosave failed: %s", exc)
            return None
        self.doc.dirty = False
        return path

    def recover(self) -> bool:
        """After a crash the autosave is still there: offer to bring the session back."""
        path = self.autosave_path()
        if not path.is_file():
            return False
        if not self.confirm("Marlin Desk did not close properly last time. Recover the "
                            "unsaved work?"):
            path.unlink(missing_ok=True)
            return False
        ok = self.open(path, remember=False)
        if ok:
            self.notifier.notice("Recovered your unsaved work from the last session.")
        return ok

    def closed_cleanly(self) -> None:
        self.autosave_path().unlink(missing_ok=True)

    # -- asking ----------------------------------------------------------------------------------
    def _ask_save(self, question: str) -> str:
        box = QMessageBox(QMessageBox.Icon.Question, "Save changes?", question,
                          QMessageBox.StandardButton.Save | QMessageBox.StandardButton.Discard
                          | QMessageBox.StandardButton.Cancel, self.window)
        box.setInformativeText("Your clips and edits are lost if you don't save them.")
        box.setDefaultButton(QMessageBox.StandardButton.Save)
        answer = box.exec()
        return {QMessageBox.StandardButton.Save: SAVE,
                QMessageBox.StandardButton.Discard: DISCARD}.get(
                    QMessageBox.StandardButton(answer), CANCEL)

    def _confirm(self, question: str) -> bool:
        answer = QMessageBox.question(self.window, "Marlin Desk", question)
        return answer == QMessageBox.StandardButton.Yes
