"""A filter graph longer than a command line allows (a long, always-moving reframe crop) runs:
it goes to a file FFmpeg reads, in the syntax of the FFmpeg at hand (media/ffmpeg_script)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from marlin_desk.media import ffmpeg_script
from marlin_desk.media.export_run import run_ffmpeg
from marlin_desk.media.probe import probe
from marlin_desk.media.reframe_path import CropPath, ShotPath
from marlin_desk.media.reframe_render import crop_expressions


def _binaries() -> list[str]:
    found = [shutil.which("ffmpeg")]
    try:
        import imageio_ffmpeg

        found.append(imageio_ffmpeg.get_ffmpeg_exe())  # the bundled one: a newer FFmpeg
    except (ImportError, RuntimeError):
        pass
    return [b for b in dict.fromkeys(found) if b]


@pytest.mark.parametrize("binary", _binaries(), ids=lambda b: Path(b).name)
def test_a_graph_over_the_argument_limit_runs_and_leaves_no_file(
        binary: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TMPDIR", str(tmp_path))  # where the graph file goes, to be checked
    monkeypatch.setattr(ffmpeg_script.tempfile, "tempdir", None)
    # a path that moves all the time: 4,000 linear pieces (an hour's clip panning to and fro)
    times = tuple(i * 0.5 for i in range(4000))
    shot = ShotPath(0.0, 2000.0, times, tuple(0.3 + 0.4 * (i % 2) for i in range(4000)), True)
    path = CropPath(640, 360, 202, 360, "x", (shot,))
    x, y = crop_expressions(path, 0.0, 25.0)
    assert len(x) > 128 * 1024  # over Linux's limit for one argument (Windows': 32 K in all)
    out = tmp_path / "cropped.mp4"
    run_ffmpeg([binary, "-f", "lavfi", "-i", "testsrc2=s=640x360:r=25:d=1.2",
                "-filter_complex", f"[0:v]crop=w=202:h=360:x='{x}':y={y}[v]", "-map", "[v]",
                "-c:v", "mpeg4", os.fspath(out)], 1.2)
    info = probe(os.fspath(out))
    assert (info.width, info.height) == (202, 360) and abs(info.duration - 1.2) < 0.05
    assert not list(tmp_path.glob("marlin-graph-*"))  # the graph's file is gone
