"""Marlin Desk: a video timeline, search and clip export driven by the Marlin-2B video model."""

__version__ = "0.1.0"
