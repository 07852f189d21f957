"""Which model a job uses, and why: the one decision the app, the self-test and every command
share, so that they can not disagree.

In order: the user's choice (Preferences, --model); Marlin-2B pulled into the app's models
folder (`marlin-desk models pull`, also `--from DIR`); Marlin-2B in the Hugging Face cache; the
bundled demo model, with one sentence saying so wherever it runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from marlin_desk.core.errors import ModelUnavailable
from marlin_desk.models.catalogue import DEFAULT_MODEL
from marlin_desk.models.files import hf_cache_snapshot
from marlin_desk.resources import demo_model

Source = Literal["user", "pulled", "hf-cache", "demo"]

DEMO_SENTENCE = (f"{DEFAULT_MODEL} is not on this machine, so the bundled demo model runs (it "
                 f"knows only coloured screens on black, as in the demo video); get the real "
                 f"model with Model > Download a Model… or `marlin-desk models pull "
                 f"{DEFAULT_MODEL}`")


@dataclass(frozen=True)
class ModelChoice:
    model: str  # what to load: a hub id (the loader finds its pulled folder) or a folder
    source: Source
    why: str  # one sentence for the status bar, the JSON and the terminal

    @property
    def is_demo(self) -> bool:
        return self.source == "demo"


def choose_model(spec: str | None = None, *, revision: str | None = None) -> ModelChoice:
    """The model for a job. `spec`: the user's choice, if any (empty means "the app decides")."""
    if spec:
        return ModelChoice(spec, "user", "chosen by the user (Preferences or --model)")
    from marlin_desk.models.manager import ModelManager

    pulled = ModelManager().installed_folder(DEFAULT_MODEL, revision)
    if pulled is not None:
        return ModelChoice(DEFAULT_MODEL, "pulled",
                           f"{DEFAULT_MODEL} from the models folder ({pulled})")
    if hf_cache_snapshot(DEFAULT_MODEL, revision) is not None:
        return ModelChoice(DEFAULT_MODEL, "hf-cache",
                           f"{DEFAULT_MODEL} from the Hugging Face cache")
    demo = demo_model()
    if (demo / "config.json").is_file():
        return ModelChoice(str(demo), "demo", DEMO_SENTENCE)
    raise ModelUnavailable(f"no model: {DEFAULT_MODEL} is not downloaded and the demo model is "
                           f"missing; run `marlin-desk models pull {DEFAULT_MODEL}` (Model > "
                           "Download a Model… in the app) or choose a model folder")
