"""What the commands and the app do: choose the model and open it, analyse and search a video
through the analysis cache, open a video with its saved work. It sits above models, engine,
remote and store (which may not import each other); the CLI and the GUI worker both call it,
so the two behave the same.

    settings.py  the job's settings from the user's options, and the engine they name
    video.py     a video opened for the model: analyse, find (whole video or some windows)
    opening.py   a video opened for the editor: probe, cached analysis, saved clip bin
    shots.py     a video's shot boundaries, detected once and cached
"""

from marlin_desk.workflows.opening import (
    OpenedVideo,
    analysis_ref,
    cached_analysis,
    cached_spans,
    open_cached,
    saved_project,
    video_events,
    video_work_path,
)
from marlin_desk.workflows.settings import (
    PROMPT_VERSION,
    JobSettings,
    ServerSettings,
    connect_server,
    is_remote,
    job_settings,
    model_identity,
    open_engine,
)
from marlin_desk.workflows.shots import Shots, find_shots, shot_boundaries
from marlin_desk.workflows.video import (
    Workbench,
    analyze,
    engine_precision,
    find,
    find_in_windows,
    open_video,
)

__all__ = [
    "PROMPT_VERSION", "JobSettings", "OpenedVideo", "ServerSettings", "Shots", "Workbench",
    "analysis_ref", "analyze", "cached_analysis", "cached_spans", "connect_server",
    "engine_precision", "find", "find_in_windows", "find_shots", "is_remote", "job_settings",
    "model_identity", "open_cached", "open_engine", "open_video", "saved_project", "video_events",
    "shot_boundaries", "video_work_path",
]
