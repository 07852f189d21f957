"""Clips from several videos in one export (media.export_sources): each from its own file, one
batch's indexes and progress, every source checked before anything is written."""

from __future__ import annotations

from pathlib import Path

import pytest

from marlin_desk.core.errors import BadInput
from marlin_desk.media.export import ClipSpec, ExportOptions
from marlin_desk.media.export_sources import SourceClips, SourcesExport
from marlin_desk.media.probe import probe


def test_clips_of_two_videos_export_from_their_own_files(videos, tmp_path: Path) -> None:
    seen: list[tuple[int, float]] = []
    batch = SourcesExport([
        SourceClips(str(videos.main), [ClipSpec(0.0, 1.0, "a"), ClipSpec(2.0, 3.0, "b")]),
        SourceClips(str(videos.rotated), [ClipSpec(0.5, 1.5, "c")]),
    ], ExportOptions(tmp_path / "out"), on_progress=lambda i, _f, o: seen.append((i, o)))
    results = batch.run()
    assert [(r.index, r.status) for r in results] == [(1, "done"), (2, "done"), (3, "done")]
    shapes = [(probe(r.path).width, probe(r.path).height) for r in results]
    assert shapes[:2] == [(320, 240)] * 2 and shapes[2] == (240, 320)  # the rotated file's
    overall = [o for _i, o in seen]
    assert overall == sorted(overall) and overall[-1] == pytest.approx(1.0)
    assert {i for i, _o in seen} == {0, 1, 2}


def test_a_bad_clip_of_the_second_video_stops_the_batch_before_any_file(
        videos, tmp_path: Path) -> None:
    out = tmp_path / "out"
    batch = SourcesExport([
        SourceClips(str(videos.main), [ClipSpec(0.0, 1.0, "fine")]),
        SourceClips(str(videos.no_audio), [ClipSpec(5.0, 9.0, "past its end")]),
    ], ExportOptions(out))
    with pytest.raises(BadInput, match=videos.no_audio.name):
        batch.run()
    assert not out.exists() or not any(out.iterdir())


def test_subtitles_of_a_source_without_events_are_refused_by_name(videos, tmp_path) -> None:
    batch = SourcesExport([
        SourceClips(str(videos.main), [ClipSpec(0.0, 1.0, "x", subtitles="srt")],
                    events=lambda: None),
    ], ExportOptions(tmp_path / "out"))
    with pytest.raises(BadInput, match="analyse the video first"):
        batch.run()
