"""The user's preferences, kept in an INI file through QSettings (same format on every OS).

The file lives in the app's data folder (MARLIN_DESK_DATA in tests), so tests never touch the
user's real settings. Each preference has a typed property with its default in one place.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from PySide6.QtCore import QSettings

from marlin_desk.core import options
from marlin_desk.media.caption_styles import DEFAULT_CAPTION_STYLE
from marlin_desk.paths import data_dir

# The defaults come from the settings vocabulary (core.options) that the commands use too.
DEFAULTS: dict[str, Any] = {
    "backend": options.DEFAULT_BACKEND,
    "device": options.DEFAULT_DEVICE,
    "model": "",  # empty: models.choose_model decides (pulled Marlin-2B, else the demo model)
    "window_seconds": options.DEFAULT_WINDOW_SECONDS,
    "export_dir": "",
    "default_preset": "original",
    "theme": options.DEFAULT_THEME,
    "time_display": options.DEFAULT_TIME_DISPLAY,
    "caption_tokens": 0,  # 0: the pipeline's own limit; tests and the self-test cap it
    "autosave_seconds": 60,
    "auto_analyse": True,
    "volume": 80,
    "show_reframe_crop": True,  # View > Show Reframe Crop
    "preview_captions": False,  # View > Preview Captions
    # speech (workflows.speech): empty model: models.speech.choose_speech_model decides
    "speech_model": "",
    "speech_language": options.DEFAULT_SPEECH_LANGUAGE,
    "caption_style": DEFAULT_CAPTION_STYLE,  # the captions' look in the preview
    # the remote backend: an OpenAI-compatible server (vLLM) answers the windows
    "handoff_target": "",  # the NLE the last timeline was for
    "server_url": "",
    "server_model": "",  # empty: the server's only model
    "server_api_key": "",
    "server_windows_in_flight": options.DEFAULT_WINDOWS_IN_FLIGHT,
}
SERVER_KEYS = ("server_url", "server_model", "server_api_key", "server_windows_in_flight")
MODEL_KEYS = ("backend", "device", "model", *SERVER_KEYS)  # a change reloads the model
MAX_RECENT = 10


class Settings:
    """Typed access to the preferences; `path=None` uses the app's data folder."""

    def __init__(self, path: str | os.PathLike[str] | None = None) -> None:
        self.path = Path(path) if path is not None else data_dir() / "settings.ini"
        self._q = QSettings(str(self.path), QSettings.Format.IniFormat)

    def get(self, key: str) -> Any:
        default = DEFAULTS.get(key)
        value = self._q.value(key, default)
        if isinstance(default, bool):
            return value in (True, "true", "1", 1)
        if isinstance(default, int) and not isinstance(default, bool):
            try:
                return int(value)
            except (TypeError, ValueError):
                return default
        if isinstance(default, float):
            try:
                return float(value)
            except (TypeError, ValueError):
                return default
        return "" if value is None else str(value)

    def set(self, key: str, value: Any) -> None:
        self._q.setValue(key, value)
        self._q.sync()

    # -- convenience ------------------------------------------------------------------------
    def model_options(self) -> Any:
        """The model preferences as the worker takes them (worker_protocol.ModelOptions)."""
        from marlin_desk.gui.worker_protocol import ModelOptions
        from marlin_desk.workflows import ServerSettings

        server = None
        if self.get("server_url"):
            server = ServerSettings(url=self.get("server_url"),
                                    served_model=self.get("server_model") or None,
                                    api_key=self.get("server_api_key") or None,
                                    windows_in_flight=max(1, self.get("server_windows_in_flight")))
        return ModelOptions(model=self.get("model"), backend=self.get("backend"),
                            device=self.get("device"), server=server)

    @property
    def export_dir(self) -> Path:
        value = self.get("export_dir")
        return Path(value) if value else Path.home() / "Marlin Desk exports"

    EXPORT_CHOICES = ("preset", "fill", "mode", "encoder", "loudness", "channels", "subtitles",
                      "speed", "audio_kbps", "template", "captions")

    def export_choices(self) -> dict[str, Any]:
        """The export dialog's last choices (and its folder), as it offers them again."""
        out = {k: self._q.value(f"export/{k}") for k in self.EXPORT_CHOICES}
        return {k: (None if v in ("", "None") else v) for k, v in out.items()}

    def set_export_choices(self, choices: dict[str, Any]) -> None:
        for key in self.EXPORT_CHOICES:
            self._q.setValue(f"export/{key}", "" if choices.get(key) is None else choices[key])
        if choices.get("out_dir"):
            self._q.setValue("export_dir", choices["out_dir"])
        self._q.sync()

    def export_presets(self) -> dict[str, dict[str, Any]]:
        """Named export settings the editor saved ("YouTube upload", "Client review")."""
        import json

        try:
            doc = json.loads(str(self._q.value("export/named", "{}") or "{}"))
        except ValueError:
            return {}
        return {str(k): v for k, v in doc.items() if isinstance(v, dict)} \
            if isinstance(doc, dict) else {}

    def save_export_preset(self, name: str, choices: dict[str, Any]) -> None:
        import json

        presets = self.export_presets()
        presets[name] = {k: v for k, v in choices.items() if v is not None}
        self.set("export/named", json.dumps(presets, ensure_ascii=False))

    def recent_files(self) -> list[str]:
        value = self._q.value("recent_files", [])
        if isinstance(value, str):
            value = [value]
        return [str(v) for v in (value or []) if v]

    def add_recent(self, path: str) -> None:
        files = [p for p in self.recent_files() if p != path]
        self.set("recent_files", [path, *files][:MAX_RECENT])

    def recent_queries(self) -> list[str]:
        value = self._q.value("recent_queries", [])
        if isinstance(value, str):
            value = [value]
        return [str(v) for v in (value or []) if v]

    def add_query(self, query: str) -> None:
        queries = [q for q in self.recent_queries() if q != query]
        self.set("recent_queries", [query, *queries][:MAX_RECENT])

    def geometry(self) -> Any:
        return self._q.value("window/geometry")

    def set_geometry(self, value: Any) -> None:
        self.set("window/geometry", value)
