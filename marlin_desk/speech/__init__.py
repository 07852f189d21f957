"""Speech: what is said in a video, as words with times (Whisper through faster-whisper, its own
backend beside the engine's Marlin). It sits on core and media, and on models for where the
weights are; no Qt, no torch, no store (workflows/speech.py stores and indexes what it hears).

    audio.py     the video's sound at 16 kHz, cut in chunks at quiet moments, on video time
    whisper.py   one chunk transcribed: segments and word times (faster-whisper, lazily)
    words.py     word edges trimmed to the voice
    device.py    the CPU (int8), or CUDA only with room beside Marlin
    progress.py  what a running transcription reports
"""

from marlin_desk.speech.audio import SAMPLE_RATE, AudioChunk, iter_chunks
from marlin_desk.speech.device import DevicePlan, plan_device
from marlin_desk.speech.progress import SpeechProgress, SpeechProgressCallback
from marlin_desk.speech.whisper import ChunkResult, DecodeOptions, WhisperRunner

__all__ = ["SAMPLE_RATE", "AudioChunk", "ChunkResult", "DecodeOptions", "DevicePlan",
           "SpeechProgress", "SpeechProgressCallback", "WhisperRunner", "iter_chunks",
           "plan_device"]
