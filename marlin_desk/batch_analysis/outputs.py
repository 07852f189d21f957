"""The result files: named after each video, written beside it (or in an output folder that
mirrors the videos' folders), atomically, and never over a different file or a source video.

Output files are written only when a video is complete, each to a temporary name then renamed.
An existing file with the same content is kept (a re-run writes nothing new); a different one is
never overwritten unless `overwrite` is set: the new result takes `name (2).ext`. A source video
is never written to, even with `overwrite`. Output names are derived from the video's file name
(made safe for every OS) and are the same on every run of the same list; two videos that would
share names in one folder (`clip.mp4` and `clip.mov`) keep their extension in the name
(`clip.mp4.srt`, `clip.mov.srt`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from marlin_desk.batch_analysis.settings import BatchSettings
from marlin_desk.core.errors import BadInput, MarlinError
from marlin_desk.media.chapters import format_chapters, youtube_chapters
from marlin_desk.media.naming import candidate_names, safe_filename, write_atomically
from marlin_desk.media.subtitles import build_cues, render

# What each output is called: `<base><suffix>` in the video's output folder.
SUFFIXES = {"analysis": ".analysis.json", "find": ".find.json", "srt": ".srt", "vtt": ".vtt",
            "chapters": ".chapters.txt", "transcript": ".transcript.json"}


def output_bases(videos: Sequence[str], out: str | None) -> dict[str, Path]:
    """Where each video's outputs go: `folder / base` (add a suffix from SUFFIXES).

    Without `out`, beside the video and named exactly after it (players and editing programs
    pick up `clip.srt` beside `clip.mp4`). With `out`, the videos' folders are mirrored below it
    from their common folder, so `Day1/C0001.MP4` and `Day2/C0001.MP4` never collide, and names
    are made safe for every OS (the output disk may be another file system). Videos that would
    share a base in one folder keep their extension in it (`clip.mp4.srt`, `clip.mov.srt`).
    """
    name_of: Callable[[str], str] = safe_filename if out else (lambda name: name)
    folders: dict[str, Path] = {}
    parents = [os.path.dirname(os.path.abspath(v)) for v in videos]
    root = _common_folder(parents) if out else None
    for video, parent in zip(videos, parents, strict=True):
        folders[video] = Path(out).absolute() / _relative(parent, root) if out else Path(parent)
    groups: dict[tuple[str, str], list[str]] = {}
    for video in videos:
        base = name_of(Path(video).stem)
        groups.setdefault((str(folders[video]), base.casefold()), []).append(video)
    bases: dict[str, Path] = {}
    for members in groups.values():
        if len(members) == 1:
            bases[members[0]] = folders[members[0]] / name_of(Path(members[0]).stem)
            continue
        taken: set[str] = set()
        for video in members:  # list order: the same names on every run of the same list
            name = name_of(Path(video).name)
            unique, n = name, 2
            while unique.casefold() in taken:
                unique, n = f"{name} ({n})", n + 1
            taken.add(unique.casefold())
            bases[video] = folders[video] / unique
    return bases


def _common_folder(parents: Sequence[str]) -> str | None:
    try:
        return os.path.commonpath(parents)
    except ValueError:  # different drives (Windows): mirror each from its drive
        return None


def _relative(parent: str, root: str | None) -> Path:
    if root is not None:
        rel = os.path.relpath(parent, root)
        return Path() if rel == "." else Path(rel)
    p = Path(parent)
    return Path(safe_filename(p.anchor.strip("\\/:") or "drive"), *p.parts[1:])


def place_text(final: Path, text: str, *, overwrite: bool = False,
               protected: Iterable[str] = ()) -> Path:
    """Write `text` (UTF-8, Unix line ends) at `final` atomically: a temporary name beside it,
    then a rename. An existing file with the same content is kept as it is; a different one is
    replaced only with `overwrite`, else the text goes to the first free `final (n)` name.
    Paths in `protected` (real paths of source videos) are never written. Returns the path."""
    data = text.encode("utf-8")
    shielded = {os.path.realpath(p) for p in protected}
    try:
        final.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise MarlinError(f"cannot create the folder {final.parent}: "
                          f"{exc.strerror or exc}") from None
    if overwrite and os.path.realpath(final) in shielded:
        overwrite = False
    if not overwrite:
        for cand in candidate_names(final):
            if not (cand.exists() or cand.is_symlink()):
                break
            if os.path.realpath(cand) not in shielded and _same_content(cand, data):
                return cand
    return write_atomically(final, data, overwrite=overwrite)


def _same_content(path: Path, data: bytes) -> bool:
    try:
        return path.is_file() and path.stat().st_size == len(data) and path.read_bytes() == data
    except OSError:
        return False


def write_outputs(base: Path, video: str, analysis: Any, finds: Sequence[Any], info: Any,
                  model: str, settings: BatchSettings, protected: Iterable[str] = (),
                  ) -> tuple[dict[str, str], list[str]]:
    """The video's result files: analysis JSON (the `analyze --json` shape, which `subtitles`
    and `export --events` read), find JSON (the `find --json` shape, for `export --find-json`),
    subtitles and YouTube chapters. Returns ({kind: path}, notes on what was not written).
    The files hold only what the results are, never timings of this run, so a re-run with the
    same results writes the same bytes (and keeps the files it finds)."""
    outputs: dict[str, str] = {}
    notes: list[str] = []
    protected = list(protected)

    def put(kind: str, text: str) -> None:
        path = place_text(base.with_name(base.name + SUFFIXES[kind]), text,
                          overwrite=settings.overwrite, protected=protected)
        outputs[kind] = str(path)

    doc = analysis.to_json()
    doc["video"] = video
    put("analysis", _json_text(doc))
    if finds:
        put("find", _json_text({
            "video": video, "duration": round(info.duration, 3), "model": model,
            "queries": [{k: v for k, v in r.to_json().items() if k != "seconds"}
                        for r in finds]}))
    if settings.subtitles:
        cues = build_cues(analysis.events, settings.style, fps=info.fps, limit=info.duration)
        if cues:
            put(settings.subtitles, render(cues, settings.subtitles))  # type: ignore[arg-type]
        else:
            notes.append("no subtitles: the analysis has no events")
    if settings.chapters:
        try:
            chapters = youtube_chapters(analysis.events, info.duration)
        except BadInput as exc:
            notes.append(f"no chapters: {exc}")
        else:
            put("chapters", format_chapters(chapters))
    return outputs, notes


def _json_text(doc: Any) -> str:
    return json.dumps(doc, ensure_ascii=False, indent=2) + "\n"


def write_transcript(base: Path, video: str, transcript: Any, settings: BatchSettings,
                     protected: Iterable[str] = ()) -> str:
    """The video's transcript file (the `transcribe --json` shape, without this run's timings,
    so a re-run writes the same bytes). Returns its path."""
    doc = {"video": video, **transcript.to_json()}
    path = place_text(base.with_name(base.name + SUFFIXES["transcript"]), _json_text(doc),
                      overwrite=settings.overwrite, protected=protected)
    return str(path)
