"""Dockable panels: events table, search, clip bin."""
