"""Preferences: backend (and its server), device, model, window length, export folder, default
preset, theme, time display (seconds or timecode)."""

from __future__ import annotations

from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QWidget,
)

from marlin_desk.core import options
from marlin_desk.gui.panels.clips import preset_label, preset_names
from marlin_desk.gui.settings import Settings
from marlin_desk.media.caption_styles import CAPTION_STYLES
from marlin_desk.models.catalogue import SPEECH_CATALOGUE

# The languages offered first (any other Whisper code can be typed): the ones most editors use.
SPEECH_LANGUAGES = ("en", "de", "fr", "es", "it", "pt", "nl", "pl", "ja", "zh", "ko", "ru")


class PreferencesDialog(QDialog):
    def __init__(self, settings: Settings, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Preferences")
        self.settings = settings
        self.backend = QComboBox()
        self.backend.addItems(list(options.BACKENDS))
        self.backend.setCurrentText(settings.get("backend"))
        # the remote backend's server (docs/serving.md); used only when the backend is remote
        self.server_url = QLineEdit(settings.get("server_url"))
        self.server_url.setPlaceholderText("http://HOST:8000/v1")
        self.server_model = QLineEdit(settings.get("server_model"))
        self.server_model.setPlaceholderText("empty: the server's only model")
        self.server_api_key = QLineEdit(settings.get("server_api_key"))
        self.server_api_key.setEchoMode(QLineEdit.EchoMode.Password)
        self.server_api_key.setPlaceholderText("only if the server was started with --api-key")
        self.server_windows_in_flight = QSpinBox()
        self.server_windows_in_flight.setRange(1, 64)
        self.server_windows_in_flight.setValue(int(settings.get("server_windows_in_flight")))
        self.device = QComboBox()
        self.device.addItems(list(options.DEVICES))
        self.device.setCurrentText(settings.get("device"))
        self.model = QLineEdit(settings.get("model"))
        self.model.setPlaceholderText("empty: Marlin-2B if downloaded, else the demo model")
        browse = QPushButton("Browse…")
        browse.clicked.connect(self._browse_model)
        model_row = QHBoxLayout()
        model_row.addWidget(self.model, 1)
        model_row.addWidget(browse)
        self.window = QDoubleSpinBox()
        self.window.setRange(options.MIN_WINDOW_SECONDS, options.MAX_WINDOW_SECONDS)
        self.window.setSuffix(" s")
        self.window.setValue(float(settings.get("window_seconds")))
        self.export_dir = QLineEdit(str(settings.export_dir))
        self.preset = QComboBox()
        for name in preset_names():
            self.preset.addItem(preset_label(name), name)
        self.preset.setCurrentIndex(max(0, self.preset.findData(settings.get("default_preset"))))
        self.theme = QComboBox()
        self.theme.addItems(list(options.THEMES))
        self.theme.setCurrentText(settings.get("theme"))
        self.time_display = QComboBox()
        self.time_display.addItems(list(options.TIME_DISPLAYS))
        self.time_display.setCurrentText(settings.get("time_display"))
        self.time_display.setToolTip("Show times in seconds (0:07.500) or as the video's "
                                     "timecode (00:00:07:12); both can be typed")
        self.speech_model = QComboBox()
        self.speech_model.addItem("Automatic (small if downloaded, else the bundled tiny.en)", "")
        for entry in SPEECH_CATALOGUE:
            self.speech_model.addItem(f"{entry.alias} — {entry.note}", entry.alias)
        self.speech_model.setCurrentIndex(max(0, self.speech_model.findData(
            settings.get("speech_model"))))
        self.speech_language = QComboBox()
        for code in (options.SPEECH_LANGUAGE_AUTO, *SPEECH_LANGUAGES):
            self.speech_language.addItem(code, code)
        self.speech_language.setEditable(True)  # any code Whisper knows can be typed
        self.speech_language.setCurrentText(str(settings.get("speech_language")))
        self.caption_style = QComboBox()
        for name, style in CAPTION_STYLES.items():
            self.caption_style.addItem(style.label, name)
        self.caption_style.setCurrentIndex(max(0, self.caption_style.findData(
            settings.get("caption_style"))))
        form = QFormLayout(self)
        for label, widget in (("Backend", self.backend), ("Device", self.device),
                              ("Window length", self.window), ("Export folder", self.export_dir),
                              ("Default preset", self.preset), ("Theme", self.theme),
                              ("Time display", self.time_display),
                              ("Speech model", self.speech_model),
                              ("Speech language", self.speech_language),
                              ("Caption preview", self.caption_style)):
            widget.setAccessibleName(label)
            form.addRow(label, widget)
        self.model.setAccessibleName("Model")
        form.insertRow(2, "Model", model_row)
        for row, (label, widget) in enumerate((
                ("Server URL", self.server_url), ("Served model", self.server_model),
                ("Server API key", self.server_api_key),
                ("Windows in flight", self.server_windows_in_flight)), start=1):
            widget.setAccessibleName(label)
            form.insertRow(row, label, widget)
        self.backend.currentTextChanged.connect(self._show_server)
        self._show_server(self.backend.currentText())
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok
                                   | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        form.addRow(buttons)

    def _show_server(self, backend: str) -> None:
        for widget in (self.server_url, self.server_model, self.server_api_key,
                       self.server_windows_in_flight):
            widget.setEnabled(backend == "remote")

    def _browse_model(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Model folder")
        if folder:
            self.model.setText(folder)

    def accept(self) -> None:
        s = self.settings
        s.set("backend", self.backend.currentText())
        s.set("device", self.device.currentText())
        s.set("model", self.model.text().strip())
        s.set("window_seconds", self.window.value())
        s.set("export_dir", self.export_dir.text().strip())
        s.set("default_preset", self.preset.currentData())
        s.set("theme", self.theme.currentText())
        s.set("time_display", self.time_display.currentText())
        s.set("server_url", self.server_url.text().strip())
        s.set("server_model", self.server_model.text().strip())
        s.set("server_api_key", self.server_api_key.text().strip())
        s.set("server_windows_in_flight", self.server_windows_in_flight.value())
        s.set("speech_model", self.speech_model.currentData() or "")
        s.set("speech_language", self.speech_language.currentText().strip().lower()
              or options.SPEECH_LANGUAGE_AUTO)
        s.set("caption_style", self.caption_style.currentData())
        super().accept()
