"""Which FFmpeg: the override, the system one, or the bundled imageio-ffmpeg build."""

from __future__ import annotations

import shutil
from pathlib import Path

import imageio_ffmpeg
import pytest

from marlin_desk.core.errors import MarlinError
from marlin_desk.media.clip_export import ClipSpec, ExportOptions, export_clip
from marlin_desk.media.ffmpeg_bin import ENV_VAR, find_ffmpeg
from marlin_desk.media.probe import probe

from .conftest import Videos


def test_system_ffmpeg_first(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENV_VAR, raising=False)
    if not shutil.which("ffmpeg"):
        pytest.skip("no ffmpeg on PATH")
    b = find_ffmpeg()
    assert b.source == "system" and b.path == shutil.which("ffmpeg") and b.version


def test_bundled_when_none_on_path(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv(ENV_VAR, raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    b = find_ffmpeg()
    assert b.source == "bundled" and b.path == imageio_ffmpeg.get_ffmpeg_exe()
    assert b.to_json()["version"]


def test_env_override(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(ENV_VAR, imageio_ffmpeg.get_ffmpeg_exe())
    assert find_ffmpeg().source == "env"
    monkeypatch.setenv(ENV_VAR, str(tmp_path / "nope"))
    with pytest.raises(MarlinError, match=ENV_VAR):
        find_ffmpeg()


def test_the_bundled_build_exports_too(videos: Videos, out_dir: Path,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """Commands must work on the bundled build (a newer FFmpeg) as on Debian's 5.1."""
    monkeypatch.setenv(ENV_VAR, imageio_ffmpeg.get_ffmpeg_exe())
    from marlin_desk.core.timeline import Event

    r = export_clip(videos.rotated, ClipSpec(0.5, 1.5, subtitles="burn"),
                    ExportOptions(out_dir), events=[Event(0, 2, "Hello")])
    info = probe(str(r.path))
    assert (info.width, info.height) == (240, 320)
    assert info.duration == pytest.approx(1.0, abs=0.041)
    f = export_clip(videos.main, ClipSpec(2.5, 3.5, mode="fast"), ExportOptions(out_dir))
    assert f.real_start == pytest.approx(2.0)
