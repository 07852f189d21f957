"""Batch analysis of a video library (runner.py; split into inputs, outputs, report, settings and
runner in the next commit). The names below are the ones the CLI and the tests import."""

from marlin_desk.batch_analysis.runner import (
    CACHED,
    CANCELLED,
    DONE,
    FAILED,
    PENDING,
    SUFFIXES,
    VIDEO_EXTENSIONS,
    BatchProgress,
    BatchReport,
    BatchSettings,
    OnProgress,
    OnResult,
    VideoResult,
    concurrency_allowed,
    discover,
    format_seconds,
    is_video_name,
    output_bases,
    place_text,
    read_list,
    read_queries,
    run_batch,
    scan_folder,
    write_outputs,
)

__all__ = [
    "CACHED", "CANCELLED", "DONE", "FAILED", "PENDING", "SUFFIXES", "VIDEO_EXTENSIONS",
    "BatchProgress", "BatchReport", "BatchSettings", "OnProgress", "OnResult", "VideoResult",
    "concurrency_allowed", "discover", "format_seconds", "is_video_name", "output_bases",
    "place_text", "read_list", "read_queries", "run_batch", "scan_folder", "write_outputs",
]
