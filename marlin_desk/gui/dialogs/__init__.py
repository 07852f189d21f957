"""Dialogs: preferences, about, keyboard shortcuts, model download."""
