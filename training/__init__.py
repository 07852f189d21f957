"""Training the tiny Marlin-format model on synthetic clips: the commands that reproduce the
bundled resources/models/marlin-tiny-trained (its model card lists them). Not part of the app."""
