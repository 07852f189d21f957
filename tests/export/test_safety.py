"""The user's files are safe: no overwrite, atomic output, cancel and kill leave no final file,
and hostile path names work."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from marlin_desk.core.errors import Cancelled, MarlinError
from marlin_desk.media.clip_export import ClipSpec, ExportOptions, export_clip
from marlin_desk.media.export_run import plain_error, run_ffmpeg
from marlin_desk.media.ffmpeg_bin import find_ffmpeg
from marlin_desk.media.probe import probe

from .conftest import Videos
from .verify import sha256

REPO = Path(__file__).resolve().parents[2]


def _visible(d: Path) -> list[str]:
    return sorted(p.name for p in d.iterdir())


def test_existing_file_gets_a_suffix(videos: Videos, out_dir: Path) -> None:
    opts = ExportOptions(out_dir, name_template="same")
    (out_dir / "same.mp4").write_bytes(b"keep me")
    r = export_clip(videos.no_audio, ClipSpec(0, 0.2), opts)
    assert r.path == out_dir / "same (2).mp4"
    assert (out_dir / "same.mp4").read_bytes() == b"keep me"
    r2 = export_clip(videos.no_audio, ClipSpec(0, 0.2), opts)
    assert r2.path == out_dir / "same (3).mp4"


def test_source_is_never_overwritten(videos: Videos, tmp_path: Path) -> None:
    src = tmp_path / "take.mp4"
    src.write_bytes(videos.no_audio.read_bytes())
    before = sha256(src)
    r = export_clip(src, ClipSpec(0, 0.2), ExportOptions(tmp_path, name_template="{video}"))
    assert r.path == tmp_path / "take (2).mp4"
    assert sha256(src) == before


def test_cancel_leaves_no_file(videos: Videos, out_dir: Path) -> None:
    cancel = threading.Event()
    t0 = time.monotonic()
    with pytest.raises(Cancelled):
        export_clip(videos.main, ClipSpec(0, 8, preset="reels", fill="blur"),
                    ExportOptions(out_dir), cancel=cancel,
                    on_progress=lambda f: cancel.set() if f > 0 else None)
    assert time.monotonic() - t0 < 20
    assert _visible(out_dir) == []  # neither the final name nor the partial


_KILL_SCRIPT = """
import sys
from pathlib import Path
from marlin_desk.media.clip_export import ClipSpec, ExportOptions, export_clip
export_clip(sys.argv[1], ClipSpec(0, 8, preset="reels", fill="blur"),
            ExportOptions(Path(sys.argv[2])), on_progress=lambda f: print(f, flush=True))
"""


def test_killed_export_leaves_no_file_under_the_final_name(videos: Videos, out_dir: Path) -> None:
    proc = subprocess.Popen([sys.executable, "-c", _KILL_SCRIPT, str(videos.main), str(out_dir)],
                            cwd=REPO, stdout=subprocess.PIPE, start_new_session=True)
    assert proc.stdout is not None
    for line in proc.stdout:  # wait until FFmpeg has written something
        if float(line) > 0:
            break
    os.killpg(proc.pid, signal.SIGKILL)  # the app and its FFmpeg die mid-write
    proc.wait()
    names = _visible(out_dir)
    assert names and all(n.startswith(".") and ".partial" in n for n in names)


def test_ctrl_c_in_the_cli_cancels_cleanly(videos: Videos, out_dir: Path) -> None:
    proc = subprocess.Popen([sys.executable, "-m", "marlin_desk", "export", str(videos.main),
                             "--clip", "0-8", "--preset", "reels", "--fill", "blur",
                             "--out", str(out_dir)], cwd=REPO, stderr=subprocess.PIPE,
                            start_new_session=True)
    deadline = time.monotonic() + 30
    while not any(".partial" in n for n in _visible(out_dir)):
        assert time.monotonic() < deadline and proc.poll() is None
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGINT)  # what a terminal sends on Ctrl-C
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    assert _visible(out_dir) == []


@pytest.mark.parametrize("mode", ["exact", "fast"])
def test_hostile_path_names(videos: Videos, tmp_path: Path, mode: str) -> None:
    folder = tmp_path / "we'ird $(touch PWNED) dïr"
    folder.mkdir()
    src = folder / 'clip "q" $(echo hi) `id` ñ 日本 -x.mp4'
    src.write_bytes(videos.main.read_bytes())
    from marlin_desk.core.timeline import Event

    events = [Event(0, 1, "Señor's \"quoted\" $(rm -rf /) {\\b1} caption")]
    subs = "burn" if mode == "exact" else "soft"
    r = export_clip(src, ClipSpec(0.0, 1.0, "Ünïcode: a/b\\c?", mode=mode, subtitles=subs),
                    ExportOptions(folder), events=events)
    assert r.path is not None and r.path.parent == folder and r.path.exists()
    assert probe(str(r.path)).duration > 0.5
    assert not (folder / "PWNED").exists() and not (REPO / "PWNED").exists()
    assert "日本" in r.path.name and "ünïcode" in r.path.name
    assert not any(c in r.path.name for c in '"/\\?:')


def test_ffmpeg_errors_become_plain_sentences(tmp_path: Path) -> None:
    exe = find_ffmpeg().path
    with pytest.raises(MarlinError, match="no nosuchcodec encoder"):
        run_ffmpeg([exe, "-f", "lavfi", "-i", "testsrc2=d=0.1", "-c:v", "nosuchcodec",
                    "-f", "null", "-"], 0.1)
    err = plain_error(["[mp4 @ 0x55d0c8] something odd", "Error writing trailer: "
                       "No space left on device"], 1)
    assert str(err) == "the disk is full"
    err = plain_error(["[h264 @ 0x1234abcd] a decoder complaint"], 1)
    assert str(err) == "FFmpeg failed: a decoder complaint"


def test_progress_lines() -> None:
    from marlin_desk.media.export_run import parse_progress_line

    assert parse_progress_line("out_time_us=1500000\n") == 1.5
    assert parse_progress_line("out_time_ms=250000") == 0.25  # FFmpeg's misnamed microseconds
    assert parse_progress_line("out_time_us=N/A") is None
    assert parse_progress_line("progress=continue") is None


def test_no_subtitle_file_when_no_event_overlaps_the_clip(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """An empty .srt looks like a broken file to an editor: none is written, and it is said."""
    from marlin_desk.core.timeline import Event
    from marlin_desk.dev.videos import make_video
    from marlin_desk.media.export import ClipSpec, ExportOptions, export_clip

    video = make_video(tmp_path / "v.mp4", duration=3.0)
    result = export_clip(str(video), ClipSpec(0.5, 1.5, "c", subtitles="srt"),
                         ExportOptions(tmp_path / "out"), events=[Event(2.0, 2.8, "later")])
    assert result.status == "done" and result.subtitle_path is None
    assert "no event overlaps" in result.subtitle_note
    assert not list((tmp_path / "out").glob("*.srt"))
