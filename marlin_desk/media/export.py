"""The export API in one import, for the CLI and the GUI (no Qt here; call from a worker thread).

    from marlin_desk.media.export import ClipSpec, ExportOptions, ExportQueue
    queue = ExportQueue(video, [ClipSpec(12.5, 20.0, "goal", preset="reels")],
                        ExportOptions(out_dir), events=analysis.events,
                        on_progress=lambda i, clip, overall: ...)
    results = queue.run()          # queue.cancel(i) / queue.cancel() from another thread

The default mode is `exact` (re-encode, frame-accurate in and out points); `fast` copies streams
and starts on the keyframe before the asked start (the real start is reported). See clip_export.
"""

from marlin_desk.media.chapters import Chapter, format_chapters, youtube_chapters
from marlin_desk.media.clip_export import (
    DEFAULT_MODE,
    MODES,
    SUBTITLE_MODES,
    ClipSpec,
    ExportOptions,
    ExportResult,
    export_clip,
)
from marlin_desk.media.export_queue import (
    ExportQueue,
    check_free_space,
    estimate_bytes,
    export_clips,
)
from marlin_desk.media.ffmpeg_bin import FFmpegBinary, find_ffmpeg
from marlin_desk.media.naming import DEFAULT_TEMPLATE, render_name, safe_filename
from marlin_desk.media.presets import FILLS, PRESETS, Preset
from marlin_desk.media.subtitles import (
    BurnStyle,
    Cue,
    SubtitleStyle,
    build_cues,
    clip_events,
    render,
    write_subtitles,
)

__all__ = [
    "DEFAULT_MODE", "DEFAULT_TEMPLATE", "FILLS", "MODES", "PRESETS", "SUBTITLE_MODES",
    "BurnStyle", "Chapter", "ClipSpec", "Cue", "ExportOptions", "ExportQueue", "ExportResult",
    "FFmpegBinary", "Preset", "SubtitleStyle", "build_cues", "check_free_space", "clip_events",
    "estimate_bytes", "export_clip", "export_clips", "find_ffmpeg", "format_chapters",
    "render", "render_name", "safe_filename", "write_subtitles", "youtube_chapters",
]
