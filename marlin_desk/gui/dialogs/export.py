"""Export options, chosen per export: preset (or each clip's own), fill for the vertical and
square presets, mode, encoder, subtitles and the output folder. The choices come from the media
layer's vocabulary (presets.MODES, encoders.ENCODER_CHOICES), and the last ones are offered
again next time (gui/settings.py keeps them)."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QWidget,
)

from marlin_desk.gui.panels.clips import preset_label, preset_names
from marlin_desk.gui.timefmt import count as plural
from marlin_desk.media.audio import (
    AUDIO_BITRATES,
    AUDIO_CHANNEL_CHOICES,
    LOUDNESS_TARGETS,
    TRUE_PEAK_DB,
)
from marlin_desk.media.caption_styles import CAPTION_STYLES
from marlin_desk.media.encoders import ENCODER_CHOICES
from marlin_desk.media.naming import DEFAULT_TEMPLATE, TEMPLATE_FIELDS
from marlin_desk.media.presets import (
    DEFAULT_SPEED,
    FILLED_PRESETS,
    MODE_LABELS,
    MODES,
    X264_SPEEDS,
)
from marlin_desk.media.subtitle_sources import SOURCE_LABELS, default_subtitle_source

PER_CLIP = "per clip (as in the bin)"
SPEED_SHOWN = tuple((v, f"{v} (quality over speed)" if X264_SPEEDS.index(v) >
                     X264_SPEEDS.index(DEFAULT_SPEED) else v) for v in X264_SPEEDS)
BITRATE_SHOWN = (("", "The preset's"), *((str(k), f"{k} kbps") for k in AUDIO_BITRATES))
FILL_CHOICES = (("crop", "Crop to fill"), ("blur", "Blurred background"))
# "auto": smart where the preset keeps the picture, exact where it resizes (presets.default_mode)
MODE_CHOICES = (("auto", "Best for each clip (smart, or exact for resized presets)"),
                *((mode, MODE_LABELS[mode]) for mode in MODES))
ENCODER_LABELS = {"auto": "Best on this computer (GPU encoder when it works)",
                  "x264": "Software (libx264)"}
ENCODER_CHOICES_SHOWN = tuple((e, ENCODER_LABELS.get(e, e.upper())) for e in ENCODER_CHOICES)
LOUDNESS_SHOWN = tuple((key, "Keep the source's level" if value is None else key.capitalize())
                       for key, value in LOUDNESS_TARGETS.items())
CHANNELS_SHOWN = tuple((key, "Keep the source's channels" if value is None else key.capitalize())
                       for key, value in AUDIO_CHANNEL_CHOICES.items())
SUBTITLE_CHOICES = (("none", "None"), ("srt", "SRT file beside the clip"),
                    ("vtt", "WebVTT file beside the clip"), ("soft", "Soft track in the clip"),
                    ("burn", "Burned into the picture"))

SOURCE_CHOICES = tuple(SOURCE_LABELS.items())
CAPTION_CHOICES = (("", "None"), *((name, style.label) for name, style in CAPTION_STYLES.items()))


def _combo(choices: tuple[tuple[str, str], ...], name: str) -> QComboBox:
    box = QComboBox()
    for value, text in choices:
        box.addItem(text, value)
    box.setAccessibleName(name)
    return box


class ExportDialog(QDialog):
    """Ask how to export `count` clips; `choices()` gives the keyword arguments of
    ExportController.export. Named export settings can be saved and chosen again."""

    presetSaved = Signal(str, dict)  # name, choices

    def __init__(self, count: int, out_dir: str, has_events: bool,
                 parent: QWidget | None = None, last: dict[str, Any] | None = None,
                 presets: dict[str, dict[str, Any]] | None = None,
                 has_transcript: bool = False) -> None:
        super().__init__(parent)
        self.presets = dict(presets or {})
        self.saved = QComboBox()
        self.saved.setAccessibleName("Saved export settings")
        self.saved.addItem("(the last export's settings)", None)
        for name in sorted(self.presets):
            self.saved.addItem(name, name)
        self.saved.currentIndexChanged.connect(self._use_saved)
        self.save_name = QLineEdit()
        self.save_name.setPlaceholderText("a name, e.g. YouTube upload")
        self.save_name.setAccessibleName("Name for these settings")
        save = QPushButton("Save Settings")
        save.clicked.connect(self._save_preset)
        self.setWindowTitle(f"Export {plural(count, 'clip')}")
        self.preset = QComboBox()
        self.preset.setAccessibleName("Preset")
        self.preset.addItem(PER_CLIP, None)
        for name in preset_names():
            self.preset.addItem(preset_label(name), name)
        self.fill = _combo(FILL_CHOICES, "Fill")
        self.fill.setToolTip("How 9:16 and 1:1 clips are filled from a wider picture")
        self.mode = _combo(MODE_CHOICES, "Mode")
        self.encoder = _combo(ENCODER_CHOICES_SHOWN, "Encoder")
        self.encoder.setToolTip("Used for the clips that are re-encoded (resized presets, "
                                "burned subtitles); smart cuts match the source with software")
        self.loudness = _combo(LOUDNESS_SHOWN, "Loudness")
        self.loudness.setToolTip(f"Two-pass loudness normalisation, true peak at most "
                                 f"{TRUE_PEAK_DB:g} dBTP")
        self.channels = _combo(CHANNELS_SHOWN, "Audio channels")
        self.speed = _combo(SPEED_SHOWN, "Encoding speed")
        self.speed.setCurrentIndex(self.speed.findData(DEFAULT_SPEED))
        self.speed.setToolTip("For re-encoded clips: slower presets give better quality at the "
                              "same size")
        self.audio_kbps = _combo(BITRATE_SHOWN, "Audio bit rate")
        self.template = QLineEdit(DEFAULT_TEMPLATE)
        self.template.setAccessibleName("File names")
        self.template.setToolTip("Fields: " + ", ".join("{" + f + "}" for f in TEMPLATE_FIELDS))
        self.subtitles = _combo(SUBTITLE_CHOICES, "Subtitles")
        self.subtitles.setToolTip("Made from what is said (the transcript) or from the events "
                                  "as edited in the Events panel, timed from each clip's start")
        self.source = _combo(SOURCE_CHOICES, "Subtitles from")
        self.set_choice(self.source, default_subtitle_source(has_transcript))
        self.captions = _combo(CAPTION_CHOICES, "Captions")
        self.captions.setToolTip("What is said, burned in word by word in the Reels style "
                                 "(needs a transcript: Analysis > Transcribe Speech)")
        self.folder = QLineEdit(out_dir)
        self.folder.setAccessibleName("Output folder")
        browse = QPushButton("Browse…")
        browse.clicked.connect(self._browse)
        row = QHBoxLayout()
        row.addWidget(self.folder, 1)
        row.addWidget(browse)
        form = QFormLayout(self)
        named = QHBoxLayout()
        named.addWidget(self.saved, 1)
        named.addWidget(self.save_name, 1)
        named.addWidget(save)
        form.addRow("Saved settings", named)
        form.addRow("Preset", self.preset)
        form.addRow("Fill (9:16, 1:1)", self.fill)
        form.addRow("Mode", self.mode)
        form.addRow("Encoder", self.encoder)
        form.addRow("Encoding speed", self.speed)
        form.addRow("Loudness", self.loudness)
        form.addRow("Audio channels", self.channels)
        form.addRow("Audio bit rate", self.audio_kbps)
        form.addRow("File names", self.template)
        form.addRow("Subtitles", self.subtitles)
        form.addRow("Subtitles from", self.source)
        form.addRow("Captions", self.captions)
        form.addRow("Output folder", row)
        if not has_events and not has_transcript:
            note = QLabel("There are no events and no transcript yet: subtitles would be "
                          "empty.")
            note.setWordWrap(True)
            form.addRow(note)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok
                                        | QDialogButtonBox.StandardButton.Cancel)
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setText("Export")
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        form.addRow(self.buttons)
        self.preset.currentIndexChanged.connect(self._update_fill)
        self.mode.currentIndexChanged.connect(self._update_mode)
        self._restore(last or {})
        self._update_fill()

    def _restore(self, last: dict[str, Any]) -> None:
        """The choices of the last export (a value that is no longer offered is skipped)."""
        for box, key in ((self.preset, "preset"), (self.fill, "fill"), (self.mode, "mode"),
                         (self.encoder, "encoder"), (self.loudness, "loudness"),
                         (self.channels, "channels"), (self.subtitles, "subtitles"),
                         (self.speed, "speed"), (self.audio_kbps, "audio_kbps"),
                         (self.captions, "captions")):
            value = last.get(key)
            if value not in (None, "") and box.findData(value) >= 0:
                self.set_choice(box, value)
        if last.get("preset") in (None, "") and self.preset.findData(None) >= 0:
            self.preset.setCurrentIndex(self.preset.findData(None))
        if last.get("template"):
            self.template.setText(str(last["template"]))

    def _update_fill(self) -> None:
        preset = self.preset.currentData()
        self.fill.setEnabled(self.mode.currentData() != "fast"
                             and (preset is None or preset in FILLED_PRESETS))

    def _update_mode(self) -> None:
        """Fast mode copies the streams: it cannot resize, so it keeps the original picture."""
        fast = self.mode.currentData() == "fast"
        if fast:
            self.set_choice(self.preset, "original")
            if self.subtitles.currentData() == "burn":
                self.set_choice(self.subtitles, "none")
        self.preset.setEnabled(not fast)
        burn = self.subtitles.model().item(self.subtitles.findData("burn"))  # type: ignore[attr-defined]
        if burn is not None:
            burn.setEnabled(not fast)
        self._update_fill()

    def _use_saved(self, *_: Any) -> None:
        name = self.saved.currentData()
        if name in self.presets:
            self.apply(self.presets[name])

    def _save_preset(self) -> None:
        name = self.save_name.text().strip()
        if not name:
            self.save_name.setFocus()
            return
        self.presets[name] = self.choices()
        if self.saved.findData(name) < 0:
            self.saved.addItem(name, name)
        self.saved.blockSignals(True)
        self.saved.setCurrentIndex(self.saved.findData(name))
        self.saved.blockSignals(False)
        self.presetSaved.emit(name, self.presets[name])

    def _browse(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Export folder", self.folder.text())
        if folder:
            self.folder.setText(folder)

    def set_choice(self, box: QComboBox, value: Any) -> None:
        """Select the item whose value is `value` (tests and remembered choices)."""
        index = box.findData(value)
        if index < 0:
            raise ValueError(f"{value!r} is not a choice of {box.accessibleName()}")
        box.setCurrentIndex(index)

    def choices(self) -> dict[str, Any]:
        return {"out_dir": self.folder.text().strip() or None,
                "preset": self.preset.currentData(), "fill": self.fill.currentData(),
                "mode": self.mode.currentData(), "encoder": self.encoder.currentData(),
                "loudness": self.loudness.currentData(), "channels": self.channels.currentData(),
                "subtitles": self.subtitles.currentData(), "speed": self.speed.currentData(),
                "audio_kbps": self.audio_kbps.currentData() or "",
                "source": self.source.currentData(),
                "captions": self.captions.currentData() or None,
                "template": self.template.text().strip() or DEFAULT_TEMPLATE}

    def apply(self, choices: dict[str, Any]) -> None:
        """Show saved choices (a named export preset), the folder included."""
        self._restore(choices)
        if choices.get("out_dir"):
            self.folder.setText(str(choices["out_dir"]))
        self._update_fill()
