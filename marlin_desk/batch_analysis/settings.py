"""What a batch is asked to do."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from marlin_desk.core.options import DEFAULT_VIDEOS_AT_ONCE
from marlin_desk.media.subtitles import SubtitleStyle
from marlin_desk.workflows import JobSettings


@dataclass
class BatchSettings:
    job: JobSettings
    queries: list[str] = field(default_factory=list)
    subtitles: str | None = None  # "srt" | "vtt" | None
    chapters: bool = True  # YouTube chapters, where the video's events allow them
    out: str | None = None  # None: beside each video; else this folder, mirroring subfolders
    overwrite: bool = False  # replace earlier output files of the same name (never a video)
    videos_at_once: int = DEFAULT_VIDEOS_AT_ONCE  # only where concurrency_allowed
    use_cache: bool = True
    style: SubtitleStyle = field(default_factory=SubtitleStyle)
    # workflows.speech.SpeechSettings: also transcribe each video (after its analysis, in the
    # same queue) and write its transcript JSON; None: no transcription.
    transcribe: Any = None
