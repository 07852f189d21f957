"""Library results from several videos in one clip bin: the open video's own on its timeline,
another video's kept with its file; one export writes each clip from its own source (checked by
the colour of its frames), with subtitles from that video's own events; the bin comes back
with the project."""

from __future__ import annotations

from pathlib import Path

import av
import numpy as np

from marlin_desk.core import project as projfile
from marlin_desk.core.timeline import Analysis, Event, WindowResult
from marlin_desk.dev.videos import make_video
from marlin_desk.store.fingerprint import CacheKey
from tests.gui.conftest import open_and_wait


def _analysed(cache, path: Path, colour: tuple[int, int, int], what: str) -> Path:  # noqa: ANN001
    make_video(path, segments=[(2.0, (40, 40, 40)), (2.0, colour)], size=(160, 96), fps=10,
               audio=True)
    events = [Event(0.0, 2.0, "a grey wall"), Event(2.0, 4.0, what)]
    window = WindowResult(0, 0.0, 4.0, "raw", True, "A wall.", events)
    key = CacheKey.for_file(path, "known/model", "r1", "fp32", {"window": 4})
    cache.complete(key, Analysis(4.0, "known/model", "A wall.", events, [window], str(path)))
    return path


def _mean_rgb(path: Path) -> np.ndarray:
    with av.open(str(path)) as c:
        frames = [f.to_ndarray(format="rgb24") for f in c.decode(video=0)]
    return np.mean(frames[len(frames) // 2], axis=(0, 1))


def test_results_of_two_videos_in_one_bin_export_from_their_own_files(
        qtbot, make_window, tmp_path) -> None:
    w = make_window()
    folder = tmp_path / "shoot"
    folder.mkdir()
    red = _analysed(w.cache, folder / "red take.mp4", (220, 30, 30), "a balloon floats up")
    blue = _analysed(w.cache, folder / "blue 'take'.mp4", (30, 40, 220), "a balloon pops")
    w.library.add_folder(str(folder))
    qtbot.waitUntil(lambda: w.library_panel.videos.topLevelItemCount() == 2, timeout=30_000)
    open_and_wait(qtbot, w, red)
    with qtbot.waitSignal(w.library.searched, timeout=30_000):
        w.library.search("balloon")
    hits = w.library.result.hits
    assert {Path(h.path).name for h in hits} == {red.name, blue.name}
    tree = w.library_panel.hits
    for row in range(tree.topLevelItemCount()):
        tree.topLevelItem(row).setSelected(True)
    w.library_panel.add_hits_button.click()
    assert len(w.doc.clips) == 2
    foreign = next(c for c in w.doc.clips if c.video)
    assert foreign.video == str(blue) and foreign.source == "library"
    assert [i.ref for i in w.timeline.data.clips.items] == [c.id for c in w.doc.clips
                                                     if not c.video]  # only its own
    model = w.clips_panel.model
    row = w.doc.clip_index(foreign.id)
    assert model.data(model.index(row, 5)) == blue.name

    w.undo_stack.undo()  # one undo takes both back
    assert not w.doc.clips
    w.undo_stack.redo()
    assert w.exports.export([c.id for c in w.doc.clips], str(tmp_path / "out"),
                            subtitles="srt")
    qtbot.waitUntil(lambda: w.exports.results is not None, timeout=120_000)
    results = w.exports.results
    assert [r.status for r in results] == ["done", "done"], (results, w.errors)
    colours = {r.spec.description: _mean_rgb(r.path) for r in results}
    assert colours["a balloon floats up"][0] > 150 > colours["a balloon floats up"][2]
    assert colours["a balloon pops"][2] > 150 > colours["a balloon pops"][0]
    srts = {r.spec.description: r.subtitle_path.read_text() for r in results}
    assert "a balloon pops" in srts["a balloon pops"]  # the other video's own events
    assert "floats" not in srts["a balloon pops"]

    saved = projfile.load(projfile.save(w.project.current(), tmp_path / "p" / "bin.marlin"))
    assert [c.video for c in saved.clips] == [c.video for c in w.doc.clips]

    # the NLE hand-off takes both: each subclip references its own file
    from urllib.parse import unquote

    import opentimelineio as otio

    w.exports.handoff("otio", str(tmp_path / "cut.otio"))
    qtbot.waitUntil(lambda: w.exports.handoff_result is not None, timeout=30_000)
    timeline = otio.adapters.read_from_file(str(w.exports.handoff_result.path))
    names = {Path(unquote(c.media_reference.target_url)).name for c in timeline.find_clips()}
    assert names == {red.name, blue.name}
