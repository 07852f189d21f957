"""The export API in one import, for the CLI and the GUI (no Qt here; call from a worker thread).

    from marlin_desk.media.export import ClipSpec, ExportOptions, ExportQueue
    queue = ExportQueue(video, [ClipSpec(12.5, 20.0, "goal", preset="reels")],
                        ExportOptions(out_dir), events=analysis.events,
                        on_progress=lambda i, clip, overall: ...)
    results = queue.run()          # queue.cancel(i) / queue.cancel() from another thread

Subtitles of what is said: pass `transcript=` to ExportQueue, choose the source with
`ExportOptions(subtitle_source=default_subtitle_source(transcript is not None))` (speech, events
or both) and burned karaoke captions with `ClipSpec(..., captions="bold")` (CAPTION_STYLES);
`clip_caption_frames` / `clip_captions_ass` lay out a clip's captions for a preview
(docs/captions.md).

Modes (MODES, MODE_LABELS, default_mode(preset): the one vocabulary for the CLI and the GUI):
`smart` (the default for the original preset) re-encodes only up to the first keyframe and
copies the rest, frame-accurate; it falls back to `exact` when the source does not allow it and
says why (ExportResult.fallback). `exact` re-encodes everything (the default for presets that
resize); `fast` copies streams and starts on the keyframe before the asked start (the real start
is reported). See clip_export and smart_cut.
"""

from marlin_desk.media.caption_styles import (
    CAPTION_STYLE_NAMES,
    CAPTION_STYLES,
    DEFAULT_CAPTION_STYLE,
    CaptionStyle,
)
from marlin_desk.media.captions import (
    CaptionFrame,
    caption_frames,
    clip_caption_frames,
    clip_captions_ass,
    frame_at,
)
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
from marlin_desk.media.presets import FILLS, MODE_LABELS, PRESETS, Preset, default_mode
from marlin_desk.media.safe_area import SAFE_AREA
from marlin_desk.media.speech_cues import speech_cues
from marlin_desk.media.subtitle_sources import (
    SOURCE_LABELS,
    SUBTITLE_SOURCES,
    default_subtitle_source,
)
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
    "CAPTION_STYLES", "CAPTION_STYLE_NAMES", "DEFAULT_CAPTION_STYLE", "SAFE_AREA",
    "SOURCE_LABELS", "SUBTITLE_SOURCES", "CaptionFrame", "CaptionStyle", "caption_frames",
    "clip_caption_frames", "clip_captions_ass", "default_subtitle_source", "frame_at",
    "speech_cues",
    "DEFAULT_MODE", "DEFAULT_TEMPLATE", "FILLS", "MODES", "MODE_LABELS", "PRESETS",
    "SUBTITLE_MODES", "default_mode",
    "BurnStyle", "Chapter", "ClipSpec", "Cue", "ExportOptions", "ExportQueue", "ExportResult",
    "FFmpegBinary", "Preset", "SubtitleStyle", "build_cues", "check_free_space", "clip_events",
    "estimate_bytes", "export_clip", "export_clips", "find_ffmpeg", "format_chapters",
    "render", "render_name", "safe_filename", "write_subtitles", "youtube_chapters",
]
