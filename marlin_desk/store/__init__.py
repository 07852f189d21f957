"""The embedded SQLite cache of analyses, keyed by content fingerprint, model and settings."""

from marlin_desk.store.cache import (
    AnalysisCache,
    CachedFind,
    CacheEntry,
    CacheUnavailable,
    default_path,
)
from marlin_desk.store.fingerprint import CacheKey, fingerprint

__all__ = ["AnalysisCache", "CacheEntry", "CacheKey", "CacheUnavailable", "CachedFind",
           "default_path", "fingerprint"]
