"""Headless commands. Each command module exposes `register(subparsers)` which adds its
sub-parser(s) and sets `func=run_something(args) -> int` via `set_defaults`."""
