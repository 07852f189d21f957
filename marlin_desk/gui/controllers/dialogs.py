"""The window's dialogs: Preferences (applied when accepted), About, the shortcut sheet, the
model download, and the theme."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QObject, Slot
from PySide6.QtWidgets import QApplication, QWidget

from marlin_desk.gui.controllers.model_jobs import ModelJobs
from marlin_desk.gui.notifier import Notifier
from marlin_desk.gui.settings import MODEL_KEYS, Settings
from marlin_desk.gui.timefmt import set_display


class Dialogs(QObject):
    def __init__(self, window: QWidget, settings: Settings, model_jobs: ModelJobs,
                 notifier: Notifier, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.window, self.settings, self.model_jobs = window, settings, model_jobs
        self.notifier = notifier
        self.preferences: Any = None
        self.about: Any = None
        self.download: Any = None

    def show_preferences(self) -> None:
        """Non-blocking (open, not exec): OK saves the settings and applies them."""
        from marlin_desk.gui.dialogs.preferences import PreferencesDialog

        before = {k: self.settings.get(k) for k in MODEL_KEYS}
        dialog = PreferencesDialog(self.settings, self.window)
        dialog.accepted.connect(lambda: self.apply_preferences(before))
        dialog.finished.connect(dialog.deleteLater)
        self.preferences = dialog
        dialog.open()

    def apply_preferences(self, before: dict[str, Any] | None = None) -> None:
        """The theme now; a changed backend, device, model or server reloads a loaded model;
        the window length and export folder are read at each use."""
        self.set_theme(self.settings.get("theme"))

        set_display(mode=self.settings.get("time_display"))  # every time shown repaints
        changed = before is not None and any(self.settings.get(k) != before.get(k)
                                             for k in MODEL_KEYS)
        if changed and self.model_jobs.busy_with_model():
            self.model_jobs.load_model()
            self.notifier.transient("Reloading the model with the new settings…")

    def show_about(self) -> None:
        from marlin_desk.gui.dialogs.about import AboutDialog

        dialog = AboutDialog(self.model_jobs.model_info, self.window)
        dialog.finished.connect(dialog.deleteLater)
        self.about = dialog
        dialog.open()

    def show_shortcuts(self) -> None:
        from marlin_desk.gui.dialogs.shortcuts import ShortcutsDialog

        ShortcutsDialog(self.window).exec()

    def show_model_download(self) -> None:
        from marlin_desk.gui.dialogs.download import DownloadDialog

        if self.download is None:
            self.download = DownloadDialog(self.window)
            self.download.downloaded.connect(self._on_downloaded)
        self.download.show()

    @Slot(str)
    def _on_downloaded(self, model_id: str) -> None:
        from marlin_desk.models.catalogue import DEFAULT_SPEECH_MODEL, speech_entry

        entry = speech_entry(model_id)
        if entry is not None:  # nothing to load now: each transcription opens its model
            if entry.id != DEFAULT_SPEECH_MODEL or self.settings.get("speech_model"):
                self.settings.set("speech_model", entry.alias)  # downloaded to be used
            self.notifier.notice(f"{model_id} is downloaded; Transcribe Speech uses it now "
                                 f"(Preferences > Speech model).")
            return
        self.notifier.notice(f"{model_id} is downloaded; loading it.")
        self.model_jobs.load_model()

    def set_theme(self, name: str) -> None:
        from marlin_desk.gui.theme import apply_theme

        self.settings.set("theme", name)
        app = QApplication.instance()
        if isinstance(app, QApplication):
            apply_theme(app, name)
        self.window.update()
