"""What is said in a video, as the app and the commands get it: `transcribe` (the cached
transcript, else Whisper chunk by chunk, each finished chunk stored and indexed for the library
search, so a killed run resumes) and `cached_transcript` (no model: what the store holds).

    settings = speech_settings(model=None, language="auto")   # the one decision (models/speech)
    transcript = transcribe("talk.mp4", settings, progress=..., cancel=stop_event)
    later = cached_transcript("talk.mp4")                       # Transcript | None

Times are video times (the first video frame is 0), as the timeline's are. A video without an
audio stream, or whose sound is silent, gives an empty transcript with a note, not an error.
"""

from __future__ import annotations

import dataclasses
import logging
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from marlin_desk.core import options
from marlin_desk.core.errors import BadInput
from marlin_desk.core.transcript import Segment, Transcript
from marlin_desk.media.probe import VideoInfo, probe
from marlin_desk.models.speech import SpeechModelChoice, choose_speech_model
from marlin_desk.speech.audio import chunk_count, iter_chunks
from marlin_desk.speech.device import (
    DevicePlan,
    cuda_device_count,
    gpu_free_bytes,
    plan_device,
    whisper_need_bytes,
)
from marlin_desk.speech.progress import SpeechProgress, SpeechProgressCallback
from marlin_desk.speech.whisper import ChunkResult, DecodeOptions, WhisperRunner
from marlin_desk.store.cache import AnalysisCache
from marlin_desk.store.fingerprint import CacheKey, fingerprint
from marlin_desk.store.transcripts import TranscriptStore

log = logging.getLogger(__name__)

SPEECH_VERSION = 1  # bump when chunking or word handling changes what is stored
NO_AUDIO = "the video has no audio stream: nothing to transcribe"
SILENT = "the audio is silent: nothing to transcribe"
NO_SPEECH = "no speech found"
_FINGERPRINT = re.compile(r"[0-9a-f]{64}")

Cancel = threading.Event | Callable[[], bool] | None


@dataclass(frozen=True)
class SpeechSettings:
    """Everything that decides a transcript (the cache key's settings), and the checkpoint."""

    choice: SpeechModelChoice
    language: str | None = None  # an ISO code; None detects it
    device: str = options.DEFAULT_SPEECH_DEVICE  # options.SPEECH_DEVICES
    chunk_seconds: float = options.SPEECH_CHUNK_SECONDS
    search_seconds: float = options.SPEECH_CUT_SEARCH_SECONDS
    decode: DecodeOptions = field(default_factory=DecodeOptions)
    cpu_threads: int | None = None  # None: every core
    # GPU memory Marlin still needs on this machine (None: its largest GPU backend's need, so
    # Whisper can never be why Marlin falls back; 0 when Marlin runs on the CPU or a server).
    marlin_reserve_bytes: int | None = None

    def cache_settings(self) -> dict[str, Any]:
        return {"language": self.language or options.SPEECH_LANGUAGE_AUTO,
                "chunk_seconds": self.chunk_seconds, "search_seconds": self.search_seconds,
                **self.decode.to_json(), "version": SPEECH_VERSION}

    def to_json(self) -> dict[str, Any]:
        return {"model": self.choice.to_json(), "device": self.device,
                "settings": self.cache_settings()}


def speech_settings(*, model: str | None = None, language: str | None = None,
                    device: str = options.DEFAULT_SPEECH_DEVICE,
                    chunk_seconds: float = options.SPEECH_CHUNK_SECONDS,
                    search_seconds: float | None = None, beam_size: int | None = None,
                    marlin_reserve_bytes: int | None = None) -> SpeechSettings:
    """The settings of a transcription from the user's options, as the commands and the app
    both take them: no model means the one `choose_speech_model` picks (the default size when
    it is downloaded, else the bundled tiny.en, with the reason); "auto" or no language
    detects it."""
    if device not in options.SPEECH_DEVICES:
        raise BadInput(f"unknown speech device {device!r}: use one of "
                       f"{', '.join(options.SPEECH_DEVICES)}")
    if not chunk_seconds > 0:
        raise BadInput(f"the chunk length must be positive, got {chunk_seconds}")
    search = min(options.SPEECH_CUT_SEARCH_SECONDS, chunk_seconds / 4) \
        if search_seconds is None else search_seconds
    if not 0 <= search < chunk_seconds / 2:
        raise BadInput(f"the cut search distance must be in [0, {chunk_seconds / 2:g}) s")
    choice = choose_speech_model(model)
    lang = _language(language, choice)
    decode = DecodeOptions() if beam_size is None else DecodeOptions(beam_size=beam_size)
    if decode.beam_size < 1:
        raise BadInput("the beam size must be at least 1")
    return SpeechSettings(choice, lang, device, float(chunk_seconds), float(search), decode,
                          marlin_reserve_bytes=marlin_reserve_bytes)


def _language(language: str | None, choice: SpeechModelChoice) -> str | None:
    code = (language or "").strip().lower()
    if code in ("", options.SPEECH_LANGUAGE_AUTO):
        return "en" if choice.english_only else None
    if choice.english_only and code != "en":
        raise BadInput(f"{choice.model_id} transcribes English only; for {code!r} choose a "
                       f"multilingual model (e.g. --model small)")
    try:
        from faster_whisper.tokenizer import _LANGUAGE_CODES
    except ImportError:  # checked again when the model loads
        return code
    if code not in _LANGUAGE_CODES:
        raise BadInput(f"unknown language {language!r}: use auto or a code Whisper knows "
                       "(en, de, fr, es, ja, ...)")
    return code


def plan_speech_device(settings: SpeechSettings) -> DevicePlan:
    """Where this transcription runs (speech.device.plan_device over this machine's facts)."""
    if settings.device == "cpu":
        return plan_device("cpu", 0, None, 0, 0)
    count = cuda_device_count()
    free = gpu_free_bytes() if count else None
    model_bytes = (settings.choice.folder / "model.bin").stat().st_size
    reserve = settings.marlin_reserve_bytes
    if reserve is None:
        reserve = marlin_reserve_bytes()
    return plan_device(settings.device, count, free, whisper_need_bytes(model_bytes), reserve)


def marlin_reserve_bytes() -> int:
    """What Marlin may need on the GPU: its largest CUDA backend's peak (bf16), so that a
    transcription never takes the room Marlin's own choice of backend counts on."""
    from marlin_desk.engine.backends.memory import VRAM_NEED_GIB

    return int(max(VRAM_NEED_GIB[b] for b in ("gptq", "bnb4", "bf16")) * 1024 ** 3)


def open_runner(settings: SpeechSettings, plan: DevicePlan | None = None) -> WhisperRunner:
    """A runner for these settings (the model loads on its first chunk). The app keeps one
    across videos as it keeps Marlin's engine; pass it back to `transcribe`."""
    plan = plan or plan_speech_device(settings)
    runner = WhisperRunner(settings.choice.folder, plan.device, plan.compute_type)
    if settings.cpu_threads:
        runner.cpu_threads = settings.cpu_threads
    return runner


def transcript_key(video: str, settings: SpeechSettings, compute_type: str,
                   fp: str | None = None) -> CacheKey:
    """The store's key: content, checkpoint (id and revision), compute type and settings."""
    return CacheKey(fp or fingerprint(video), settings.choice.model_id, settings.choice.revision,
                    compute_type, settings.cache_settings())


def _stopper(cancel: Cancel) -> Callable[[], bool] | None:
    if cancel is None:
        return None
    if isinstance(cancel, threading.Event):
        return cancel.is_set
    return cancel


def transcribe(video: str, settings: SpeechSettings | None = None, *,
               progress: SpeechProgressCallback | None = None, cancel: Cancel = None,
               cache: AnalysisCache | None = None, use_cache: bool = True,
               info: VideoInfo | None = None, runner: WhisperRunner | None = None,
               fresh: bool = False,
               on_chunk: Callable[[ChunkResult], None] | None = None) -> Transcript:
    """What is said in `video`: the stored transcript when there is one, else Whisper chunk by
    chunk (each finished chunk stored and indexed at once: a cancelled or killed run resumes
    from there next time). Raises core.errors.Cancelled when `cancel` is set (an Event or a
    `should_stop()` callable).

    `cache`: an open cache (default: the app's, unless `use_cache` is False); `info`: the
    probe when the caller has it; `runner`: a WhisperRunner to reuse (`open_runner`); `fresh`:
    transcribe every chunk again; `on_chunk`: each chunk's result as it is known (resumed
    ones first), for a timeline that fills as it goes.

    The result's `extra` says how it was made: cached, chunks, resumed_chunks,
    transcribed_chunks, seconds, device, compute_type, model and why.
    """
    began = time.perf_counter()
    settings = settings or speech_settings()
    info = info if info is not None else probe(video)
    should_stop = _stopper(cancel)
    plan = DevicePlan(runner.device, runner.compute_type, "as the runner given") \
        if runner is not None else plan_speech_device(settings)
    if use_cache and cache is None:
        cache = _open_cache()
    store = TranscriptStore(cache) if cache is not None else None
    key = transcript_key(video, settings, plan.compute_type)
    run = {"device": plan.device, "compute_type": plan.compute_type, "device_why": plan.why,
           "model": settings.choice.model_id, "model_why": settings.choice.why}
    if store is not None and not fresh:
        found = _quietly(store.get, key)
        if found is not None:
            return _with(found, cached=True, seconds=time.perf_counter() - began, **run)
    total = chunk_count(info.duration, settings.chunk_seconds)
    if not info.has_audio:
        transcript = Transcript(None, (), settings.choice.model_id, NO_AUDIO,
                                {"duration": round(info.duration, 3), "chunks": 0})
        if store is not None:
            _quietly(store.complete, key, transcript, 0, video)
        _report(progress, SpeechProgress(0, 0, time.perf_counter() - began, NO_AUDIO))
        return _with(transcript, cached=False, seconds=time.perf_counter() - began,
                     resumed_chunks=0, transcribed_chunks=0, **run)
    done = {} if store is None or fresh else {
        i: ChunkResult.from_json(d) for i, d in (_quietly(store.chunks_done, key) or {}).items()
        if _decodes(d)}
    job = _Job(video, settings, key, total, store, runner or open_runner(settings, plan),
               progress, should_stop, on_chunk, began)
    results = job.run(info, done)
    transcript = merge(results, settings.choice.model_id, info.duration, job.language)
    if store is not None:
        _quietly(store.complete, key, transcript, total, video)
    return _with(transcript, cached=False, seconds=time.perf_counter() - began,
                 resumed_chunks=len(done), transcribed_chunks=job.transcribed, **run)


@dataclass
class _Job:
    video: str
    settings: SpeechSettings
    key: CacheKey
    total: int
    store: TranscriptStore | None
    runner: WhisperRunner
    progress: SpeechProgressCallback | None
    should_stop: Callable[[], bool] | None
    on_chunk: Callable[[ChunkResult], None] | None
    began: float
    language: str | None = None
    transcribed: int = 0
    heard: float = 0.0

    def run(self, info: VideoInfo, done: dict[int, ChunkResult]) -> list[ChunkResult]:
        self.language = self.settings.language or next(
            (r.language for _i, r in sorted(done.items()) if r.segments and r.language), None)
        for _i, result in sorted(done.items()):
            if self.on_chunk is not None:
                self.on_chunk(result)
        results: dict[int, ChunkResult] = dict(done)
        per_chunk = info.duration / max(1, self.total)
        self._report(len(done), "resuming" if done else "listening",
                     (self.total - len(done)) * per_chunk)
        for chunk in iter_chunks(self.video, info.start_time, info.duration,
                                 self.settings.chunk_seconds, self.settings.search_seconds,
                                 should_stop=self.should_stop):
            if chunk.index in results:
                continue
            if chunk.silent:
                result = ChunkResult(chunk.index, chunk.start, chunk.end, (), None, 0.0,
                                     "silent" if len(chunk.samples) else "no audio")
            else:
                result = self.runner.transcribe(chunk, self.language, self.settings.decode,
                                                self.should_stop)
                self.transcribed += 1
                self.heard += chunk.end - chunk.start
                if self.language is None and result.segments:
                    self.language = result.language  # detected once, kept for the video
            results[chunk.index] = result
            if self.store is not None:
                _quietly(self.store.put_chunk, self.key, self.total, self.video, chunk.index,
                         result.to_json())
            if self.on_chunk is not None:
                self.on_chunk(result)
            self._report(len(results), f"chunk {chunk.index + 1}/{self.total}",
                         (self.total - len(results)) * per_chunk)
        return [results[i] for i in sorted(results)]

    def _report(self, done: int, message: str, seconds_left: float) -> None:
        _report(self.progress, SpeechProgress(done, self.total, time.perf_counter() - self.began,
                                              message, self.transcribed, self.heard,
                                              seconds_left))


def merge(results: list[ChunkResult], model: str, duration: float,
          language: str | None) -> Transcript:
    """The chunks' segments in time order as one Transcript, with a note when it is empty."""
    segments: list[Segment] = sorted((s for r in results for s in r.segments),
                                     key=lambda s: (s.start, s.end))
    note = ""
    if not segments:
        heard = [r for r in results if r.note not in ("silent", "no audio")]
        note = NO_SPEECH if heard else SILENT
    probability = max((r.language_probability for r in results
                       if r.language == language and r.segments), default=0.0)
    return Transcript(language, tuple(segments), model, note,
                      {"duration": round(duration, 3), "chunks": len(results),
                       "language_probability": round(probability, 4)})


def cached_transcript(video: str, settings: SpeechSettings | None = None, *,
                      cache: AnalysisCache | None = None) -> Transcript | None:
    """The stored transcript of `video` (a path, or its content fingerprint), no model: with
    `settings`, one made with that checkpoint and those settings (any compute type); without,
    the most recent complete one of any. None when there is none, or the store cannot be
    read (the store is an optimisation: nothing here raises for it)."""
    try:
        fp = video if _FINGERPRINT.fullmatch(video) and not Path(video).exists() \
            else fingerprint(video)
    except BadInput as exc:
        log.info("no transcript for %s: %s", video, exc)
        return None
    try:
        cache = cache if cache is not None else AnalysisCache()
        store = TranscriptStore(cache)
        if settings is None:
            found = store.latest(fp)
            return None if found is None else found[1]
        wanted = settings.cache_settings()
        for entry in store.entries(fp):
            if (entry.complete and entry.key.model_id == settings.choice.model_id
                    and entry.key.revision == settings.choice.revision
                    and entry.key.settings == CacheKey(fp, "", "", "", wanted).settings):
                transcript = store.get(entry.key)
                if transcript is not None:
                    return transcript
    except Exception as exc:  # noqa: BLE001 - the store is an optimisation
        log.info("transcript look-up failed for %s: %s", video, exc)
    return None


def _open_cache() -> AnalysisCache | None:
    try:
        return AnalysisCache()
    except Exception as exc:  # noqa: BLE001 - no store: transcribe anyway, keep nothing
        log.warning("transcript not cached: %s", exc)
        return None


def _quietly(call: Callable[..., Any], *args: Any) -> Any:
    """A store that cannot be read or written never stops the work."""
    try:
        return call(*args)
    except Exception as exc:  # noqa: BLE001 - logged; the transcript still reaches the user
        log.warning("transcript store not used: %s", exc)
        return None


def _decodes(doc: dict[str, Any]) -> bool:
    try:
        ChunkResult.from_json(doc)
    except (KeyError, TypeError, ValueError):
        return False
    return True


def _report(callback: SpeechProgressCallback | None, p: SpeechProgress) -> None:
    if callback is not None:
        callback(p)


RUN_KEYS = frozenset({"cached", "seconds", "resumed_chunks", "transcribed_chunks", "device",
                      "compute_type", "device_why", "model_why"})


def without_run_info(transcript: Transcript) -> Transcript:
    """The transcript as stored: what was said, without how this run made it (for files that
    must be byte for byte the same on a re-run)."""
    return dataclasses.replace(transcript, extra={k: v for k, v in transcript.extra.items()
                                                  if k not in RUN_KEYS})


def _with(transcript: Transcript, **run: Any) -> Transcript:
    extra = {**transcript.extra, **{k: (round(v, 3) if isinstance(v, float) else v)
                                    for k, v in run.items()}}
    return dataclasses.replace(transcript, extra=extra)
