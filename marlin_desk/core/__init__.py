"""The domain: pure Python (no Qt, no torch, no FFmpeg)."""
