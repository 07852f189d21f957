"""Models on this machine: the catalogue, pulling (hub or folder), verifying, removing, and
which model a job uses. No torch here (an import-linter contract keeps it out): listing models
and choosing one must be instant.

    from marlin_desk.models import ModelManager, choose_model
"""

from marlin_desk.models.catalogue import (
    CATALOGUE,
    DEFAULT_MODEL,
    UNKNOWN_LICENCE,
    CatalogueEntry,
    card_licence,
    catalogue_entry,
)
from marlin_desk.models.choice import ModelChoice, choose_model
from marlin_desk.models.files import (
    LINKS_FILE,
    MANIFEST,
    PARTIAL_DIR,
    NotEnoughSpace,
    allowed_file,
    hf_cache_snapshot,
    human_size,
    is_offline,
)
from marlin_desk.models.manager import ModelManager, ModelStatus, VerifyReport
from marlin_desk.models.progress import Progress, ProgressCallback

__all__ = [
    "CATALOGUE", "DEFAULT_MODEL", "LINKS_FILE", "MANIFEST", "PARTIAL_DIR", "UNKNOWN_LICENCE",
    "CatalogueEntry", "ModelChoice", "ModelManager", "ModelStatus", "NotEnoughSpace",
    "Progress", "ProgressCallback", "VerifyReport", "allowed_file", "card_licence",
    "catalogue_entry", "choose_model", "hf_cache_snapshot", "human_size", "is_offline",
]
