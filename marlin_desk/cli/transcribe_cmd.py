"""`marlin-desk transcribe VIDEO`: what is said, as words with times (Whisper, cached)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from marlin_desk.cli.common import emit_json, progress, run_in_worker
from marlin_desk.core.errors import BadInput


def speech_options(parser: argparse.ArgumentParser, *, prefix: str = "") -> None:
    """The options that choose the speech model and how it runs (transcribe, batch), built
    from the settings vocabulary the app's Preferences use too. `prefix` ("speech-") where a
    command has Marlin's own --model and --device."""
    from marlin_desk.core import options
    from marlin_desk.models.catalogue import DEFAULT_SPEECH_MODEL, SPEECH_CATALOGUE

    sizes = ", ".join(e.alias for e in SPEECH_CATALOGUE)
    parser.add_argument(f"--{prefix}model", dest="speech_model", default=None, metavar="NAME",
                        help=f"Whisper size ({sizes}), hub id or folder (default: "
                             f"{DEFAULT_SPEECH_MODEL} when it is downloaded, else the bundled "
                             "tiny.en, and the output says which)")
    parser.add_argument("--language", dest="speech_language",
                        default=options.DEFAULT_SPEECH_LANGUAGE, metavar="CODE",
                        help="the spoken language (en, de, fr...), or auto to detect it "
                             "(default %(default)s)")
    parser.add_argument(f"--{prefix}device", dest="speech_device",
                        default=options.DEFAULT_SPEECH_DEVICE, choices=options.SPEECH_DEVICES,
                        help="auto: CUDA only when the GPU has room beside Marlin, else the "
                             "CPU (int8)")


def register(subparsers: Any) -> None:
    from marlin_desk.core import options

    p = subparsers.add_parser(
        "transcribe", help="what is said in a video: words with times (Whisper)",
        description="Transcribe VIDEO's speech with Whisper (faster-whisper: voice-activity "
                    "filter, word timestamps, language detection), chunk by chunk. Stored in "
                    "the analysis cache by content, model and settings: asking again is "
                    "instant, and an interrupted run resumes after the finished chunks. Times "
                    "are video times (seconds from the first video frame).")
    p.add_argument("video", metavar="VIDEO")
    speech_options(p)
    p.add_argument("--chunk", type=float, default=options.SPEECH_CHUNK_SECONDS, metavar="S",
                   help="seconds of sound per chunk, cut at a quiet moment (default "
                        "%(default)s)")
    p.add_argument("--fresh", action="store_true", help="transcribe again, ignoring the cache")
    p.add_argument("--no-cache", action="store_true", help="neither read nor write the cache")
    p.add_argument("--json", action="store_true",
                   help="print one JSON document (segments, and words with start/end/"
                        "probability)")
    p.set_defaults(func=run_transcribe)


def settings_from(args: argparse.Namespace, chunk: float | None = None) -> Any:
    """SpeechSettings from the speech options, through the call the app makes (workflows)."""
    from marlin_desk.core import options
    from marlin_desk.workflows.speech import speech_settings

    settings = speech_settings(model=args.speech_model, language=args.speech_language,
                               device=args.speech_device,
                               chunk_seconds=chunk or options.SPEECH_CHUNK_SECONDS)
    if settings.choice.source != "user":
        progress(f"speech model: {settings.choice.why}")
    return settings


def run_transcribe(args: argparse.Namespace) -> int:
    import threading

    from marlin_desk.workflows.speech import transcribe

    video = args.video
    if not Path(video).is_file():
        raise BadInput(f"{video} does not exist or is not a file")
    settings = settings_from(args, args.chunk)
    stop = threading.Event()
    bar = Bar()
    try:
        transcript = run_in_worker(
            lambda: transcribe(video, settings, progress=bar, cancel=stop,
                               use_cache=not args.no_cache, fresh=args.fresh),
            stop.set, "transcribe")
    finally:
        bar.close()
    if args.json:
        emit_json({"video": str(Path(video).resolve()), **transcript.to_json()})
        return 0
    for seg in transcript.segments:
        print(f"{seg.start:9.2f} - {seg.end:9.2f}  {seg.text.strip()}")
    extra = transcript.extra
    if transcript.note:
        progress(f"marlin-desk: {transcript.note}")
    where = "from the cache" if extra.get("cached") else f"in {extra.get('seconds', 0):.1f} s"
    progress(f"{len(transcript.words)} words, language {transcript.language or '?'}, {where} "
             f"({extra.get('device', '?')} {extra.get('compute_type', '')})")
    return 0


class Bar:
    """Chunk progress on stderr: rewritten in place on a terminal, silent otherwise."""

    def __init__(self) -> None:
        self.tty = sys.stderr.isatty()
        self._shown = False

    def __call__(self, p: Any) -> None:
        if not self.tty:
            return
        eta = f", about {p.eta:.0f} s left" if p.eta is not None else ""
        sys.stderr.write(f"\rtranscribe {p.done}/{p.total} chunks{eta}".ljust(60))
        sys.stderr.flush()
        self._shown = True

    def close(self) -> None:
        if self._shown:
            sys.stderr.write("\r\033[K")
            sys.stderr.flush()
            self._shown = False
