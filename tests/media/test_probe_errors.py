"""Unusable inputs give BadInput with one plain sentence naming the file, and never hang;
awkward paths work."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import av
import numpy as np
import pytest

from marlin_desk.core.errors import BadInput
from marlin_desk.media.probe import probe
from marlin_desk.media.sampling import sample_window
from tests.media.conftest import MakeVideo

pytestmark = pytest.mark.timeout(60)


def _one_sentence(message: str, path: Path | str) -> None:
    assert f'"{path}"' in message
    assert message.endswith(".")
    assert "\n" not in message
    assert ". " not in message.rstrip(".")  # one sentence


def _bad(path: Path | str, *words: str) -> str:
    with pytest.raises(BadInput) as caught:
        probe(str(path))
    message = str(caught.value)
    _one_sentence(message, path)
    for word in words:
        assert word in message
    return message


def test_missing_file(tmp_path: Path) -> None:
    _bad(tmp_path / "nope.mp4", "does not exist")


def test_empty_file(tmp_path: Path) -> None:
    path = tmp_path / "empty.mp4"
    path.write_bytes(b"")
    _bad(path, "empty")


def test_text_file_named_mp4(tmp_path: Path) -> None:
    path = tmp_path / "notes.mp4"
    path.write_text("this is a shopping list, not a video\n" * 200)
    _bad(path, "not a video file that can be read")


def test_random_bytes(tmp_path: Path) -> None:
    path = tmp_path / "noise.mov"
    path.write_bytes(np.random.default_rng(1).integers(0, 256, 300_000, np.uint8).tobytes())
    _bad(path)


def test_folder(tmp_path: Path) -> None:
    _bad(tmp_path, "folder")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_fifo_does_not_hang(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.mp4"
    os.mkfifo(fifo)
    _bad(fifo, "not a regular file")


def test_audio_only(tmp_path: Path) -> None:
    path = tmp_path / "voice.m4a"
    with av.open(str(path), "w") as out:
        stream = out.add_stream("aac", rate=48_000, layout="mono")
        for i in range(20):
            frame = av.AudioFrame.from_ndarray(
                np.zeros((1, 1024), np.float32), format="fltp", layout="mono"
            )
            frame.sample_rate = 48_000
            frame.pts = i * 1024
            out.mux(stream.encode(frame))
        out.mux(stream.encode(None))
    _bad(path, "has no video stream", "only audio")


def test_video_stream_without_frames(tmp_path: Path) -> None:
    # A video track that never got a frame (the recorder died), next to some audio.
    path = tmp_path / "hollow.mkv"
    with av.open(str(path), "w") as out:
        stream = out.add_stream("libx264", rate=30)
        stream.width, stream.height, stream.pix_fmt = 64, 64, "yuv420p"
        audio = out.add_stream("aac", rate=48_000, layout="mono")
        out.start_encoding()
        for i in range(20):
            frame = av.AudioFrame.from_ndarray(
                np.zeros((1, 1024), np.float32), format="fltp", layout="mono"
            )
            frame.sample_rate = 48_000
            frame.pts = i * 1024
            out.mux(audio.encode(frame))
        out.mux(audio.encode(None))
        out.mux(stream.encode(None))
    _bad(path, "no frames", "zero duration")


def test_raw_stream_without_timestamps(tmp_path: Path) -> None:
    path = tmp_path / "camera.h264"
    with av.open(str(path), "w", format="h264") as out:
        stream = out.add_stream("libx264", rate=25)
        stream.width, stream.height, stream.pix_fmt = 64, 64, "yuv420p"
        for i in range(10):
            frame = av.VideoFrame.from_ndarray(np.zeros((64, 64, 3), np.uint8), format="rgb24")
            frame.pts = i
            out.mux(stream.encode(frame))
        out.mux(stream.encode(None))
    _bad(path, "no timestamps", "MP4 or MKV")


def test_still_image(tmp_path: Path) -> None:
    path = tmp_path / "photo.png"
    av.VideoFrame.from_ndarray(np.zeros((32, 32, 3), np.uint8), format="rgb24").to_image().save(
        path
    )
    _bad(path, "still image")


def test_mp4_cut_in_half_is_rejected(video: MakeVideo, tmp_path: Path) -> None:
    # PyAV writes the index (moov) at the end: without it nothing can be read.
    data = video("whole.mp4", duration=3.0).read_bytes()
    path = tmp_path / "half.mp4"
    path.write_bytes(data[: len(data) // 2])
    _bad(path, "corrupt")


def test_header_only_is_rejected(video: MakeVideo, tmp_path: Path) -> None:
    data = video("whole.mkv", duration=3.0).read_bytes()
    path = tmp_path / "stub.mkv"
    path.write_bytes(data[:300])
    _bad(path)


def test_truncated_mkv_reports_what_is_there(video: MakeVideo, tmp_path: Path) -> None:
    # A recording that stopped: the header promises 6 s, the data holds about 3.
    data = video("rec.mkv", duration=6.0, fps=30).read_bytes()
    path = tmp_path / "rec-cut.mkv"
    path.write_bytes(data[: len(data) // 2])
    info = probe(str(path))
    assert info.truncated
    assert 1.0 < info.duration < 5.0
    frames = sample_window(str(path), 0.0, 6.0, info=info)
    assert len(frames.times) >= 2 and len(frames.times) % 2 == 0
    assert max(frames.times) < info.duration


def test_corrupt_middle_still_samples(video: MakeVideo, tmp_path: Path) -> None:
    data = bytearray(video("whole.mp4", duration=3.0).read_bytes())
    # moov is at the end; smash bytes in the middle of the media data.
    mid = len(data) // 3
    data[mid : mid + 2000] = bytes(2000)
    path = tmp_path / "smashed.mp4"
    path.write_bytes(bytes(data))
    info = probe(str(path))
    frames = sample_window(str(path), 0.0, info.duration, info=info)
    assert len(frames.times) >= 2


@pytest.mark.parametrize(
    "name",
    [
        "with space.mp4",
        "quote \" and ' apostrophe.mp4",
        "$(touch pwned).mp4",
        "`x` ; rm -rf nothing &.mp4",
        "vidéo été 日本語.mp4",
        "concat:trick.mp4",
        "-starts-with-dash.mp4",
    ],
)
def test_awkward_paths(video: MakeVideo, tmp_path: Path, name: str, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / name
    shutil.copy(video("plain.mp4", duration=1.0), path)
    info = probe(str(path))
    assert info.frame_count == 30
    assert info.path == str(path)
    frames = sample_window(str(path), 0.0, 1.0, info=info)
    assert frames.frames.shape[0] == 4
    # A relative name with a colon must not be taken for an FFmpeg protocol.
    monkeypatch.chdir(tmp_path)
    assert probe(name).frame_count == 30
    assert not (tmp_path / "pwned").exists()


def test_missing_file_message_for_sampling(tmp_path: Path) -> None:
    with pytest.raises(BadInput, match="does not exist"):
        sample_window(str(tmp_path / "gone.mp4"), 0.0, 1.0)


@pytest.mark.parametrize(
    ("start", "end", "words"),
    [
        (5.0, 2.0, "before it starts"),
        (10.0, 12.0, "after the video ends"),
        (float("nan"), 1.0, "not a finite"),
    ],
)
def test_bad_windows(video: MakeVideo, start: float, end: float, words: str) -> None:
    path = video("plain.mp4", duration=1.0)
    with pytest.raises(BadInput, match=words) as caught:
        sample_window(str(path), start, end)
    _one_sentence(str(caught.value), path)


def test_window_without_frames(video: MakeVideo) -> None:
    path = video("plain.mp4", duration=1.0)
    with pytest.raises(BadInput, match="no frame between"):
        sample_window(str(path), 0.501, 0.52)  # frames at 0.5 and 0.5333 only


def test_extreme_aspect_ratio(tmp_path: Path) -> None:
    from marlin_desk.dev.videos import make_video

    path = make_video(tmp_path / "sliver.mp4", duration=0.2, size=(2048, 8), frame_code=False)
    with pytest.raises(BadInput, match="aspect ratio"):
        sample_window(str(path), 0.0, 1.0)
