"""`marlin-desk export` (clips) and `marlin-desk subtitles` (SRT, VTT, YouTube chapters).

Events and find results come through `_events_for` and `_find_spans_for`: from the JSON that
`analyze --json` and `find --json` print (`--events FILE`, `--find-json FILE`), else from the
analysis cache. The transcript comes through `_transcript_for` (`--transcript FILE`, the JSON of
`transcribe --json`). `--source` picks what the subtitles show (media.subtitle_sources; by
default the speech when there is a transcript, else the events); `--captions STYLE` burns
karaoke captions of the speech (media.caption_styles).

Exit codes: 0 all clips written; 1 a clip failed (its FFmpeg message is printed); 2 bad input;
130 cancelled (Ctrl-C cancels the running clip and the rest; no partial file is left).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

from marlin_desk.cli.common import emit_json, progress, run_in_worker
from marlin_desk.core.errors import BadInput
from marlin_desk.core.timeline import Event, Span
from marlin_desk.core.transcript import Transcript

_FORMATS = ("srt", "vtt", "chapters")


def register(subparsers: Any) -> None:
    # Light modules only: building the parser must not load PyAV or FFmpeg tooling.
    from marlin_desk.core.options import SNAP_TOLERANCE_SECONDS
    from marlin_desk.core.reframe import REFRAME_MODES
    from marlin_desk.media.audio import AUDIO_BITRATES, LOUDNESS_TARGETS, TRUE_PEAK_DB
    from marlin_desk.media.caption_styles import CAPTION_STYLES
    from marlin_desk.media.encoders import DEFAULT_ENCODER, ENCODER_CHOICES
    from marlin_desk.media.naming import DEFAULT_TEMPLATE
    from marlin_desk.media.presets import (
        DEFAULT_SPEED,
        FILLS,
        MODES,
        PRESETS,
        SUBTITLE_MODES,
        X264_SPEEDS,
        default_mode,
    )

    p = subparsers.add_parser(
        "export", help="export clips (and their subtitles) with FFmpeg",
        description="Cut clips from VIDEO. smart mode (the default for the original preset) "
                    "re-encodes only up to the first keyframe and copies the rest: "
                    "frame-accurate and nearly as fast as a copy; when the video does not "
                    "allow it the clip is re-encoded in exact mode and the reason is reported. "
                    "exact mode (the default for the resizing presets) re-encodes everything; "
                    "fast mode copies the streams instantly but starts on the keyframe at or "
                    "before each start (the real start is reported). Files are never "
                    "overwritten: an existing name gets a ' (2)' suffix.")
    p.add_argument("video", metavar="VIDEO")
    p.add_argument("--clip", action="append", default=[], metavar="START-END",
                   help="a span in seconds or [h:]m:s, e.g. 12.5-20 or 1:02-1:10.5 (repeatable)")
    p.add_argument("--from-find", metavar="QUERY", help="clip the best spans found for QUERY")
    p.add_argument("--top", type=int, default=3, metavar="K",
                   help="how many spans --from-find takes (default 3)")
    p.add_argument("--find-json", metavar="FILE", help="the output of `marlin-desk find --json`")
    p.add_argument("--events", metavar="FILE", help="the output of `marlin-desk analyze --json`")
    p.add_argument("--preset", choices=list(PRESETS), default="original")
    p.add_argument("--mode", choices=list(MODES), default=None,
                   help=f"default: {default_mode('original')} for the original preset, "
                        f"{default_mode('youtube')} for the others")
    p.add_argument("--fill", choices=list(FILLS),
                   help="how to reach another aspect ratio: crop the centre, blurred background "
                        "or black bars (default: crop for reels/square, pad for youtube)")
    p.add_argument("--subtitles", choices=list(SUBTITLE_MODES), default="none",
                   help="srt/vtt: a file beside each clip; soft: a track in the MP4; burn: in "
                        "the picture")
    _add_source_args(p)
    looks = "; ".join(f"{k}: {v.label.split(': ', 1)[-1]}" for k, v in CAPTION_STYLES.items())
    p.add_argument("--captions", choices=list(CAPTION_STYLES), metavar="STYLE",
                   help="burn in karaoke captions of the speech, the word being said "
                        f"highlighted, inside the 9:16 safe area ({looks}); needs a transcript")
    p.add_argument("--out", metavar="DIR", help="output folder (default: the video's folder)")
    p.add_argument("--name", default=DEFAULT_TEMPLATE, metavar="TEMPLATE",
                   help="file name template; fields {video} {index} {slug} {start} {end} "
                        "{preset} {mode} (default %(default)s)")
    p.add_argument("--speed", choices=list(X264_SPEEDS), default=DEFAULT_SPEED,
                   help="x264 speed/size trade-off (default %(default)s)")
    p.add_argument("--encoder", choices=list(ENCODER_CHOICES), default=DEFAULT_ENCODER,
                   help="video encoder for re-encodes: auto takes the best hardware encoder "
                        "that passes a test encode on this machine (cached), else x264 "
                        "(default %(default)s); smart cuts always match the source in software")
    targets = ", ".join(f"{v:g} {k.split(' (')[0]}" for k, v in LOUDNESS_TARGETS.items()
                        if v is not None)
    p.add_argument("--loudness", default="keep", metavar="keep|LUFS",
                   help="keep the source level (default) or normalise each clip to a target "
                        f"in LUFS ({targets}; two-pass loudnorm, true peak "
                        f"{TRUE_PEAK_DB:g} dBTP); the JSON reports the loudness measured in "
                        "and out")
    p.add_argument("--audio-channels", default="keep", metavar="keep|1|2",
                   help="keep the source's layout (default; more than 2 channels become "
                        "stereo in the social presets), 1 mono, 2 stereo, at the same level")
    p.add_argument("--audio-bitrate", type=int, default=None, metavar="KBPS",
                   help="AAC bit rate of re-encoded audio (e.g. "
                        f"{', '.join(map(str, AUDIO_BITRATES))}; default: the preset's, 192)")
    p.add_argument("--snap-to-shots", action="store_true",
                   help="move each clip's start and end to the nearest shot change within "
                        "--snap-tolerance (the shots are detected once and cached); the "
                        "snapped times are what the clips and their subtitles use")
    p.add_argument("--snap-tolerance", type=float, default=SNAP_TOLERANCE_SECONDS,
                   metavar="S", help="how far an edge may move, seconds (default %(default)s)")
    p.add_argument("--reframe", choices=list(REFRAME_MODES), default=None,
                   help="auto: the crop follows the subject (faces), still inside a dead zone, "
                        "panning at a speed limit, jumping at shot changes; centre: the fixed "
                        "centre crop; off: the preset's fill as it is (default: auto where the "
                        "preset crops to another aspect, e.g. reels and square of 16:9)")
    p.add_argument("--json", action="store_true", help="print one JSON document")
    _add_style_args(p)
    p.set_defaults(func=run_export)

    s = subparsers.add_parser(
        "subtitles", help="write the video's events as SRT, VTT or YouTube chapters",
        description="Subtitles follow the Netflix timed-text rules by default (42 characters a "
                    "line, 2 lines, 5/6 s to 7 s on screen, 2 frames apart).")
    s.add_argument("video", metavar="VIDEO")
    s.add_argument("--format", choices=_FORMATS, default="srt")
    s.add_argument("--out", metavar="FILE",
                   help="output file, '-' for stdout (default: beside the video)")
    s.add_argument("--events", metavar="FILE", help="the output of `marlin-desk analyze --json`")
    _add_source_args(s)
    s.add_argument("--json", action="store_true", help="print one JSON document")
    _add_style_args(s)
    s.set_defaults(func=run_subtitles)


def _add_source_args(p: argparse.ArgumentParser) -> None:
    from marlin_desk.media.subtitle_sources import SUBTITLE_SOURCES

    p.add_argument("--source", choices=list(SUBTITLE_SOURCES), default=None,
                   help="what the subtitles show: speech (the transcript), events (the "
                        "analysis) or both (two files, or two tracks in the MP4); default: "
                        "speech when there is a transcript, else events")
    p.add_argument("--transcript", metavar="FILE",
                   help="the output of `marlin-desk transcribe --json` (it may be edited)")


def _add_style_args(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("subtitle rules")
    g.add_argument("--max-chars", type=int, default=42, help="characters per line (42)")
    g.add_argument("--max-lines", type=int, default=2, help="lines per subtitle (2)")
    g.add_argument("--min-duration", type=float, default=5 / 6, help="seconds (0.833)")
    g.add_argument("--max-duration", type=float, default=7.0, help="seconds (7)")
    g.add_argument("--min-gap-frames", type=int, default=2, help="frames between subtitles (2)")
    g.add_argument("--max-cps", type=float, default=20.0, help="reading speed, chars/s (20)")
    g.add_argument("--long-events", choices=("split", "truncate"), default="split",
                   help="events longer than the maximum: split into repeats, or cut (split)")


def _style(args: argparse.Namespace) -> Any:
    from marlin_desk.media.subtitles import SubtitleStyle

    return SubtitleStyle(args.max_chars, args.max_lines, args.min_duration, args.max_duration,
                         args.min_gap_frames, args.max_cps, args.long_events)


# ------------------------------------------------------------------ events and find results


def _events_for(video_path: str, args: argparse.Namespace) -> list[Event]:
    """The video's events (video time): from `--events FILE` (analyze --json), else from the
    analysis cache (the last complete analysis of this file, found by its content)."""
    path = getattr(args, "events", None)
    if not path:
        from marlin_desk.workflows import cached_analysis

        analysis = cached_analysis(video_path)
        if analysis is None:
            raise BadInput("no analysis for this video yet: run `marlin-desk analyze VIDEO` "
                           "first or pass --events FILE")
        return analysis.events
    doc = _load_json(path)
    items = doc.get("events") if isinstance(doc, dict) else doc
    if not isinstance(items, list):
        raise BadInput(f"{path} has no \"events\" list (expected `marlin-desk analyze --json`)")
    try:
        return [Event.from_json(e) for e in items]
    except (KeyError, TypeError, ValueError) as exc:
        raise BadInput(f"{path}: an event lacks start, end or description ({exc})") from None


def _transcript_for(args: argparse.Namespace, video: str) -> Transcript | None:
    """The video's transcript: from `--transcript FILE` (transcribe --json), else the one
    `marlin-desk transcribe` (or the app) stored for this file, else None."""
    path = getattr(args, "transcript", None)
    if not path:
        from marlin_desk.workflows.speech import cached_transcript

        return cached_transcript(video)
    doc = _load_json(path)
    if isinstance(doc, dict) and isinstance(doc.get("transcript"), dict):
        doc = doc["transcript"]
    if not isinstance(doc, dict) or not isinstance(doc.get("segments"), list):
        raise BadInput(f"{path} has no \"segments\" list (expected `marlin-desk transcribe "
                       "--json`)")
    try:
        return Transcript.from_json(doc)
    except (KeyError, TypeError, ValueError) as exc:
        raise BadInput(f"{path}: a segment or word lacks start, end or text ({exc})") from None


def _source_for(args: argparse.Namespace, transcript: Transcript | None,
                wanted: bool = True) -> str:
    """The subtitle source asked for, or the default; a plain error when speech is asked for
    (`wanted`: subtitles are being written at all) and there is no transcript."""
    from marlin_desk.media.subtitle_sources import default_subtitle_source, kinds

    source = args.source or default_subtitle_source(transcript is not None)
    if wanted and transcript is None and "speech" in kinds(source):
        raise BadInput(f"--source {source} needs a transcript: run `marlin-desk transcribe "
                       "VIDEO` first, or pass --transcript FILE (its --json output)")
    return source


def _find_spans_for(video_path: str, query: str, args: argparse.Namespace) -> list[Span]:
    """Spans found for `query`, best first: from `--find-json FILE` (find --json), else from
    the cache of earlier `marlin-desk find` runs on this file."""
    path = getattr(args, "find_json", None)
    if not path:
        from marlin_desk.workflows import cached_spans

        spans = cached_spans(video_path, query)
        if spans is None:
            raise BadInput("no find results for this query yet: run `marlin-desk find VIDEO "
                           "QUERY` first or pass --find-json FILE")
        return spans
    doc = _load_json(path)
    queries = doc.get("queries") if isinstance(doc, dict) else None
    if not isinstance(queries, list):
        raise BadInput(f"{path} has no \"queries\" list (expected `marlin-desk find --json`)")
    wanted = " ".join(query.split()).casefold()
    for q in queries:
        if isinstance(q, dict) and " ".join(str(q.get("query", "")).split()).casefold() == wanted:
            try:
                spans = [Span.from_json(s) for s in q.get("spans", [])]
            except (KeyError, TypeError, ValueError) as exc:
                raise BadInput(f"{path}: a span lacks start or end ({exc})") from None
            return sorted(spans, key=lambda s: -(s.score if s.score is not None else -1e9))
    known = ", ".join(repr(q.get("query")) for q in queries if isinstance(q, dict)) or "none"
    raise BadInput(f"{path} has no results for {query!r} (it has: {known})")


def _load_json(path: str) -> Any:
    try:
        with open(path, encoding="utf-8") as fh:
            return json.load(fh)
    except OSError as exc:
        raise BadInput(f"cannot read {path}: {exc.strerror or exc}") from None
    except json.JSONDecodeError as exc:
        raise BadInput(f"{path} is not valid JSON (line {exc.lineno})") from None


def _optional_events(video: str, args: argparse.Namespace) -> list[Event] | None:
    """Events when there are some (used to name clips); None when the video is not analysed."""
    try:
        return _events_for(video, args)
    except BadInput:
        if getattr(args, "events", None):
            raise
        return None


# ------------------------------------------------------------------ clip parsing


def parse_time(text: str) -> float:
    """Seconds from `12.5`, `1:02.5` or `1:02:03.25`."""
    parts = text.strip().split(":")
    if not 1 <= len(parts) <= 3 or not all(re.fullmatch(r"\d+(\.\d*)?|\.\d+", p) for p in parts):
        raise BadInput(f"bad time {text!r}: use seconds (12.5) or [h:]m:s (1:02.5)")
    seconds = 0.0
    for part in parts:
        seconds = seconds * 60 + float(part)
    return seconds


def parse_clip(text: str) -> tuple[float, float]:
    start, sep, end = text.partition("-")
    if not sep:
        raise BadInput(f"bad clip {text!r}: use START-END, e.g. 12.5-20")
    a, b = parse_time(start), parse_time(end)
    if b <= a:
        raise BadInput(f"bad clip {text!r}: the end must be after the start")
    return a, b


def _description(events: list[Event] | None, start: float, end: float) -> str:
    """The description of the event that overlaps the span most (for the file name)."""
    best, best_overlap = "", 0.0
    for ev in events or []:
        overlap = min(ev.end, end) - max(ev.start, start)
        if overlap > best_overlap:
            best, best_overlap = ev.description, overlap
    return best


# ------------------------------------------------------------------ export


def run_export(args: argparse.Namespace) -> int:
    from marlin_desk.media.audio import check_options, parse_channels, parse_loudness
    from marlin_desk.media.clip_export import ClipSpec, ExportOptions
    from marlin_desk.media.export_queue import ExportQueue
    from marlin_desk.media.ffmpeg_bin import find_ffmpeg
    from marlin_desk.media.presets import default_mode

    video = args.video
    mode = args.mode or default_mode(args.preset)
    if not Path(video).is_file():
        raise BadInput(f"{video} does not exist or is not a file")
    if args.top < 1:
        raise BadInput("--top must be at least 1")
    loudness = parse_loudness(args.loudness)
    channels = parse_channels(args.audio_channels)
    check_options(loudness, channels, args.audio_bitrate)
    spans: list[tuple[float, float, str]] = []
    for text in args.clip:
        a, b = parse_clip(text)
        spans.append((a, b, ""))
    if args.from_find:
        for span in _find_spans_for(video, args.from_find, args)[:args.top]:
            spans.append((span.start, span.end, args.from_find))
    if not spans:
        raise BadInput("nothing to export: give --clip START-END or --from-find QUERY")
    snapping: dict[str, Any] | None = None
    if args.snap_to_shots:
        spans, snapping = _snap_spans(video, spans, args.snap_tolerance)
    from marlin_desk.media.subtitle_sources import kinds

    transcript = _transcript_for(args, video)
    source = _source_for(args, transcript, args.subtitles != "none")
    if args.captions and transcript is None:
        raise BadInput("--captions shows what is said and needs a transcript: pass "
                       "--transcript FILE (the output of `marlin-desk transcribe VIDEO --json`)")
    if args.subtitles != "none" and "events" in kinds(source):
        events: list[Event] | None = _events_for(video, args)
    else:
        events = _optional_events(video, args)
    clips = [ClipSpec(a, b, desc or _description(events, a, b), args.preset, mode,
                      args.fill, args.subtitles, args.captions, reframe=args.reframe)
             for a, b, desc in spans]
    out_dir = Path(args.out) if args.out else Path(video).resolve().parent
    options = ExportOptions(out_dir, args.name, args.speed, _style(args), encoder=args.encoder,
                            loudness=loudness, audio_channels=channels,
                            audio_kbps=args.audio_bitrate, subtitle_source=source)
    binary = find_ffmpeg()
    bar = _Bars(len(clips), args.encoder)
    queue = ExportQueue(video, clips, options, events=events, on_progress=bar.update,
                        on_result=bar.finished, binary=binary, transcript=transcript,
                        detections=_reframe_detections(args.reframe))
    results = _run_interruptibly(queue)
    bar.close()
    if args.json:
        doc: dict[str, Any] = {"video": str(Path(video).resolve()), "ffmpeg": binary.to_json(),
                               "subtitle_source": source,
                               "clips": [r.to_json() for r in results]}
        if snapping is not None:
            doc["snap"] = snapping
        emit_json(doc)
    else:
        for r in results:
            if r.status == "done":
                print(r.path)
                for sub in r.subtitle_paths:
                    print(sub)
    failed = [r for r in results if r.status == "failed"]
    for r in failed:
        print(f"marlin-desk: clip {r.index} failed: {r.error}", file=sys.stderr)
    if failed:
        return 1
    if any(r.status == "cancelled" for r in results):
        print("marlin-desk: cancelled", file=sys.stderr)
        return 130
    return 0


def _reframe_detections(mode: str | None) -> Any:
    """The cached detection look-up for reframed clips (None when reframing is off)."""
    if mode == "off":
        return None
    from marlin_desk.store.cache import AnalysisCache, CacheUnavailable
    from marlin_desk.workflows.reframe import ReframeCache

    try:
        shots: AnalysisCache | None = AnalysisCache()  # cuts found before are reused
    except CacheUnavailable:
        shots = None
    return ReframeCache(shots=shots).detections


def _snap_spans(video: str, spans: list[tuple[float, float, str]], tolerance: float
                ) -> tuple[list[tuple[float, float, str]], dict[str, Any]]:
    """The spans with their edges on shot changes, and what moved (for the JSON and stderr)."""
    from marlin_desk.cli.shots_cmd import shots_for
    from marlin_desk.core.snap import snap_span

    if not tolerance >= 0:
        raise BadInput("--snap-tolerance must be 0 or more seconds")
    shots = shots_for(video)
    snapped: list[tuple[float, float, str]] = []
    report: list[dict[str, Any]] = []
    for i, (a, b, desc) in enumerate(spans, start=1):
        s, e, moved_s, moved_e = snap_span(a, b, shots.times, tolerance)
        snapped.append((s, e, desc))
        report.append({"index": i, "start": round(s, 6), "end": round(e, 6),
                       "snapped_start": moved_s, "snapped_end": moved_e,
                       "from_start": round(a, 6), "from_end": round(b, 6)})
        if moved_s or moved_e:
            progress(f"clip {i}: snapped {a:.3f}-{b:.3f} to shot changes {s:.3f}-{e:.3f}")
    where = "cached" if shots.cached else f"detected in {shots.seconds:.2f} s"
    progress(f"{len(shots.times)} shot changes ({where}), tolerance {tolerance:g} s")
    return snapped, {"tolerance": tolerance, "shots": shots.to_json(), "clips": report}


def _run_interruptibly(queue: Any) -> list[Any]:
    """Run the queue on a worker thread so that Ctrl-C cancels it cleanly from this one (the
    worker stops FFmpeg, removes the partial file and returns)."""
    return run_in_worker(queue.run, queue.cancel, "export")


class _Bars:
    """Two text progress bars on stderr (this clip, all clips); one line per clip when piped."""

    def __init__(self, count: int, encoder: str = "auto") -> None:
        self.count = count
        self.encoder = encoder  # the --encoder asked for: its outcome is always shown
        self.tty = sys.stderr.isatty()
        self._last = ""

    def update(self, index: int, fraction: float, overall: float) -> None:
        if not self.tty:
            return
        line = (f"\rclip {index + 1}/{self.count} {_bar(fraction)} {fraction:4.0%}   "
                f"all {_bar(overall)} {overall:4.0%}")
        if line != self._last:
            self._last = line
            sys.stderr.write(line)
            sys.stderr.flush()

    def finished(self, result: Any) -> None:
        if self.tty:
            sys.stderr.write("\r\033[K")
        msg = f"clip {result.index}/{self.count} {result.status}"
        if result.status == "done":
            encoder = f", {result.encoder['name']}" if result.encoder else ""
            msg += (f": {result.path.name} ({result.mode_used}{encoder}, starts at "
                    f"{result.real_start:.3f} s, {result.real_duration:.3f} s)")
        progress(msg)
        asked_hardware = self.encoder not in ("auto", "x264")
        if result.encoder and (result.encoder["family"] != "x264" or asked_hardware):
            progress(f"clip {result.index}/{self.count}: encoder {result.encoder['name']}: "
                     f"{result.encoder['why']}")
        if result.fallback:
            progress(f"clip {result.index}/{self.count}: no smart cut, re-encoded in exact "
                     f"mode: {result.fallback}")
        reframe = result.reframe or {}
        if reframe.get("mode") == "auto" and reframe.get("applied"):
            progress(f"clip {result.index}/{self.count}: reframed, {reframe['shots']} shot(s), "
                     f"{reframe['shots_with_subject']} with a subject"
                     + (f" ({reframe['shots_following_motion']} following what moves), "
                        if reframe.get("shots_following_motion") else ", ")
                     + f"{len(reframe['pins'])} pin(s)"
                     + (f": {reframe['note']}" if reframe.get("note") else ""))
        audio = result.audio or {}
        loud = audio.get("loudness")
        if loud:
            out = loud.get("output") or {}
            progress(f"clip {result.index}/{self.count}: loudness {loud['input'].get('I')} -> "
                     f"{out.get('I')} LUFS (target {loud['target']:g}, {loud['method']})")
        if audio.get("note"):
            progress(f"clip {result.index}/{self.count}: {audio['note']}")

    def close(self) -> None:
        if self.tty:
            sys.stderr.write("\r\033[K")
            sys.stderr.flush()


def _bar(fraction: float, width: int = 20) -> str:
    filled = int(round(max(0.0, min(1.0, fraction)) * width))
    return "[" + "#" * filled + "." * (width - filled) + "]"


# ------------------------------------------------------------------ subtitles


def run_subtitles(args: argparse.Namespace) -> int:
    from marlin_desk.media.chapters import format_chapters, youtube_chapters
    from marlin_desk.media.probe import probe
    from marlin_desk.media.subtitle_sources import clip_tracks, kinds, sidecar_suffix
    from marlin_desk.media.subtitles import render, write_new_file

    video = args.video
    info = probe(video)
    source = Path(video).resolve()
    if args.format == "chapters":
        chapters = youtube_chapters(_events_for(video, args), info.duration)
        files = [(".chapters.txt", format_chapters(chapters), len(chapters), "events")]
    else:
        transcript = _transcript_for(args, video)
        chosen = _source_for(args, transcript)
        events = _events_for(video, args) if "events" in kinds(chosen) else None
        tracks = clip_tracks(chosen, 0.0, info.duration, _style(args), info.fps, events=events,
                             transcript=transcript)
        several = len(tracks) > 1
        for t in tracks:
            if not t.cues:
                why = (transcript.note if t.kind == "speech" and transcript and transcript.note
                       else f"nothing to show from the {t.kind}")
                progress(f"the {t.title.lower()} subtitles are empty: {why}")
        files = [(sidecar_suffix(t.kind, args.format, several), render(t.cues, args.format),
                  len(t.cues), t.kind) for t in tracks]
    if args.out == "-":
        if len(files) > 1:
            raise BadInput("--source both writes two files: give --out FILE or a folder, "
                           "not '-'")
        sys.stdout.write(files[0][1])
        return 0
    written = []
    for i, (suffix, text, count, kind) in enumerate(files):
        target = Path(args.out) if args.out else source.with_name(source.stem + suffix)
        if target.is_dir():
            target = target / (source.stem + suffix)
        elif args.out and i > 0:  # --out clip.srt: the second track beside it, named for it
            target = target.with_name(target.stem + suffix)
        if not target.parent.is_dir():
            raise BadInput(f"the folder {target.parent} does not exist")
        written.append((write_new_file(target, text), count, kind))
    if args.json:
        emit_json({"video": str(source), "format": args.format,
                   "source": None if args.format == "chapters" else chosen,
                   "path": str(written[0][0]), "count": written[0][1],
                   "files": [{"path": str(p), "count": n, "source": k} for p, n, k in written]})
    else:
        for path, _, _ in written:
            print(path)
    return 0
