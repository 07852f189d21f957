"""The PySide6 desktop app. Importing this package must stay cheap: no torch, no transformers
(the model worker imports them in its own thread after the window is up)."""
