"""Batch analysis of a video library: every video analysed (and searched) through the cache,
its results written as files beside it or in an output folder.

A sibling of workflows.py and built only on its public API (open_video, analyze, find), core,
media and store, so the CLI (`marlin-desk batch`) and any later app dialog behave the same.

Decisions, and why:
- Folders are searched recursively (footage lives in `Day 1/Cam A/...`), for files with a video
  extension; hidden files and folders are skipped (`._clip.mp4` AppleDouble files on exFAT
  cards, our own `.partial` files). A text list takes every path it names, whatever its
  extension: the user chose them. Order: natural (C2 before C10), the list's own order for lists.
- Nothing is ever decided by one bad video: a file that cannot be read, has no video stream or is
  truncated fails alone with its plain message and the batch goes on. Only a model that cannot
  be loaded stops the batch (every video would fail the same way).
- Resume is the cache's: finished windows are stored one by one, so a re-run skips finished
  videos (no model load at all when every video is cached) and finishes the partial one.
- One model for the whole batch: the first video that needs it loads it, later videos reuse it.
- Several videos at once only where the model runs elsewhere (`concurrency_allowed`): a local
  model on one device runs one video at a time, faster than two fighting over it.
- Output files are written only when a video is complete, each to a temporary name then renamed.
  An existing file with the same content is kept (a re-run writes nothing new); a different one
  is never overwritten unless `overwrite` is set: the new result takes `name (2).ext`. A source
  video is never written to, even with `overwrite`.
- Output names are derived from the video's file name (made safe for every OS) and are the same on
  every run of the same list; two videos that would share names in one folder (`clip.mp4` and
  `clip.mov`) keep their extension in the name (`clip.mp4.srt`, `clip.mov.srt`).
"""

from __future__ import annotations

import json
import logging
import os
import re
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from marlin_desk.core.errors import BadInput, Cancelled, MarlinError, ModelUnavailable
from marlin_desk.core.windows import plan_windows
from marlin_desk.media.chapters import format_chapters, youtube_chapters
from marlin_desk.media.naming import candidate_names, safe_filename, write_atomically
from marlin_desk.media.subtitles import SubtitleStyle, build_cues, render
from marlin_desk.store.cache import AnalysisCache
from marlin_desk.workflows import JobSettings, Workbench, analyze, find, open_video

log = logging.getLogger(__name__)

VIDEO_EXTENSIONS = frozenset({
    ".mp4", ".m4v", ".mov", ".qt", ".mkv", ".webm", ".avi", ".wmv", ".asf", ".flv", ".mpg",
    ".mpeg", ".m2v", ".mts", ".m2ts", ".ts", ".mxf", ".3gp", ".3g2", ".ogv", ".dv", ".vob",
    ".hevc", ".h264", ".264", ".y4m",
})

# What each output is called: `<base><suffix>` in the video's output folder.
SUFFIXES = {"analysis": ".analysis.json", "find": ".find.json", "srt": ".srt", "vtt": ".vtt",
            "chapters": ".chapters.txt"}

# Per-video status values.
PENDING, DONE, CACHED, FAILED, CANCELLED = "pending", "done", "cached", "failed", "cancelled"


def concurrency_allowed(settings: JobSettings) -> bool:
    """Whether several videos may run at once: only when the model runs on a server that
    batches requests itself. A local model on one device runs one video at a time."""
    return settings.backend == "remote"


# ------------------------------------------------------------------------- settings, results


@dataclass
class BatchSettings:
    job: JobSettings
    queries: list[str] = field(default_factory=list)
    subtitles: str | None = None  # "srt" | "vtt" | None
    chapters: bool = True  # YouTube chapters, where the video's events allow them
    out: str | None = None  # None: beside each video; else this folder, mirroring subfolders
    overwrite: bool = False  # replace earlier output files of the same name (never a video)
    concurrency: int = 1
    use_cache: bool = True
    style: SubtitleStyle = field(default_factory=SubtitleStyle)


@dataclass
class VideoResult:
    """What happened to one video."""

    video: str
    status: str = PENDING
    seconds: float = 0.0
    error: str | None = None
    duration: float | None = None
    windows: int = 0
    windows_cached: int = 0  # windows that came from the cache (resumed or complete)
    events: int = 0
    analysis_cached: bool = False
    outputs: dict[str, str] = field(default_factory=dict)  # analysis|find|srt|vtt|chapters
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"video": self.video, "status": self.status, "seconds": round(self.seconds, 3),
                "error": self.error,
                "duration": None if self.duration is None else round(self.duration, 3),
                "windows": self.windows, "windows_cached": self.windows_cached,
                "events": self.events, "analysis_cached": self.analysis_cached,
                "outputs": dict(self.outputs), "notes": list(self.notes)}


@dataclass
class BatchReport:
    results: list[VideoResult]
    concurrency: int = 1
    seconds: float = 0.0
    stopped: bool = False  # should_stop ended the batch early
    fatal: str | None = None  # why the batch could not go on (the model cannot be loaded)
    fatal_code: int = 0  # that error's exit code
    engine: dict[str, Any] | None = None  # the loaded model's describe(), None if never loaded
    notes: list[str] = field(default_factory=list)

    def count(self, status: str) -> int:
        return sum(1 for r in self.results if r.status == status)

    @property
    def failed(self) -> list[VideoResult]:
        return [r for r in self.results if r.status == FAILED]

    def to_json(self) -> dict[str, Any]:
        return {"videos": [r.to_json() for r in self.results],
                "summary": {"total": len(self.results),
                            **{s: self.count(s) for s in (DONE, CACHED, FAILED, CANCELLED,
                                                          PENDING)}},
                "stopped": self.stopped, "fatal": self.fatal, "concurrency": self.concurrency,
                "seconds": round(self.seconds, 3), "engine": self.engine,
                "notes": list(self.notes)}


@dataclass(frozen=True)
class BatchProgress:
    """One progress report. stage: "check" (videos being opened; done/of count videos), "plan"
    (message says what is to do), "analyze" or "find" (done/of count this video's windows or
    window x query steps). Callbacks are called one at a time, possibly from worker threads."""

    stage: str
    index: int  # the video this is about (-1 for the whole batch)
    video: str
    finished: int  # videos finished so far, any status
    total: int
    done: int
    of: int
    eta: float | None  # seconds left for the whole batch, once measurable
    message: str = ""


OnProgress = Callable[[BatchProgress], None]
OnResult = Callable[[int, VideoResult], None]


# ------------------------------------------------------------------------- finding the videos


def is_video_name(path: str | os.PathLike[str]) -> bool:
    return Path(path).suffix.lower() in VIDEO_EXTENSIONS


def _natural_key(text: str) -> tuple[list[Any], str]:
    """C2 before C10, `Day 1` before `Day2`; case and spaces only break ties."""
    parts = [int(part) if part.isdigit() else part.casefold().replace(" ", "")
             for part in re.split(r"(\d+)", text)]
    return parts, text


def scan_folder(folder: str | os.PathLike[str], recursive: bool = True) -> list[str]:
    """Video files under `folder` (by extension), hidden names skipped, in natural order."""
    found: list[str] = []
    for root, dirs, files in os.walk(folder, onerror=lambda exc: log.warning("%s", exc)):
        dirs[:] = sorted((d for d in dirs if not d.startswith(".")), key=_natural_key) \
            if recursive else []
        for name in sorted(files, key=_natural_key):
            if not name.startswith(".") and is_video_name(name):
                found.append(os.path.join(root, name))
    return found


def read_list(path: str | os.PathLike[str]) -> list[str]:
    """Paths named in a text list: one a line, `#` comment lines and blank lines skipped,
    surrounding quotes removed, relative paths taken from the list's folder. A folder in the
    list stands for the videos under it."""
    if Path(path).suffix:
        what = f"a text list of videos (and {Path(path).suffix!r} is no video extension we know)"
    else:
        what = "a text list of videos"
    text = _read_text(path, what)
    base = Path(path).resolve().parent
    videos: list[str] = []
    for line in text.splitlines():
        entry = _unquote(line.strip())
        if not entry or entry.startswith("#"):
            continue
        full = base / Path(entry).expanduser()
        videos.extend(scan_folder(full) if full.is_dir() else [str(full)])
    return videos


def read_queries(path: str | os.PathLike[str]) -> list[str]:
    """Queries, one a line; blank lines and `#` comment lines skipped, repeats dropped."""
    text = _read_text(path, "a list of queries")
    queries = [" ".join(line.split()) for line in text.splitlines()]
    kept = list(dict.fromkeys(q for q in queries if q and not q.startswith("#")))
    if not kept:
        raise BadInput(f"{path} holds no queries (one a line; # starts a comment)")
    return kept


def discover(inputs: Sequence[str]) -> list[str]:
    """The videos that FOLDER, LIST and VIDEO arguments stand for: absolute paths, each file
    once (the first mention wins). BadInput when an argument is missing or nothing is found."""
    videos: list[str] = []
    for arg in inputs:
        path = Path(arg).expanduser()
        if path.is_dir():
            found = scan_folder(path)
            if not found:
                log.info("no video files in %s", arg)
            videos.extend(found)
        elif path.is_file():
            videos.extend([str(path)] if is_video_name(path) else read_list(path))
        else:
            raise BadInput(f"{arg} does not exist (give a folder, a video or a text list of "
                           "videos)")
    seen: set[str] = set()
    unique: list[str] = []
    for video in videos:
        real = os.path.realpath(video)
        if real not in seen:
            seen.add(real)
            unique.append(os.path.abspath(video))
    if not unique:
        raise BadInput(f"no video files in {', '.join(inputs)} (looked for "
                       f"{', '.join(sorted(VIDEO_EXTENSIONS)[:6])}... files)")
    return unique


def _read_text(path: str | os.PathLike[str], what: str) -> str:
    try:
        raw = Path(path).read_bytes()
    except OSError as exc:
        raise BadInput(f"cannot read {path}: {exc.strerror or exc}") from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        text = "\0"
    if "\0" in text:
        raise BadInput(f"{path} is not {what} (a UTF-8 text file, one entry a line)")
    return text


def _unquote(entry: str) -> str:
    if len(entry) >= 2 and entry[0] == entry[-1] and entry[0] in "\"'":
        return entry[1:-1]
    return entry


# ------------------------------------------------------------------------- output files


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


# ------------------------------------------------------------------------- the batch


@dataclass
class _Item:
    index: int
    video: str
    result: VideoResult
    bench: Workbench | None = None
    open_error: str | None = None
    left: dict[str, int] = field(default_factory=lambda: {"analyze": 0, "find": 0})


class _Rates:
    """Measured seconds per window and per find step, for the batch's ETA."""

    def __init__(self) -> None:
        self.units = {"analyze": 0, "find": 0}
        self.seconds = {"analyze": 0.0, "find": 0.0}

    def per_unit(self, stage: str) -> float | None:
        if self.units[stage]:
            return self.seconds[stage] / self.units[stage]
        other = "find" if stage == "analyze" else "analyze"
        return self.seconds[other] / self.units[other] if self.units[other] else None


class _Batch:
    def __init__(self, videos: Sequence[str], settings: BatchSettings, engine: Any,
                 cache: AnalysisCache | None, on_progress: OnProgress | None,
                 on_result: OnResult | None, should_stop: Callable[[], bool] | None) -> None:
        self.settings = settings
        self.engine = engine
        self.cache = cache
        self.on_progress = on_progress
        self.on_result = on_result
        self.should_stop = should_stop or (lambda: False)
        self.items = [_Item(i, v, VideoResult(v)) for i, v in enumerate(videos)]
        self.bases = output_bases(videos, settings.out)
        self.protected = [os.path.realpath(v) for v in videos]
        self.report = BatchReport([it.result for it in self.items])
        self.lock = threading.RLock()  # callbacks, counters, the shared engine
        self.load_lock = threading.Lock()  # held by the video that may load the model
        self.rates = _Rates()
        self.finished = 0
        self.concurrency = 1

    # -- public entry ---------------------------------------------------------------------
    def run(self) -> BatchReport:
        started = time.perf_counter()
        try:
            self._check_settings()
            self.concurrency = self._concurrency()
            self.report.concurrency = self.concurrency
            self._open_all()
            if not self._halted():
                if self.concurrency == 1:
                    for item in self.items:
                        self._process(item)
                else:
                    with ThreadPoolExecutor(self.concurrency, "batch") as pool:
                        list(pool.map(self._process, self.items))
        finally:
            self.report.seconds = time.perf_counter() - started
            self.report.stopped = self.report.fatal is None and any(
                it.result.status in (PENDING, CANCELLED) for it in self.items)
            if self.engine is not None:
                self.report.engine = _describe(self.engine)
        return self.report

    def _check_settings(self) -> None:
        job = self.settings.job
        try:  # a bad --window fails once here, not once per video
            plan_windows(max(job.window, 1.0) * 3, job.window, job.overlap,
                         max_window=job.budget.max_window_seconds)
        except ValueError as exc:
            raise BadInput(str(exc)) from None
        if self.settings.concurrency < 1:
            raise BadInput("--concurrency must be at least 1")
        if self.settings.subtitles not in (None, "srt", "vtt"):
            raise BadInput(f"unknown subtitle format {self.settings.subtitles!r}; use srt or vtt")

    def _concurrency(self) -> int:
        wanted = self.settings.concurrency
        if wanted > 1 and not concurrency_allowed(self.settings.job):
            self.report.notes.append(
                f"concurrency {wanted} ignored: the {self.settings.job.backend} backend runs one "
                "video at a time (one model on one device); a remote server runs several")
            return 1
        return min(wanted, len(self.items))

    def _halted(self) -> bool:
        return self.report.fatal is not None or self.should_stop()

    # -- opening: probe, cache key, what is left ------------------------------------------
    def _open_all(self) -> None:
        total = len(self.items)
        for item in self.items:
            if self._halted():
                return
            self._emit("check", item, item.index, total, f"checking {item.video}")
            try:
                bench = open_video(item.video, self.settings.job,
                                   use_cache=self.settings.use_cache, cache=self.cache,
                                   engine=self.engine)
            except ModelUnavailable as exc:
                self._fatal(item, exc)
                return
            except MarlinError as exc:
                item.open_error = str(exc)
                continue
            except Exception as exc:  # noqa: BLE001 - one odd file never stops the batch
                log.exception("opening %s", item.video)
                item.open_error = f"internal error: {exc.__class__.__name__}: {exc}"
                continue
            item.bench = bench
            self._adopt_engine(bench)  # a remote server is connected at open: one for all
            for note in bench.notes:
                if note not in self.report.notes:
                    self.report.notes.append(note)
            item.result.duration = bench.info.duration
            item.result.windows = bench.total_windows
            complete, done = self._cache_state(bench)
            item.left["analyze"] = 0 if complete else bench.total_windows - done
            item.left["find"] = bench.total_windows * self._queries_to_run(bench)
        self._emit_plan()

    def _cache_state(self, bench: Workbench) -> tuple[bool, int]:
        """(complete, windows stored) for the bench's key: no model, no decoding."""
        if bench.cache is None:
            return False, 0
        digest = bench.key.digest()
        for entry in bench.cache.entries(bench.key.fingerprint):
            if entry.digest == digest:
                return entry.complete, entry.windows_done
        return False, 0

    def _queries_to_run(self, bench: Workbench) -> int:
        if bench.cache is None:
            return len(self.settings.queries)
        return sum(1 for q in self.settings.queries if bench.cache.get_find(bench.key, q) is None)

    def _emit_plan(self) -> None:
        opened = [it for it in self.items if it.bench is not None]
        seconds = sum(it.bench.info.duration for it in opened if it.bench is not None)
        ready = [it for it in opened if not it.left["analyze"] and not it.left["find"]]
        partial = [it for it in opened if it.left["analyze"]
                   and it.left["analyze"] < it.result.windows]
        todo = sum(it.left["analyze"] for it in opened)
        parts = [f"{len(self.items)} video{'s' if len(self.items) != 1 else ''} "
                 f"({format_seconds(seconds)} of video)"]
        if ready:
            parts.append(f"{len(ready)} already done")
        if partial:
            parts.append(f"{len(partial)} partly analysed (resumed)")
        if todo:
            parts.append(f"{todo} window{'s' if todo != 1 else ''} to analyse")
        unreadable = len(self.items) - len(opened)
        if unreadable:
            parts.append(f"{unreadable} unreadable")
        self._emit("plan", None, len(opened), len(self.items), ", ".join(parts))

    # -- one video --------------------------------------------------------------------------
    def _process(self, item: _Item) -> None:
        if self._halted():
            return
        if self.concurrency > 1 and self.engine is None:
            with self.load_lock:  # until the model is loaded, one video at a time
                if self.engine is None:
                    self._process_one(item)
                    return
        self._process_one(item)

    def _process_one(self, item: _Item) -> None:
        if self._halted():
            return
        result = item.result
        started = time.perf_counter()
        try:
            if item.open_error is not None or item.bench is None:
                raise BadInput(item.open_error or "not opened")
            self._analyse(item)
        except ModelUnavailable as exc:
            self._fatal(item, exc)
        except Cancelled:
            result.status = CANCELLED
            result.error = "cancelled"
        except MarlinError as exc:
            result.status, result.error = FAILED, str(exc)
        except Exception as exc:  # noqa: BLE001 - one odd file never stops the batch
            log.exception("batch: %s", item.video)
            result.status = FAILED
            result.error = f"internal error: {exc.__class__.__name__}: {exc}"
        finally:
            result.seconds = time.perf_counter() - started
            bench, item.bench = item.bench, None
            if bench is not None:
                bench.close()  # the session's prefills (or clips) go with it
            with self.lock:
                item.left = {"analyze": 0, "find": 0}
                if result.status != PENDING:
                    self.finished += 1
                    if self.on_result:
                        self.on_result(item.index, result)

    def _analyse(self, item: _Item) -> None:
        bench = item.bench
        assert bench is not None
        result = item.result
        if bench.engine is None and self.engine is not None:
            bench.engine = self.engine  # ensure_session uses it (and re-keys if it must)
        complete, stored = self._cache_state(bench)
        analysis, from_cache = analyze(
            bench, on_progress=self._tracker(item, "analyze", result.windows if complete
                                             else stored),
            should_stop=self.should_stop)
        self._adopt_engine(bench)
        result.analysis_cached = from_cache
        result.windows = len(analysis.windows)
        result.windows_cached = len(analysis.windows) if from_cache else min(stored,
                                                                             result.windows)
        result.events = len(analysis.events)
        finds: list[Any] = []
        if self.settings.queries:
            if self.should_stop():
                raise Cancelled("batch stopped")
            finds = find(bench, self.settings.queries,
                         on_progress=self._tracker(item, "find", 0),
                         should_stop=self.should_stop)
            self._adopt_engine(bench)
        if self.should_stop():  # stopped during the last step: write nothing half-asked
            raise Cancelled("batch stopped")
        notes = list(dict.fromkeys([*bench.notes,
                                    *(getattr(bench.session, "notes", None) or [])]))
        outputs, output_notes = write_outputs(
            self.bases[item.video], item.video, analysis, finds, bench.info,
            self.settings.job.model, self.settings, self.protected)
        result.outputs = outputs
        result.notes = [n for n in notes if n not in self.report.notes] + output_notes
        model_used = bench.session is not None
        result.status = CACHED if from_cache and not model_used else DONE

    def _adopt_engine(self, bench: Workbench) -> None:
        with self.lock:
            if self.engine is None and bench.engine is not None:
                self.engine = bench.engine
                for note in getattr(bench.engine, "fallbacks", None) or []:
                    if note not in self.report.notes:
                        self.report.notes.append(note)

    def _fatal(self, item: _Item, exc: MarlinError) -> None:
        """The model cannot be loaded: no video can be done. The video stays pending (it is
        not its fault) and so do the rest; the report says why."""
        log.warning("batch stopped at %s: %s", item.video, exc)
        with self.lock:
            if self.report.fatal is None:
                self.report.fatal, self.report.fatal_code = str(exc), exc.exit_code

    # -- progress ---------------------------------------------------------------------------
    def _tracker(self, item: _Item, stage: str, done_before: int) -> Callable[[Any], None]:
        """An on_progress for workflows: it counts windows (or find steps) as they finish and
        how long each took, for the batch's ETA, and passes a BatchProgress on."""
        last = {"done": done_before, "elapsed": 0.0}

        def report(p: Any) -> None:
            with self.lock:
                if p.done > last["done"]:
                    self.rates.units[stage] += p.done - last["done"]
                    self.rates.seconds[stage] += max(0.0, p.elapsed - last["elapsed"])
                    last["done"], last["elapsed"] = p.done, p.elapsed
                item.left[stage] = max(0, p.total - p.done)
                self._emit(stage, item, p.done, p.total, p.message)

        return report

    def _eta(self) -> float | None:
        left = 0.0
        for stage in ("analyze", "find"):
            units = sum(it.left[stage] for it in self.items)
            if units:
                rate = self.rates.per_unit(stage)
                if rate is None:
                    return None
                left += units * rate
        return left / self.concurrency

    def _emit(self, stage: str, item: _Item | None, done: int, of: int, message: str) -> None:
        if self.on_progress is None:
            return
        with self.lock:
            progress = BatchProgress(stage, item.index if item else -1,
                                     item.video if item else "", self.finished,
                                     len(self.items), done, of,
                                     self._eta() if stage in ("analyze", "find") else None,
                                     message)
            self.on_progress(progress)


def _describe(engine: Any) -> dict[str, Any] | None:
    describe = getattr(engine, "describe", None)
    return describe() if callable(describe) else None


def run_batch(videos: Sequence[str], settings: BatchSettings, *,
              on_progress: OnProgress | None = None, on_result: OnResult | None = None,
              should_stop: Callable[[], bool] | None = None, engine: Any = None,
              cache: AnalysisCache | None = None) -> BatchReport:
    """Analyse (and search) every video and write its results; returns one VideoResult per
    video, in order. Never raises for one video's trouble (it is that video's `error`); raises
    BadInput for unusable settings. A model that cannot be loaded ends the batch
    (`report.fatal`). `should_stop` is polled between windows and tokens: the running video is
    `cancelled` (its finished windows stay cached), those not started stay `pending`.
    `engine`: a model already loaded; `cache`: an open cache (default: the user's)."""
    own_cache = cache is None and settings.use_cache
    if own_cache:
        cache = AnalysisCache()
    try:
        return _Batch(list(videos), settings, engine, cache if settings.use_cache else None,
                      on_progress, on_result, should_stop).run()
    finally:
        if own_cache and cache is not None:
            cache.close()


def format_seconds(seconds: float) -> str:
    """`42 s`, `3 min 05 s`, `1 h 02 min`."""
    s = int(round(max(0.0, seconds)))
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60:02d} s"
    return f"{s // 3600} h {s % 3600 // 60:02d} min"
