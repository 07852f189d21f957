"""Two people who do not fit in one 9:16 crop: the crop goes to the one whose mouth moves.

The video: two copies of the astronaut photograph, the larger one on the left silent, the
smaller one on the right with her mouth and jaw moving (the lower middle of her face shifted a
few pixels on every other frame), over the textured background. The same video with both
silent keeps today's rule: the largest face. With a transcript, a moving mouth counts only
while someone is heard (real speech from espeak-ng, transcribed by the bundled tiny.en)."""

from __future__ import annotations

import subprocess
import wave
from dataclasses import replace
from fractions import Fraction
from pathlib import Path

import av
import numpy as np

from marlin_desk.core.reframe import ReframeSettings
from marlin_desk.dev.reframe_videos import FACE_IN_PATCH, background, face_patch
from marlin_desk.dev.speech import spoken_audio
from marlin_desk.media.probe import probe
from marlin_desk.media.reframe_detect import detect_span
from marlin_desk.media.reframe_path import CropPath, compute_path
from marlin_desk.store import AnalysisCache
from marlin_desk.workflows.reframe import ReframeCache
from marlin_desk.workflows.speech import speech_settings, transcribe
from tests.speech.conftest import needs_speech

W, H, FPS, SECONDS = 640, 360, 25, 4.0


def _talking(patch: np.ndarray, drop: int) -> np.ndarray:
    """The patch with the mouth and jaw moved down `drop` px."""
    fx, fy, fw, fh = FACE_IN_PATCH
    ph, pw = patch.shape[:2]
    y0, y1 = int((fy + 0.55 * fh) * ph), int((fy + fh) * ph)
    x0, x1 = int((fx + 0.2 * fw) * pw), int((fx + 0.8 * fw) * pw)
    out = patch.copy()
    if drop:
        out[y0 + drop:y1, x0:x1] = patch[y0:y1 - drop, x0:x1]
    return out


def _two_people(path: Path, right_talks: bool, seconds: float = SECONDS) -> tuple[float, float]:
    """Write the video; returns the two face centres (x in pixels): left, right."""
    big, small = face_patch(round(H * 0.5)), face_patch(round(H * 0.42))
    fx, _, fw, _ = FACE_IN_PATCH
    left_x = round(0.2 * W - (fx + fw / 2) * big.shape[1])
    right_x = round(0.8 * W - (fx + fw / 2) * small.shape[1])
    base = background(W, H, 1)
    rng = np.random.default_rng(7)  # speech is no rhythm the sampling could fall in step with
    with av.open(str(path), "w") as container:
        stream = container.add_stream("libx264", rate=Fraction(FPS))
        stream.width, stream.height, stream.pix_fmt = W, H, "yuv420p"
        stream.options = {"preset": "veryfast", "crf": "18"}
        for i in range(int(seconds * FPS)):
            img = base.copy()
            img[40:40 + big.shape[0], left_x:left_x + big.shape[1]] = big
            face = _talking(small, int(rng.integers(0, 4)) * 2) if right_talks else small
            img[70:70 + small.shape[0], right_x:right_x + small.shape[1]] = face
            frame = av.VideoFrame.from_ndarray(img, format="rgb24")
            frame.pts = i
            container.mux(stream.encode(frame))
        container.mux(stream.encode(None))
    return (left_x + (fx + fw / 2) * big.shape[1], right_x + (fx + fw / 2) * small.shape[1])


def test_the_crop_goes_to_the_face_that_speaks(tmp_path: Path) -> None:
    for right_talks, want in ((True, "right"), (False, "left")):
        video = tmp_path / f"two-{want}.mp4"
        left, right = _two_people(video, right_talks)
        info = probe(str(video))
        det = detect_span(str(video), info, 0.0, info.duration, cuts=[])
        assert all(len(s.faces) == 2 for s in det.samples), [len(s.faces) for s in det.samples]
        path = compute_path(det, 1080, 1920)
        later = [s.t for s in det.samples if s.t >= 1.0]
        face = right if want == "right" else left
        held = sum(path.crop_at(t).x <= face <= path.crop_at(t).x + path.crop_w
                   for t in later)
        assert held / len(later) >= 0.9, f"{want}: {held} of {len(later)}"


def two_talking(folder: Path) -> tuple[Path, float, float]:
    """10 s of the two faces, hers talking all along, with words heard from 4 s on (espeak-ng):
    (the video, the left and right face centres in pixels)."""
    picture = folder / "picture.mp4"
    left, right = _two_people(picture, True, seconds=10.0)
    samples, rate, _ = spoken_audio(["we will launch the new boat on friday morning",
                                     "and sail it down the river"], lead_in=4.0, pause=0.3,
                                    tail=0.5)
    sound = folder / "speech.wav"
    with wave.open(str(sound), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes((np.clip(samples, -1, 1) * 32767).astype("<i2").tobytes())
    video = folder / "two talking.mp4"
    subprocess.run(["ffmpeg", "-v", "error", "-y", "-i", str(picture), "-i", str(sound),
                    "-c:v", "copy", "-c:a", "aac", "-shortest", str(video)], check=True)
    return video, left, right


def _share_on(path: CropPath, face: float, times: list[float]) -> float:
    return sum(path.crop_at(t).x <= face <= path.crop_at(t).x + path.crop_w
               for t in times) / len(times)


@needs_speech
def test_in_silence_a_moving_mouth_is_not_taken_for_the_speaker(tmp_path: Path) -> None:
    """Her mouth moves from the start (a laugh), words are heard only from 4 s: with the
    stored transcript the crop keeps the larger face until she is heard, then goes to her."""
    video, left, right = two_talking(tmp_path)
    cache = AnalysisCache(tmp_path / "analyses.sqlite3")
    try:
        heard = transcribe(str(video), speech_settings(), cache=cache)
        assert len(heard.words) >= 10
        info = probe(str(video))
        det, _ = ReframeCache(tmp_path / "reframe", shots=cache).lookup(
            str(video), info, 0.0, info.duration, ReframeSettings())
    finally:
        cache.close()
    assert det.speech and 3.6 <= det.speech[0][0] <= 4.5, det.speech  # from the transcript
    speaking_from, speaking_to = det.speech[0][0], det.speech[-1][1]
    silent = [s.t for s in det.samples if 1.0 <= s.t <= speaking_from - 0.5]
    later = [s.t for s in det.samples if speaking_from + 2.0 <= s.t <= speaking_to]
    gated = compute_path(det, 1080, 1920)
    assert _share_on(gated, left, silent) >= 0.9  # a laugh is not speech
    assert _share_on(gated, right, later) >= 0.8  # her words are
    mouths_alone = compute_path(replace(det, speech=None), 1080, 1920)
    assert _share_on(mouths_alone, right, silent) >= 0.9  # what it did without a transcript
