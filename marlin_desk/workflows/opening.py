"""Opening a video as the app and the commands do: its probe, fingerprint and cached analysis
(no model), and the editor's saved work for it (its clip bin)."""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from marlin_desk.core import project as projfile
from marlin_desk.core.timeline import Analysis
from marlin_desk.media.probe import VideoInfo, probe
from marlin_desk.store.cache import AnalysisCache
from marlin_desk.store.fingerprint import CacheKey, fingerprint

log = logging.getLogger(__name__)


@dataclass
class OpenedVideo:
    """A video as the app and `subtitles`/`export --events` open it: probed, fingerprinted and
    with its most recent complete analysis from the cache, if any (no model)."""

    info: VideoInfo
    fingerprint: str = ""
    analysis: Analysis | None = None
    ref: dict[str, Any] | None = None  # analysis_ref of the cached analysis


def analysis_ref(key: CacheKey) -> dict[str, Any]:
    """What a project stores to find its analysis again in the cache."""
    return {"fingerprint": key.fingerprint, "model_id": key.model_id, "revision": key.revision,
            "precision": key.precision, "settings": key.settings, "key": key.digest()}


def open_cached(video: str, cache: AnalysisCache | None = None, *,
                info: VideoInfo | None = None) -> OpenedVideo:
    """Probe (clear errors for bad files), fingerprint, and find the cached analysis. A cache
    problem never stops the open: the video opens without its analysis."""
    opened = OpenedVideo(info if info is not None else probe(video))
    try:
        opened.fingerprint = fingerprint(video)
    except OSError as exc:
        log.info("cannot fingerprint %s: %s", video, exc)
    if cache is None:
        return opened
    try:
        for entry in cache.lookup(video):
            if entry.complete:
                analysis = cache.get_analysis(entry.key)
                if analysis is not None:
                    opened.analysis, opened.ref = analysis, analysis_ref(entry.key)
                    break
    except Exception as exc:  # noqa: BLE001 - the cache is an optimisation
        log.info("cache look-up failed for %s: %s", video, exc)
    return opened


def cached_analysis(video: str) -> Analysis | None:
    """The most recent complete analysis of this file (found by content), with no model."""
    return open_cached(video, AnalysisCache()).analysis


def video_work_path(fingerprint: str) -> Path:
    """Where the app keeps a video's own project (its clip bin and edited events), by content:
    reopening the video, even moved or renamed, brings its clips back."""
    from marlin_desk.paths import data_dir

    return data_dir() / "videos" / f"{fingerprint}{projfile.SUFFIX}"


def saved_project(video: str, fingerprint: str | None = None) -> projfile.Project | None:
    """The video's saved work: its own project in the app's folder, else a `<name>.marlin`
    project beside it (what Save As suggests). None when there is neither."""
    from marlin_desk.store.fingerprint import fingerprint as content_fingerprint

    candidates = []
    try:
        candidates.append(video_work_path(fingerprint or content_fingerprint(video)))
    except OSError as exc:
        log.info("no fingerprint for %s: %s", video, exc)
    candidates.append(Path(video).with_suffix(projfile.SUFFIX))
    for path in candidates:
        if not path.is_file():
            continue
        try:
            project = projfile.load(path)
        except Exception as exc:  # noqa: BLE001 - a damaged file is skipped, and said
            log.warning("cannot read the saved project %s: %s", path, exc)
            continue
        try:  # a project beside the video may be about another file of the same name
            if os.path.samefile(project.video, video):
                return project
        except OSError:
            continue
    return None


def video_events(video: str, cache: AnalysisCache | None = None) -> list[Any] | None:
    """The events the editor sees for this file: the saved project's edited events, else its
    cached analysis's; None when it has neither (e.g. subtitles for a library clip)."""
    project = saved_project(video)
    if project is not None and project.events is not None:
        return list(project.events)
    analysis = open_cached(video, cache if cache is not None else AnalysisCache()).analysis
    return None if analysis is None else list(analysis.events)


def cached_spans(video: str, query: str) -> list[Any] | None:
    """Spans found earlier for `query` in this file (most recent analysis settings first)."""
    cache = AnalysisCache()
    for entry in cache.lookup(video):
        hit = cache.get_find(entry.key, query)
        if hit is not None:
            return hit.spans
    return None
