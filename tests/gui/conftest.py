"""GUI fixtures: a tiny random model built once per session, a short test video, and windows
with their own settings, cache and autosave folder (never the user's)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from marlin_desk.dev.videos import make_video
from tests.models.fake_hub import hub, manager  # noqa: F401 - the download dialog's fake hub


@pytest.fixture(scope="session")
def qapp() -> Any:
    """The app's own QApplication (make_app), as `marlin-desk app` makes it: on a real X server
    that is what keeps the GL driver's LLVM and triton's apart (gui/native_libs.py)."""
    from marlin_desk.gui.app import make_app

    return make_app()


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from marlin_desk.dev.tiny_model import build_tiny_model

    return build_tiny_model(tmp_path_factory.mktemp("tiny-model"))


@pytest.fixture(scope="session")
def sample_video(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("videos")
    return make_video(folder / "sample.mp4",
                      segments=[(2.0, (200, 30, 30)), (2.0, (30, 170, 60)), (2.0, (30, 60, 200))],
                      size=(320, 192), fps=25, audio=True)


@pytest.fixture(autouse=True)
def own_data_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test its own app data and cache folders: a video's saved clips and its reframing
    detections never reach another test (or the user's)."""
    monkeypatch.setenv("MARLIN_DESK_DATA", str(tmp_path / "data"))
    monkeypatch.setenv("MARLIN_DESK_CACHE", str(tmp_path / "cache"))


@pytest.fixture
def settings(tmp_path: Path) -> Any:
    from marlin_desk.gui.settings import Settings

    s = Settings(tmp_path / "settings.ini")
    s.set("caption_tokens", 6)
    s.set("auto_analyse", False)
    s.set("autosave_seconds", 3600)
    s.set("export_dir", str(tmp_path / "exports"))
    return s


@pytest.fixture
def make_window(qtbot: Any, settings: Any, tmp_path: Path) -> Callable[..., Any]:
    from marlin_desk.gui.main_window import MainWindow
    from marlin_desk.store import AnalysisCache

    def make(model: str | None = None, cache: bool = True, **kw: Any) -> Any:
        kw.setdefault("autosave_dir", tmp_path / "autosave")
        kw.setdefault("ask_save", lambda _question: "discard")  # never a modal box in a test
        window = MainWindow(settings,
                            cache=AnalysisCache(tmp_path / "cache.sqlite") if cache else None,
                            autoload_model=False, model=model, confirm=lambda _q: True, **kw)
        # workers stop even when a test leaves the window refusing to close (unsaved work)
        qtbot.addWidget(window, before_close_func=lambda w: w.shutdown())
        window.resize(1200, 800)
        window.show()
        window.activateWindow()  # on a real X server, shortcuts go to the active window only
        qtbot.waitUntil(window.isActiveWindow, timeout=5000)
        return window

    return make


def open_and_wait(qtbot: Any, window: Any, path: Path | str) -> None:
    with qtbot.waitSignal(window.videoOpened, timeout=30_000):
        window.open_video(str(path))


def open_with_clip(qtbot: Any, make_window: Any, video: Path, clip: Any, *,
                   analysed: bool = False) -> Any:
    """A new window on `video` with `clip` in its bin; `analysed`: the clip selected and its
    reframing analysis in."""
    from marlin_desk.gui import undo

    w = make_window()
    open_and_wait(qtbot, w, video)
    w.undo_stack.push(undo.AddClips(w.doc, [clip]))
    if analysed:
        with qtbot.waitSignal(w.reframe.analysed, timeout=60_000):
            w.clips_panel.select_id(clip.id)
    return w
