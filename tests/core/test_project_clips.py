"""A clip cut from another video keeps its file in the project, relative when it sits under the
project's folder (the pair can move together); old projects without it read as before."""

from __future__ import annotations

from pathlib import Path

from marlin_desk.core import project as projfile
from marlin_desk.core.project import Clip, Project


def test_a_clip_of_another_video_survives_save_and_a_moved_folder(tmp_path: Path) -> None:
    folder = tmp_path / "job"
    (folder / "media").mkdir(parents=True)
    main, other = folder / "media" / "main.mp4", folder / "media" / "other 'take'.mp4"
    elsewhere = tmp_path / "archive" / "far.mp4"
    clips = [Clip(1.0, 2.0, "own"), Clip(3.0, 4.0, "lib", video=str(other), source="library"),
             Clip(0.5, 1.5, "far", video=str(elsewhere))]
    path = projfile.save(Project(str(main), clips=clips), folder / "cut.marlin")
    raw = path.read_text()
    assert "\"video\": \"media/other 'take'.mp4\"" in raw  # relative: beside the project
    moved = tmp_path / "moved"
    folder.rename(moved)
    back = projfile.load(moved / "cut.marlin")
    assert [c.video for c in back.clips] == ["", str((moved / "media" / other.name).resolve()),
                                             str(elsewhere)]
    assert back.clips[1].with_times(3.5, 4.0).video == back.clips[1].video  # edits keep it
    assert back.clips[0].video_of(back.video) == back.video
