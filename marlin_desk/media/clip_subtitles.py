"""One clip's subtitle files: the soft tracks and the ASS to burn in before FFmpeg runs, the
sidecar files beside the finished clip after; from the speech, the events or both
(media.subtitle_sources), with karaoke captions (media.captions) when the spec asks."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from marlin_desk.core.timeline import Event
from marlin_desk.core.transcript import Transcript
from marlin_desk.media.captions import clip_captions_ass
from marlin_desk.media.export_spec import ClipSpec, ExportOptions
from marlin_desk.media.subtitle_sources import (
    SoftTrack,
    clip_tracks,
    empty_note,
    sidecar_path,
)
from marlin_desk.media.subtitles import (
    burn_in_ass,
    burn_style_for,
    render,
    write_new_file,
    write_text_file,
)


@dataclass(frozen=True)
class ClipSources:
    """What a clip's subtitles are made from."""

    events: Sequence[Event] | None
    transcript: Transcript | None


@dataclass
class WorkFiles:
    """Files FFmpeg reads while it writes the clip (in a temporary folder)."""

    soft: list[SoftTrack] = field(default_factory=list)
    burn: Path | None = None  # the ASS for the `subtitles` filter: captions or subtitles
    note: str = ""  # what had nothing to show in this clip


def notes(*parts: str) -> str:
    return "; ".join(p for p in parts if p)


def work_files(spec: ClipSpec, options: ExportOptions, sources: ClipSources, start: float,
               duration: float, size: tuple[int, int], fps: float, work: Path) -> WorkFiles:
    """The soft tracks and the burn-in ASS of the clip [start, start + duration) of the video,
    written in `work` for an output frame of `size` pixels."""
    out = WorkFiles()
    w, h = size
    style, source = options.subtitle_style, options.subtitle_source
    if spec.captions is not None:
        ass = clip_captions_ass(sources.transcript or Transcript(None), start, duration, w, h,
                                spec.captions)
        out.burn = work / "captions.ass"
        write_text_file(out.burn, ass)
        if "\nDialogue:" not in ass:
            out.note = "no speech in this clip: no captions"
    if spec.subtitles == "soft":
        tracks = clip_tracks(source, start, duration, style, fps, events=sources.events,
                             transcript=sources.transcript)
        out.note = notes(out.note, empty_note(tracks))
        for t in tracks:
            if t.cues:
                out.soft.append(SoftTrack(work / f"soft-{t.kind}.srt", t.title))
                write_text_file(out.soft[-1].path, render(t.cues, "srt"))
    elif spec.subtitles == "burn":
        rules = burn_style_for(style, w, h, options.burn_style)
        (track,) = clip_tracks(source, start, duration, rules, fps, events=sources.events,
                               transcript=sources.transcript)
        out.note = notes(out.note, empty_note([track]))
        out.burn = work / "burn.ass"
        write_text_file(out.burn, burn_in_ass(track.cues, w, h, options.burn_style,
                                              rules.max_chars_per_line))
    return out


def write_sidecars(spec: ClipSpec, options: ExportOptions, sources: ClipSources,
                   clip_path: Path, start: float, duration: float,
                   fps: float) -> tuple[list[Path], str]:
    """The srt/vtt files beside a finished clip (clip time, never overwriting), and a note for
    a source with nothing in the clip (no empty file is written for it)."""
    if spec.subtitles not in ("srt", "vtt"):
        return [], ""
    tracks = clip_tracks(options.subtitle_source, start, duration, options.subtitle_style, fps,
                         events=sources.events, transcript=sources.transcript)
    paths = [write_new_file(sidecar_path(clip_path, t.kind, spec.subtitles, len(tracks) > 1),
                            render(t.cues, spec.subtitles)) for t in tracks if t.cues]
    return paths, empty_note(tracks)
