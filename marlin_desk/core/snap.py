"""Snapping a span's edges to shot changes (pure: cut times in, times out).

A cut time is the first frame of a new shot. A start snapped to a cut begins on that frame; an
end snapped to a cut ends just before it (ends are exclusive everywhere in Marlin), so a clip
never shows a frame of the neighbouring shot.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence

from marlin_desk.core.options import SNAP_TOLERANCE_SECONDS


def nearest_cut(t: float, cuts: Sequence[float], tolerance: float, *,
                above: float | None = None, below: float | None = None) -> float | None:
    """The cut nearest to `t` within `tolerance` (the earlier one on a tie), only among cuts
    strictly above `above` and strictly below `below` when given; None when there is none.
    `cuts` must be sorted."""
    if tolerance < 0:
        raise ValueError("tolerance must not be negative")
    lo = bisect.bisect_left(cuts, t - tolerance - 1e-9)
    hi = bisect.bisect_right(cuts, t + tolerance + 1e-9)
    best: float | None = None
    for c in cuts[lo:hi]:
        if above is not None and c <= above:
            continue
        if below is not None and c >= below:
            continue
        if best is None or abs(c - t) < abs(best - t) - 1e-12:
            best = c
    return best


def snap_span(start: float, end: float, cuts: Sequence[float],
              tolerance: float = SNAP_TOLERANCE_SECONDS) -> tuple[float, float, bool, bool]:
    """(start, end, snapped_start, snapped_end): each edge moved to the nearest cut within
    `tolerance` seconds, never making the span empty or reversed (an edge whose nearest cut
    would cross the other edge takes the nearest one that does not, or stays).

    A flag is True when the edge is on a cut (also when it already was)."""
    if end <= start:
        raise ValueError(f"empty or reversed span {start}-{end}")
    ordered = sorted(cuts)
    new_start = nearest_cut(start, ordered, tolerance, below=end)
    s = start if new_start is None else new_start
    new_end = nearest_cut(end, ordered, tolerance, above=s)
    e = end if new_end is None else new_end
    return s, e, new_start is not None, new_end is not None


def snap_to_speech(start: float, end: float, starts: Sequence[float], ends: Sequence[float],
                   tolerance: float) -> tuple[float, float]:
    """A span's edges on what is said: its start on the nearest word (or sentence) start, its
    end on the nearest word (or sentence) end, each within `tolerance` seconds, never making the
    span empty. `starts` and `ends` must be sorted (a transcript's words are)."""
    if end <= start:
        raise ValueError(f"empty or reversed span {start}-{end}")
    s = nearest_cut(start, starts, tolerance, below=end)
    s = start if s is None else s
    e = nearest_cut(end, ends, tolerance, above=s)
    return s, end if e is None else e
