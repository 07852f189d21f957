"""The settings vocabulary: every choice and default that the commands, the app's preferences
and the workflows share, defined once. argparse choices, the QSettings defaults and the
Preferences dialog's lists are built from these names, so they cannot drift apart.
"""

from __future__ import annotations

from marlin_desk.core.budget import TRAINING_BUDGET

# How the model runs: auto picks GPTQ 4-bit on CUDA, then bitsandbytes NF4, then 16-bit, then
# FP32 on the CPU; remote hands the windows to an OpenAI-compatible server (vLLM).
LOCAL_BACKENDS = ("auto", "gptq", "bnb4", "bf16", "fp32", "sdnq")
BACKENDS = (*LOCAL_BACKENDS, "remote")
DEFAULT_BACKEND = "auto"
DEVICES = ("auto", "cpu", "cuda", "mps")
DEFAULT_DEVICE = "auto"

# Windows: the model saw clips of at most 240 frames at 2 fps, so 120 s is both the default and
# the longest window at the full frame rate.
MAX_WINDOW_SECONDS = TRAINING_BUDGET.max_window_seconds
DEFAULT_WINDOW_SECONDS = MAX_WINDOW_SECONDS
MIN_WINDOW_SECONDS = 5.0
DEFAULT_OVERLAP_SECONDS = 0.0

# Two kinds of parallel work, with two names: windows of one video in flight at a server, and
# videos of a batch at once.
DEFAULT_WINDOWS_IN_FLIGHT = 4
DEFAULT_VIDEOS_AT_ONCE = 1

THEMES = ("dark", "light")
DEFAULT_THEME = "dark"

# How the app shows times: seconds (H:MM:SS.mmm) or SMPTE timecode of the open video
# (HH:MM:SS:FF, drop-frame HH:MM:SS;FF at 29.97 and 59.94). Both forms are read when typed.
TIME_DISPLAYS = ("seconds", "timecode")
DEFAULT_TIME_DISPLAY = "seconds"

# Which files are videos (folder scans, the Open dialog): core.media_types, one list.

# Snapping clips to shot changes: an edge moves to a cut at most this far away. Marlin's times
# come in 0.5 s steps (2 fps windows), so the true cut is within half a step of a reported
# edge, and one step either way covers an edge the model placed one sample late or early.
SNAP_TOLERANCE_SECONDS = 1.0

# Speech (Whisper, marlin_desk/speech): the language to transcribe ("auto" detects it from the
# first chunk with speech and keeps it for the video), where Whisper runs (auto: CUDA only when
# the GPU has room beside Marlin, else the CPU), and the chunks a video is heard in: about this
# long, each boundary moved to the quietest moment within the search distance. The default
# checkpoint is the catalogue's (models.DEFAULT_SPEECH_MODEL), else the bundled tiny.en.
SPEECH_LANGUAGE_AUTO = "auto"
DEFAULT_SPEECH_LANGUAGE = SPEECH_LANGUAGE_AUTO
SPEECH_DEVICES = ("auto", "cpu", "cuda")
DEFAULT_SPEECH_DEVICE = "auto"
SPEECH_CHUNK_SECONDS = 30.0
SPEECH_CUT_SEARCH_SECONDS = 5.0

# Clip edges on speech (Edit menu): on the nearest word's edge within a second, or on the
# nearest sentence's (a Whisper segment) within three, so a cut never clips a word in half.
SPEECH_SNAP_TOLERANCE_SECONDS = {"words": 1.0, "sentences": 3.0}
