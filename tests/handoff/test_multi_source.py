"""A timeline of clips from two files (a clip bin with library results): every target
references each subclip's own file at its own timecode, read back with the OTIO adapters; the
markers stay on the main file's subclips; a file at another frame rate is refused by name."""

from __future__ import annotations

from pathlib import Path

import opentimelineio as otio
import pytest

from marlin_desk.core.errors import BadInput
from marlin_desk.core.project import Clip
from marlin_desk.core.timeline import Event
from marlin_desk.handoff_export import write_timeline
from tests.handoff.conftest import SOURCES

MAIN, OTHER, FAST = SOURCES[0], SOURCES[4], SOURCES[3]  # 25 fps; 25 fps from 10:00:00:00; 60


def _clips(other: Path) -> list[Clip]:
    return [Clip(3 / 25, 8 / 25, "main one"), Clip(10 / 25, 15 / 25, "library", video=str(other)),
            Clip(30 / 25, 41 / 25, "main two")]


@pytest.mark.parametrize(("target", "suffix"), [("otio", ".otio"), ("premiere", ".xml"),
                                                ("fcpx", ".fcpxml"), ("edl", ".edl")])
def test_each_subclip_references_its_own_file(source_files, tmp_path: Path, target: str,
                                              suffix: str) -> None:
    main, other = source_files(MAIN), source_files(OTHER)
    events = [Event(5 / 25, 9 / 25, "on the main file"), Event(11 / 25, 13 / 25, "not here")]
    result = write_timeline(str(main), target, tmp_path / f"t{suffix}", clips=_clips(other),
                            events=events)
    read = otio.adapters.read_from_file(str(result.path), **({"rate": 25.0} if target == "edl"
                                                               else {}))
    (timeline,) = read if target == "fcpx" else (read,)  # FCPXML: a library of projects
    (track,) = [t for t in timeline.tracks if t.kind == otio.schema.TrackKind.Video]
    clips = list(track.find_clips())
    assert [c.name for c in clips] == ["main one", "library", "main two"]
    starts = [round(c.source_range.start_time.value) for c in clips]
    # each at its own timecode (the FCPXML reader truncates to a frame below)
    slack = 1 if target == "fcpx" else 0
    for got, want in zip(starts, [MAIN.tc0 + 3, OTHER.tc0 + 10, MAIN.tc0 + 30], strict=True):
        assert want - slack <= got <= want
    if target != "fcpx":
        assert [round(c.source_range.duration.value) for c in clips] == [5, 5, 11]
    if target != "edl":  # an EDL names reels, not files
        urls = [c.media_reference.target_url for c in clips]
        assert [Path(u.removeprefix("file://")).name for u in _decoded(urls)] == [
            main.name, other.name, main.name]
    else:
        text = result.path.read_text()
        assert "SRC25TC" in text and "SRC25" in text  # two reels
    assert [m.name for m in result.plan.clips[1].markers] == []  # the main file's events only
    assert [m.name for m in result.plan.clips[0].markers] == ["on the main file"]


def _decoded(urls: list[str]) -> list[str]:
    from urllib.parse import unquote

    return [unquote(u) for u in urls]


def test_a_file_at_another_frame_rate_is_refused_by_name(source_files, tmp_path) -> None:
    main, fast = source_files(MAIN), source_files(FAST)
    with pytest.raises(BadInput, match=fast.name.split(".")[0][:6] + ".*60.000 fps"):
        write_timeline(str(main), "otio", tmp_path, clips=[
            Clip(0.1, 0.5, "a"), Clip(0.1, 0.5, "b", video=str(fast))])
