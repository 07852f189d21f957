"""core.snap: span edges onto shot changes, within a tolerance, never empty or reversed."""

from __future__ import annotations

import pytest

from marlin_desk.core.options import SNAP_TOLERANCE_SECONDS
from marlin_desk.core.snap import nearest_cut, snap_span

CUTS = [2.0, 4.04, 9.0]


def test_default_tolerance_is_the_settings_one() -> None:
    assert SNAP_TOLERANCE_SECONDS == 1.0
    assert snap_span(1.0, 5.0, CUTS) == (2.0, 4.04, True, True)  # 1.0 away: still in


def test_edges_move_to_the_nearest_cut_within_the_tolerance() -> None:
    assert snap_span(1.6, 4.44, CUTS, 0.5) == (2.0, 4.04, True, True)
    assert snap_span(1.4, 4.6, CUTS, 0.5) == (1.4, 4.6, False, False)  # both too far
    assert snap_span(1.6, 6.0, CUTS, 0.5) == (2.0, 6.0, True, False)
    assert snap_span(2.0, 6.0, CUTS, 0.0) == (2.0, 6.0, True, False)  # already on a cut


def test_never_empty_or_reversed() -> None:
    # Both edges nearest to the same cut: the start takes it, the end keeps its place.
    assert snap_span(3.9, 4.2, CUTS, 1.0) == (4.04, 4.2, True, False)
    # The start's nearest cut is past the end: the start takes the next nearest before the end.
    assert snap_span(3.5, 3.9, [2.9, 4.0], 1.0) == (2.9, 4.0, True, True)
    for a, b in [(0.5, 0.6), (1.99, 2.01), (3.95, 4.1), (8.5, 9.2)]:
        s, e, _, _ = snap_span(a, b, CUTS, 1.0)
        assert e > s
    with pytest.raises(ValueError):
        snap_span(2.0, 2.0, CUTS)


def test_nearest_cut_ties_take_the_earlier_and_bounds_are_strict() -> None:
    assert nearest_cut(3.0, [2.0, 4.0], 1.0) == 2.0
    assert nearest_cut(3.0, [2.0, 4.0], 1.0, above=2.0) == 4.0
    assert nearest_cut(3.0, [2.0, 4.0], 0.5) is None
    with pytest.raises(ValueError):
        nearest_cut(3.0, [2.0], -1.0)
