"""The model-manager tests' fixtures: the fake hub (tests/models/fake_hub.py, shared with the
GUI tests) and a models folder of the test's own."""

from __future__ import annotations

from tests.models.fake_hub import (  # noqa: F401 - fixtures and helpers the tests import
    CHUNK,
    MODEL,
    FakeHub,
    git_blob_id,
    hub,
    manager,
    model_files,
    write_folder,
)
