"""`marlin-desk batch`: analyse (and search) every video of a folder or a list, writing each
video's results as files. The work is marlin_desk.batch_analysis; this is its command line.

Output files, per video, named after it (`clip.mp4` -> `clip.*`; with two videos sharing a name
in one folder, `clip.mp4.*`), beside the video or, with --out DIR, in DIR mirroring the videos'
folders below their common folder:
  clip.analysis.json   the `analyze --json` document (`subtitles`/`export --events` read it)
  clip.find.json       with --queries: the `find --json` document (`export --find-json`)
  clip.srt | clip.vtt  with --subtitles: the events as subtitles
  clip.chapters.txt    YouTube chapters, when the events meet YouTube's rules (else a note)
  clip.transcript.json with --transcribe: the `transcribe --json` document (what is said)
Files are written to a temporary name, then renamed; an identical existing file is kept, a
different one is never overwritten (without --overwrite the new one is `clip (2).srt`); source
videos are never touched.

Exit codes: 0 every video done (or already done); 4 the batch finished but some videos failed
(each is listed with its reason); 2 bad arguments or no videos found; 3 the model cannot be
loaded; 130 stopped by Ctrl-C (a re-run resumes: finished videos are skipped and the partial
one goes on from its last finished window); 1 internal error.
"""

from __future__ import annotations

import argparse
import threading
from pathlib import Path
from typing import Any

from marlin_desk.cli.common import emit_json, progress, run_in_worker
from marlin_desk.core.options import DEFAULT_VIDEOS_AT_ONCE

EXIT_SOME_FAILED = 6  # 4 is out of GPU memory, 5 a failing server
EXIT_CANCELLED = 130


def register(subparsers: Any) -> None:
    from marlin_desk.cli.model_cmds import model_options

    p = subparsers.add_parser(
        "batch",
        help="analyse every video in a folder or a list, writing results beside them",
        description="Analyse every video in FOLDER (searched recursively, by file extension) or "
                    "listed in a text file (one path a line, # comments, relative to the list), "
                    "skipping videos already in the analysis cache, and write per-video results "
                    "(analysis JSON, find JSON, subtitles, YouTube chapters). A bad file is "
                    "reported and skipped. Interrupted (Ctrl-C, a crash), run the same command "
                    "again: it resumes.",
        epilog="Exit codes: 0 all videos done; 6 finished, but some videos failed; 2 bad "
               "arguments; 3 model (or server) not available; 130 stopped by Ctrl-C.")
    p.add_argument("inputs", nargs="+", metavar="FOLDER_OR_LIST",
                   help="a folder, a text file listing videos, or video files")
    model_options(p, windows_in_flight=False)
    p.add_argument("--queries", metavar="FILE",
                   help="plain-language queries to find in every video, one a line")
    p.add_argument("--videos-at-once", type=int, default=DEFAULT_VIDEOS_AT_ONCE, metavar="N",
                   help="videos analysed at once (remote backend only; a local model runs one "
                        "at a time)")
    p.add_argument("--subtitles", choices=["srt", "vtt"],
                   help="also write the events as subtitles beside the results")
    p.add_argument("--no-chapters", action="store_true", help="do not write YouTube chapters")
    p.add_argument("--out", metavar="DIR",
                   help="output folder, mirroring the videos' folders (default: beside each "
                        "video)")
    p.add_argument("--overwrite", action="store_true",
                   help="replace earlier result files of the same name (never a video)")
    speech = p.add_argument_group("speech (with --transcribe)")
    speech.add_argument("--transcribe", action="store_true",
                        help="also transcribe each video's speech (Whisper, after its "
                             "analysis) and write clip.transcript.json")
    from marlin_desk.cli.transcribe_cmd import speech_options

    speech_options(speech, prefix="speech-")
    p.set_defaults(func=run_batch_cmd)


def _job_settings(args: argparse.Namespace) -> Any:
    """The analysis settings, exactly as `analyze` takes them (so the cache is shared)."""
    from marlin_desk.cli.model_cmds import job_settings

    return job_settings(args)


def _speech_settings(args: argparse.Namespace) -> Any:
    """With --transcribe, the speech settings as `transcribe` takes them (a missing speech
    model fails here, once, not once per video)."""
    if not args.transcribe:
        return None
    from marlin_desk.cli.transcribe_cmd import settings_from

    return settings_from(args)


def run_batch_cmd(args: argparse.Namespace) -> int:
    from marlin_desk.batch_analysis import BatchSettings, discover, read_queries

    videos = discover(args.inputs)
    queries = read_queries(args.queries) if args.queries else []
    settings = BatchSettings(job=_job_settings(args), queries=queries, subtitles=args.subtitles,
                             chapters=not args.no_chapters, out=args.out,
                             overwrite=args.overwrite, videos_at_once=args.videos_at_once,
                             use_cache=not args.no_cache, transcribe=_speech_settings(args))
    if args.out and Path(args.out).exists() and not Path(args.out).is_dir():
        from marlin_desk.core.errors import BadInput

        raise BadInput(f"--out {args.out} is a file, not a folder")
    reporter = _Reporter(len(videos))
    report = _run_interruptibly(videos, settings, reporter)
    if args.json:
        emit_json(report.to_json())
    else:
        for result in report.results:
            for path in result.outputs.values():
                print(path)
    return _finish(report)


def _run_interruptibly(videos: list[str], settings: Any, reporter: _Reporter) -> Any:
    """The batch runs on a worker thread; the first Ctrl-C asks it to stop at the next step
    (the current window's finished work stays cached), a second one quits at once."""
    from marlin_desk.batch_analysis import run_batch

    stop = threading.Event()

    def interrupted() -> None:
        if stop.is_set():
            raise KeyboardInterrupt  # a second Ctrl-C: main() says "cancelled" and exits 130
        stop.set()
        progress("stopping after the current step (Ctrl-C again to quit at once)...")

    return run_in_worker(lambda: run_batch(videos, settings, on_progress=reporter.progress,
                                           on_result=reporter.result, should_stop=stop.is_set),
                         interrupted, "batch")


def _finish(report: Any) -> int:
    """The summary on stderr, and the exit code."""
    from marlin_desk.batch_analysis import CACHED, CANCELLED, DONE, PENDING, format_seconds

    total = len(report.results)
    parts = [f"{report.count(DONE)} analysed", f"{report.count(CACHED)} already done"]
    if report.failed:
        parts.append(f"{len(report.failed)} failed")
    left = report.count(PENDING) + report.count(CANCELLED)
    if left:
        parts.append(f"{left} not finished")
    progress(f"batch: {total} video{'s' if total != 1 else ''}: {', '.join(parts)} "
             f"in {format_seconds(report.seconds)}")
    for note in report.notes:
        progress(f"note: {note}")
    for r in report.failed:
        progress(f"failed: {r.video}: {r.error}")
    if report.fatal:
        progress(f"marlin-desk: {report.fatal}")
        return report.fatal_code or 1
    if report.stopped:
        done = report.count(DONE) + report.count(CACHED) + len(report.failed)
        progress(f"marlin-desk: stopped after {done} of {total} videos; run the same command "
                 "again to resume (finished windows are kept)")
        return EXIT_CANCELLED
    return EXIT_SOME_FAILED if report.failed else 0


class _Reporter:
    """Progress lines on stderr: videos finished/total, the current video's windows, and the
    whole batch's remaining time once it can be measured."""

    def __init__(self, total: int) -> None:
        self.total = total
        self.checking_said = False

    def progress(self, p: Any) -> None:
        from marlin_desk.batch_analysis import format_seconds

        if p.stage == "check":
            if not self.checking_said and self.total > 1:
                progress(f"batch: checking {self.total} videos...")
                self.checking_said = True
            return
        if p.stage == "plan":
            progress(f"batch: {p.message}")
            return
        eta = f", about {format_seconds(p.eta)} left in all" if p.eta is not None else ""
        what = "window" if p.stage == "analyze" else "find step"
        step = f"{what} {p.done}/{p.of}" if p.of else ""
        detail = p.message if p.message and not p.message.startswith("window ") else ""
        text = ": ".join(x for x in (step, detail) if x)
        progress(f"[{p.finished}/{p.total} done] {Path(p.video).name}: {text}{eta}")

    def result(self, index: int, r: Any) -> None:
        from marlin_desk.batch_analysis import CACHED, DONE

        name = Path(r.video).name
        if r.status in (DONE, CACHED):
            how = "already done" if r.status == CACHED else f"done in {r.seconds:.1f} s"
            resumed = f", {r.windows_cached} of {r.windows} windows from the cache" \
                if r.status == DONE and r.windows_cached else ""
            progress(f"video {index + 1}/{self.total} {how}: {name} ({r.events} events"
                     f"{resumed})")
        else:
            progress(f"video {index + 1}/{self.total} {r.status}: {name}: {r.error}")
