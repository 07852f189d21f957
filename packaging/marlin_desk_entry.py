"""Entry point of the frozen app (PyInstaller runs this file as `marlin-desk`).

`multiprocessing.freeze_support()` comes first: a frozen program that starts child processes
(torch's and the standard library's process pools) re-runs this executable, and freeze_support
turns those re-runs into the child instead of a second copy of the app.

Then a few environment defaults that only the frozen app needs, each one a default (a value the
user set always wins):
- `selftest` on Linux with no display server: QT_QPA_PLATFORM=offscreen, or Qt aborts at start.
- the bundled FFmpeg's folder goes on no PATH: the app finds it through imageio-ffmpeg (see
  marlin_desk/media/ffmpeg_bin.py), after a user's own `ffmpeg` on PATH.
HF_HUB_OFFLINE is not forced: `marlin-desk models pull` downloads when the machine is online.
"""

import multiprocessing

multiprocessing.freeze_support()

import os  # noqa: E402 - freeze_support must run before anything else
import sys  # noqa: E402


def _frozen_defaults(argv: list[str]) -> None:
    if not getattr(sys, "frozen", False):
        return
    headless = sys.platform.startswith("linux") and not (
        os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))
    if headless and "selftest" in argv:
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


def _run() -> int:
    _frozen_defaults(sys.argv[1:])
    from marlin_desk.cli.main import main

    return main()


if __name__ == "__main__":
    raise SystemExit(_run())
