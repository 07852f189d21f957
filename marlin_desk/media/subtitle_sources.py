"""Where a clip's subtitles come from, what speech, events or both give, and their file names.

`speech` is what was said (the transcript's words, media.speech_cues), `events` what the model
saw (the timeline's descriptions), `both` two tracks: two sidecar files (`clip.srt` for the
speech, `clip.events.srt` for the events) or two subtitle streams in the MP4, titled "Speech" and
"Events". Burned-in subtitles show one source. The default is speech when the video has a
transcript, else events (default_subtitle_source: the CLI and the app ask it, nobody else
decides). Karaoke captions (media.captions) always show the speech.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from marlin_desk.core.errors import BadInput

if TYPE_CHECKING:  # kept light: the CLI reads the choices below without loading the writers
    from marlin_desk.core.timeline import Event
    from marlin_desk.core.transcript import Transcript
    from marlin_desk.media.subtitles import Cue, SubtitleStyle

SubtitleSource = Literal["speech", "events", "both"]
SUBTITLE_SOURCES: tuple[str, ...] = ("speech", "events", "both")
SOURCE_LABELS: dict[str, str] = {
    "speech": "What is said (the transcript)",
    "events": "What is seen (the timeline's events)",
    "both": "Both, as two tracks",
}
TRACK_TITLES = {"speech": "Speech", "events": "Events"}


def default_subtitle_source(has_transcript: bool) -> SubtitleSource:
    """Speech when the video has a transcript, else the events."""
    return "speech" if has_transcript else "events"


def kinds(source: str) -> tuple[str, ...]:
    """The tracks a source gives, speech first."""
    if source not in SUBTITLE_SOURCES:
        raise BadInput(f"unknown subtitle source {source!r}; use {', '.join(SUBTITLE_SOURCES)}")
    return ("speech", "events") if source == "both" else (source,)


def check_inputs(subtitles: str, source: str, captions: str | None, *, has_events: bool,
                 has_transcript: bool) -> None:
    """BadInput saying what is missing or contradictory, before anything is written."""
    needed = kinds(source) if subtitles != "none" else ()
    if "events" in needed and not has_events:
        raise BadInput("subtitles from the events need the video's analysis: analyse the video "
                       "first (or choose the speech source)")
    if "speech" in needed and not has_transcript:
        raise BadInput("subtitles from the speech need a transcript: transcribe the video first "
                       "(or choose the events source)")
    if subtitles == "burn" and source == "both":
        raise BadInput("burned subtitles show one source: choose speech or events (both gives "
                       "two tracks with srt, vtt or soft subtitles)")
    if captions is not None:
        if not has_transcript:
            raise BadInput("captions show what is said and need a transcript: transcribe the "
                           "video first")
        if subtitles == "burn":
            raise BadInput("captions and burned subtitles would cover each other: choose one "
                           "(captions go well with srt, vtt or soft subtitles)")


@dataclass(frozen=True)
class Track:
    """One source's cues for one clip, in clip time."""

    kind: str  # speech or events
    cues: list[Cue]

    @property
    def title(self) -> str:
        return TRACK_TITLES[self.kind]


def clip_tracks(source: str, start: float, duration: float, style: SubtitleStyle, fps: float, *,
                events: Sequence[Event] | None = None,
                transcript: Transcript | None = None) -> list[Track]:
    """Each source's cues for the clip [start, start + duration) of the video, speech first;
    a source with nothing in the clip gives an empty track."""
    from marlin_desk.media.speech_cues import clip_words, speech_cues
    from marlin_desk.media.subtitles import build_cues, clip_events

    tracks = []
    for kind in kinds(source):
        if kind == "speech":
            words = clip_words(transcript.words if transcript else [], start, duration)
            cues = speech_cues(words, style, fps=fps, limit=duration)
        else:
            cues = build_cues(clip_events(events or [], start, duration, style.min_visible),
                              style, fps=fps, limit=duration)
        tracks.append(Track(kind, cues))
    return tracks


def sidecar_suffix(kind: str, fmt: str, several: bool) -> str:
    """`.srt`; with two tracks the events get `.events.srt` (the speech keeps the plain name,
    which players load by themselves)."""
    return f".events.{fmt}" if several and kind == "events" else f".{fmt}"


def sidecar_path(clip_path: Path, kind: str, fmt: str, several: bool) -> Path:
    """The subtitle file beside a clip: `clip.srt`, or `clip.events.srt` (sidecar_suffix)."""
    return clip_path.with_name(clip_path.stem + sidecar_suffix(kind, fmt, several))


def empty_note(tracks: Sequence[Track]) -> str:
    """Why a track got no file or stream ('' when every track has cues)."""
    what = {"speech": "no speech in this clip", "events": "no event overlaps this clip"}
    return "; ".join(f"{what[t.kind]}: no {t.title.lower()} subtitles written"
                     for t in tracks if not t.cues)


@dataclass(frozen=True)
class SoftTrack:
    """A subtitle file to mux as a stream of the clip, with the title players show."""

    path: Path
    title: str


def soft_track_args(tracks: Sequence[SoftTrack], language: str) -> list[str]:
    """FFmpeg output options naming the subtitle streams (MP4 keeps the title as the handler
    name, Matroska as the title); the first is the default track."""
    args: list[str] = []
    for i, track in enumerate(tracks):
        args += [f"-metadata:s:s:{i}", f"language={language}",
                 f"-metadata:s:s:{i}", f"title={track.title}",
                 f"-metadata:s:s:{i}", f"handler_name={track.title}",
                 f"-disposition:s:{i}", "default" if i == 0 else "0"]
    return args
