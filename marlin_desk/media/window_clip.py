"""A window's sampled frames packed for a model that runs on a server.

The frames are the ones the local backend would see (media.sampling: VFR, rotation, start
offsets and odd sizes already handled, already at the model's frame size), so the budget is set
by the model, not by the upload. Two packings:
- a JPEG sequence in a data URL (vLLM's `video/jpeg` loader), sent with each frame's time: the
  server writes exactly the app's timestamps, VFR included;
- an H.264 clip whose constant rate spaces the frames from the first frame's time to the last
  one's, for a server that reads clips from a shared disk (file URLs): the server's times are
  then the app's to within a frame's rounding.
Both are made in memory (Pillow, PyAV): no temporary files and no FFmpeg binary needed.
"""

from __future__ import annotations

import base64
import io
from fractions import Fraction

import av

from marlin_desk.media.sampling import SampledFrames

CRF = "18"  # visually lossless at these sizes; a 120 s window is well under a megabyte
JPEG_QUALITY = 92  # close to the decoded frame; a 120 s window is a few MB of base64


def jpeg_sequence_url(frames: SampledFrames) -> str:
    """`data:video/jpeg;base64,<frame 1>,<frame 2>,...`, one base64 JPEG per frame."""
    from PIL import Image

    parts = []
    for image in frames.frames:
        out = io.BytesIO()
        Image.fromarray(image).save(out, format="JPEG", quality=JPEG_QUALITY)
        parts.append(base64.b64encode(out.getvalue()).decode("ascii"))
    return "data:video/jpeg;base64," + ",".join(parts)


def spread_rate(relative_times: list[float]) -> float:
    """The constant frame rate that puts the last frame at its real time after the first."""
    span = relative_times[-1] - relative_times[0] if relative_times else 0.0
    if len(relative_times) < 2 or span <= 0:
        return 2.0  # one frame (shown twice): any rate; the budget's own
    return (len(relative_times) - 1) / span


def encode_clip(frames: SampledFrames, fps: float) -> bytes:
    """MP4 (H.264, yuv420p, constant `fps`) of the frames, in order."""
    height, width = frames.size
    out = io.BytesIO()
    with av.open(out, "w", format="mp4") as container:
        stream = container.add_stream("libx264", rate=_rate(fps))
        stream.width, stream.height, stream.pix_fmt = width, height, "yuv420p"
        stream.options = {"crf": CRF, "preset": "veryfast"}
        for image in frames.frames:
            frame = av.VideoFrame.from_ndarray(image, format="rgb24")
            for packet in stream.encode(frame):
                container.mux(packet)
        for packet in stream.encode():
            container.mux(packet)
    return out.getvalue()


def _rate(fps: float) -> Fraction:
    return Fraction(fps).limit_denominator(1001)
