"""Training a tiny Marlin-format model on synthetic clips (research; not part of the app)."""
