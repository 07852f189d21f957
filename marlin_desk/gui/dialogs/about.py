"""About: versions of the app and of the libraries that matter when reporting a problem."""

from __future__ import annotations

import importlib.metadata
import platform
import sys
from typing import Any

import PySide6
from PySide6.QtCore import qVersion
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QLabel, QVBoxLayout, QWidget

from marlin_desk import __version__


def versions(model: dict[str, Any] | None = None) -> dict[str, str]:
    """Without importing torch: installed versions are read from package metadata."""
    out = {"Marlin Desk": __version__, "Python": sys.version.split()[0],
           "Qt": qVersion(), "PySide6": PySide6.__version__, "OS": platform.platform()}
    for dist in ("torch", "transformers", "av"):
        try:
            out[dist] = importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            out[dist] = "not installed"
    if model:
        out["Model"] = f"{model.get('model')} ({model.get('device')}, {model.get('dtype')})"
    return out


class AboutDialog(QDialog):
    def __init__(self, model: dict[str, Any] | None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("About Marlin Desk")
        rows = "".join(f"<tr><td><b>{k}</b></td><td>{v}</td></tr>"
                       for k, v in versions(model).items())
        label = QLabel("<h3>Marlin Desk</h3><p>Find moments in video with a local model.</p>"
                       f"<table cellspacing=4>{rows}</table>")
        self.label = label
        label.setAccessibleName("About")
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(label)
        layout.addWidget(buttons)
