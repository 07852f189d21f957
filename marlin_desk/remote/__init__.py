"""Marlin on a server: an OpenAI-compatible endpoint (vLLM) answers the windows.

No torch here: the app sends each window as a short clip of the frames it would have shown a
local model, and the server does the rest. See docs/serving.md.
"""
