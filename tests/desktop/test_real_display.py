"""The app on a real X server with Mesa's GL (what offscreen tests never load).

The crash these guard against: Mesa's GL driver brings its libLLVM with global symbols, and
triton's libtriton.so (imported by torch._dynamo, which torchvision touches in the model
thread) then bound its LLVM calls to Mesa's and died with SIGSEGV about 5 s after
`marlin-desk app VIDEO` opened its window.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from marlin_desk.resources import demo_video
from tests.xserver import display_env

pytestmark = pytest.mark.slow

# The app's own QApplication, a GL context made current (Mesa and its LLVM load), then the
# model stack's imports in the order the model thread makes them.
GL_THEN_MODEL = """
import sys
from marlin_desk.gui.app import make_app
from PySide6.QtGui import QOffscreenSurface, QOpenGLContext
app = make_app()
context = QOpenGLContext()
assert context.create(), "no GL context"
surface = QOffscreenSurface()
surface.create()
assert context.makeCurrent(surface), "GL context not current"
print("GL:", context.format().majorVersion(), flush=True)
import torchvision  # imports torch._dynamo, which imports triton
import transformers.models.qwen3_5.modeling_qwen3_5  # noqa: F401
print("model stack imported", flush=True)
"""


def test_model_stack_imports_after_the_gl_driver_has_loaded(x_display: str) -> None:
    run = subprocess.run([sys.executable, "-c", GL_THEN_MODEL], env=display_env(x_display),
                         capture_output=True, text=True, timeout=240)
    assert run.returncode == 0, f"exit {run.returncode}:\n{run.stderr[-3000:]}"
    assert "model stack imported" in run.stdout


def _log_text(folder: Path) -> str:
    log = folder / "logs" / "marlin-desk.log"
    return log.read_text(encoding="utf-8", errors="replace") if log.is_file() else ""


@pytest.mark.parametrize("with_video", [True, False], ids=["with-video", "no-video"])
def test_app_survives_the_model_loading(x_display: str, tmp_path: Path,
                                        with_video: bool) -> None:
    """`marlin-desk app VIDEO`, as an editor starts it: the video view's GL first, then the
    model thread loads torch and the demo model. The app must still run afterwards (and
    without a video, where it looks for an autosave to recover first)."""
    cache = tmp_path / "cache"
    env = display_env(x_display, MARLIN_DESK_CACHE=str(cache),
                      MARLIN_DESK_DATA=str(tmp_path / "data"), HF_HUB_OFFLINE="1",
                      HOME=str(tmp_path / "home"))
    video = [str(demo_video())] if with_video else []
    app = subprocess.Popen([sys.executable, "-m", "marlin_desk", "app", *video],
                           env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 180
        while "model ready" not in _log_text(cache) and app.poll() is None:
            assert time.monotonic() < deadline, "the model did not load in 3 minutes"
            time.sleep(0.5)
        time.sleep(3)  # the analysis starts on the worker after the load
        assert app.poll() is None, (f"the app died (exit {app.returncode}):\n"
                                    f"{_log_text(cache)[-3000:]}")
    finally:
        app.terminate()  # SIGTERM, as a logout sends: a clean quit, not a crash
        _, err = app.communicate(timeout=30)
    text = _log_text(cache) + err.decode(errors="replace")
    assert "Fatal Python error" not in text and "Traceback" not in text, text[-3000:]
    assert app.returncode == 0, text[-3000:]
    assert not list((cache / "logs" / "sessions").glob("*.json"))  # no crash to report
