"""Small real source videos (made with FFmpeg, 2 s, 32x32) and one hand-off scenario whose
expected frames are known by construction: every time given is a known frame plus or minus
less than half a frame, so the nearest frame is that frame whatever the arithmetic."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

import pytest

from marlin_desk.core.project import Clip
from marlin_desk.core.timeline import Event, Span
from marlin_desk.handoff import HandoffRequest, SearchHit, SourceVideo
from marlin_desk.handoff_export import source_video
from marlin_desk.media.ffmpeg_bin import find_ffmpeg
from marlin_desk.media.probe import probe


@dataclass(frozen=True)
class Source:
    """A test file and the frame numbers its timecodes stand for, worked out by hand."""

    id: str
    rate: Fraction
    timecode: str | None
    suffix: str
    tc0: int  # the frame number of the file's first frame (its start timecode)
    timeline0: int  # 01:00:00:00 (drop-frame at 29.97) in frames
    drop: bool


SOURCES = [
    Source("25", Fraction(25), None, ".mp4", 0, 90_000, False),
    Source("29.97df", Fraction(30000, 1001), "01:00:00;00", ".mp4", 107_892, 107_892, True),
    Source("29.97ndf", Fraction(30000, 1001), "01:00:00:00", ".mp4", 108_000, 108_000, False),
    Source("60", Fraction(60), None, ".mp4", 0, 216_000, False),
    Source("25tc", Fraction(25), "10:00:00:00", ".mov", 900_000, 90_000, False),
]

# The scenario, in frames: two clips, three events (one outside every clip), a search result
# that runs past the end of its clip.
CLIP_FRAMES = [(3, 20, 'Quote "it\'s" — café ☕'), (30, 41, "second")]
EVENT_FRAMES = [(5, 9, "Der Hund springt „hinein“ — 犬 & <b>"), (32, 35, "it's a 'test'"),
                (45, 47, "outside every clip")]
SEARCH = ("the red \"screen\"", 18, 25)
# Expected placement: (clip index, kind, name, source frame, frames, record frame)
EXPECTED_MARKERS = [
    (0, "event", EVENT_FRAMES[0][2], 5, 4, 2),
    (0, "search", SEARCH[0], 18, 2, 15),
    (1, "event", EVENT_FRAMES[1][2], 32, 3, 19),
]
EXPECTED_CLIPS = [(3, 20, 0), (30, 41, 17)]  # (in, out, record in)


def near(frame: int, rate: Fraction, nudge: float) -> float:
    """A time `nudge` frames (|nudge| < 0.5) off frame `frame`."""
    return float((Fraction(frame) + Fraction(nudge)) / rate)


def request_for(source: SourceVideo) -> HandoffRequest:
    r = source.rate
    clips = [Clip(near(a, r, 0.3), near(b, r, -0.4), name) for a, b, name in CLIP_FRAMES]
    events = [Event(near(a, r, -0.45), near(b, r, 0.2), d) for a, b, d in EVENT_FRAMES]
    query, a, b = SEARCH
    searches = [SearchHit(query, Span(near(a, r, 0.49), near(b, r, 0.0), score=0.75))]
    return HandoffRequest(source, clips, events, searches, title="Timeline «one»")


def _make(path: Path, s: Source) -> None:
    cmd = [find_ffmpeg().path, "-v", "error", "-y", "-f", "lavfi", "-i",
           f"testsrc2=size=32x32:rate={s.rate.numerator}/{s.rate.denominator}:duration=2",
           "-f", "lavfi", "-i", "sine=frequency=440:duration=2"]
    if s.timecode:
        cmd += ["-timecode", s.timecode]
    cmd += ["-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", "-c:a", "aac",
            "-shortest", str(path)]
    subprocess.run(cmd, check=True, timeout=60)


@pytest.fixture(scope="session")
def source_files(tmp_path_factory: pytest.TempPathFactory) -> Callable[[Source], Path]:
    folder = tmp_path_factory.mktemp("handoff-sources")
    made: dict[str, Path] = {}

    def get(s: Source) -> Path:
        if s.id not in made:
            path = folder / f"src {s.id} é{s.suffix}"  # a space and a non-ASCII letter
            _make(path, s)
            made[s.id] = path
        return made[s.id]

    return get


@pytest.fixture(params=SOURCES, ids=[s.id for s in SOURCES])
def source(request: pytest.FixtureRequest, source_files: Callable[[Source], Path]
           ) -> tuple[Source, SourceVideo]:
    s: Source = request.param
    return s, source_video(probe(str(source_files(s))))
