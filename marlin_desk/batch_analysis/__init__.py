"""Batch analysis of a video library: every video analysed (and searched) through the cache,
its results written as files beside it or in an output folder.

A sibling of workflows and built only on its public API (open_video, analyze, find), core,
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

Modules: `inputs` (finding the videos and reading lists), `settings` (BatchSettings), `outputs`
(the result files), `report` (results, statuses, progress), `runner` (run_batch).
"""

from marlin_desk.batch_analysis.inputs import (
    VIDEO_EXTENSIONS,
    discover,
    is_video_name,
    read_list,
    read_queries,
    scan_folder,
)
from marlin_desk.batch_analysis.outputs import SUFFIXES, output_bases, place_text, write_outputs
from marlin_desk.batch_analysis.report import (
    CACHED,
    CANCELLED,
    DONE,
    FAILED,
    PENDING,
    BatchProgress,
    BatchReport,
    OnProgress,
    OnResult,
    VideoResult,
    format_seconds,
)
from marlin_desk.batch_analysis.runner import concurrency_allowed, run_batch
from marlin_desk.batch_analysis.settings import BatchSettings

__all__ = [
    "CACHED", "CANCELLED", "DONE", "FAILED", "PENDING", "SUFFIXES", "VIDEO_EXTENSIONS",
    "BatchProgress", "BatchReport", "BatchSettings", "OnProgress", "OnResult", "VideoResult",
    "concurrency_allowed", "discover", "format_seconds", "is_video_name", "output_bases",
    "place_text", "read_list", "read_queries", "run_batch", "scan_folder", "write_outputs",
]
