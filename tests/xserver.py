"""A real X server (Xvfb) for tests that need what offscreen Qt never loads: the GL driver.

Xvfb picks a free display itself (-displayfd) and says which when it is ready, so tests
running at once never collide and nothing waits on a sleep. Mesa's llvmpipe gives it GL.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def xvfb(size: str = "1600x1000x24") -> Iterator[str]:
    """Start Xvfb; yields the DISPLAY value (":N"); stops it afterwards."""
    exe = shutil.which("Xvfb")
    if exe is None:
        raise RuntimeError("Xvfb is not installed (Debian package xvfb; scripts/test.sh "
                           "installs it)")
    read, write = os.pipe()
    proc = subprocess.Popen([exe, "-displayfd", str(write), "-screen", "0", size,
                             "-nolisten", "tcp", "-noreset"], pass_fds=(write,),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    os.close(write)
    try:
        with os.fdopen(read) as ready:
            number = ready.readline().strip()
        if not number:
            raise RuntimeError(f"Xvfb did not start (exit code {proc.poll()})")
        yield f":{number}"
    finally:
        proc.terminate()
        proc.wait(10)


def display_env(display: str, **extra: str) -> dict[str, str]:
    """The environment of a child process that must use the real X server."""
    env = dict(os.environ, DISPLAY=display, QT_QPA_PLATFORM="xcb", **extra)
    env.pop("WAYLAND_DISPLAY", None)
    return env


def main(argv: list[str]) -> int:
    """`python -m tests.xserver COMMAND...`: run COMMAND on a fresh Xvfb with Qt's xcb platform
    (scripts/test.sh runs the GUI suite a second time this way)."""
    with xvfb() as display:
        return subprocess.call(argv, env=display_env(display))


if __name__ == "__main__":
    import sys

    raise SystemExit(main(sys.argv[1:]))
