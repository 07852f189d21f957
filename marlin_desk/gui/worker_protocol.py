"""What the window asks of the model worker and what comes back: typed requests and results.

The worker dispatches on the request's type (a table, no string kinds); the window reacts to
the result's type. No Qt and no torch here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from marlin_desk.core import options
from marlin_desk.core.timeline import Analysis, Span
from marlin_desk.workflows import ServerSettings


@dataclass(frozen=True)
class ModelOptions:
    """The user's choices about the model (Preferences), as `workflows.job_settings` takes
    them; empty model: the app decides (`models.choose_model`)."""

    model: str = ""
    backend: str = options.DEFAULT_BACKEND
    device: str = options.DEFAULT_DEVICE
    server: ServerSettings | None = None


@dataclass(frozen=True)
class LoadRequest:
    options: ModelOptions
    label = "Loading model"


@dataclass(frozen=True)
class AnalyseRequest:
    video: str
    info: Any = None  # the video's probe, when the window has it
    window: float = options.DEFAULT_WINDOW_SECONDS
    overlap: float = options.DEFAULT_OVERLAP_SECONDS
    caption_tokens: int | None = None  # None: the pipeline's own limit
    resume: bool = True  # False: analyse again, ignoring finished windows in the cache
    label = "Analysing"


@dataclass(frozen=True)
class FindRequest:
    video: str
    query: str
    info: Any = None
    window: float = options.DEFAULT_WINDOW_SECONDS
    overlap: float = options.DEFAULT_OVERLAP_SECONDS
    caption_tokens: int | None = None
    top: int | None = None
    label = "Searching"


@dataclass(frozen=True)
class LibrarySearchRequest:
    """Every analysed video: the index's best candidates, then the model's find in the best
    `refine` windows only (library.search_library's two stages)."""

    query: str
    top: int = 20
    refine: int = 4
    label = "Searching the library"


@dataclass(frozen=True)
class LibraryAnalyseRequest:
    """One video of the library's queue, analysed like `marlin-desk batch` does (resumed from
    the cache's windows); it never touches the video open in the window."""

    video: str
    fingerprint: str
    window: float = options.DEFAULT_WINDOW_SECONDS
    overlap: float = options.DEFAULT_OVERLAP_SECONDS
    caption_tokens: int | None = None
    label = "Analysing the library"


Request = (LoadRequest | AnalyseRequest | FindRequest | LibrarySearchRequest
           | LibraryAnalyseRequest)


@dataclass(frozen=True)
class ModelReady:
    info: dict[str, Any]  # LoadedModel.describe(): model, backend, device, dtype, why...


@dataclass(frozen=True)
class AnalyseResult:
    analysis: Analysis
    ref: dict[str, Any] | None  # how a project finds this analysis in the cache again
    resumed: int = 0  # windows that came from the cache


@dataclass(frozen=True)
class FindResult:
    query: str
    spans: list[Span] = field(default_factory=list)
    seconds: float = 0.0
    cached: bool = False


@dataclass(frozen=True)
class LibrarySearchResult:
    result: Any  # library.search.SearchResult


@dataclass(frozen=True)
class LibraryAnalyseResult:
    fingerprint: str
    windows: int  # windows in the analysis
    resumed: int = 0  # windows that came from the cache


Result = (ModelReady | AnalyseResult | FindResult | LibrarySearchResult
          | LibraryAnalyseResult)
