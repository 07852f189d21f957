"""The Library panel: add a folder, search every analysed video, open a result at its moment."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from marlin_desk.core.timeline import Analysis, Event, WindowResult
from marlin_desk.store.fingerprint import CacheKey
from tests.gui.conftest import open_and_wait


def _analysed_copy(cache, source: Path, target: Path, green: tuple[float, float]) -> Path:  # noqa: ANN001
    shutil.copy(source, target)
    with open(target, "ab") as fh:  # another file by content, the same pictures
        fh.write(target.name.encode())
    events = [Event(0.0, 2.0, "a red screen"), Event(*green, "a green screen")]
    window = WindowResult(0, 0.0, 6.0, "raw", True, "A screen.", events)
    key = CacheKey.for_file(target, "known/model", "r1", "fp32", {"window": 6})
    cache.complete(key, Analysis(6.0, "known/model", "A screen.", events, [window],
                                 str(target)))
    return target


def test_library_search_finds_the_moment_in_another_video_and_opens_it(
        qtbot, make_window, sample_video, tmp_path) -> None:
    w = make_window()
    folder = tmp_path / "footage"
    folder.mkdir()
    first = _analysed_copy(w.cache, sample_video, folder / "day 1.mp4", (2.0, 4.0))
    second = _analysed_copy(w.cache, sample_video, folder / "day 2.mp4", (2.5, 3.5))
    w.library.add_folder(str(folder))
    qtbot.waitUntil(lambda: w.library_panel.videos.topLevelItemCount() == 2, timeout=30_000)
    with qtbot.waitSignal(w.library.searched, timeout=30_000):
        w.library.search("the greens' screen \"")  # stemmed, stray quote: never an error
    hits = w.library.result.hits
    assert {Path(h.path).name for h in hits if "green" in h.text} == {"day 1.mp4",
                                                                        "day 2.mp4"}
    assert all(h.stage == "index" for h in hits)
    # each result shows its picture: the frame at its start (the green one is green)
    tree = w.library_panel.hits
    qtbot.waitUntil(lambda: all(not tree.topLevelItem(i).icon(0).isNull()
                                for i in range(tree.topLevelItemCount())), timeout=30_000)
    green = next(i for i, h in enumerate(hits) if "green" in h.text)
    image = tree.topLevelItem(green).icon(0).pixmap(72, 40).toImage()
    pixel = image.pixelColor(image.width() // 2, image.height() // 2)
    assert pixel.green() > 120 and pixel.red() < 90, pixel.name()
    open_and_wait(qtbot, w, first)
    row = next(i for i, h in enumerate(hits) if Path(h.path) == second and "green" in h.text)
    item = w.library_panel.hits.topLevelItem(row)
    with qtbot.waitSignal(w.videoOpened, timeout=30_000):
        w.library_panel.hits.itemActivated.emit(item, 0)
    assert w.doc.video == str(second)
    qtbot.waitUntil(lambda: w.player._loop is not None, timeout=5000)
    assert w.player._loop == pytest.approx((2.5, 3.5))


def test_with_the_model_loaded_the_library_refines_in_its_best_windows(
        qtbot, make_window, settings, tmp_path) -> None:
    """The trained demo model analyses the demo video in the app; a library search then runs
    Marlin's find in the best windows only, on the model worker (stage "model")."""
    from marlin_desk.resources import demo_model, demo_video

    settings.set("caption_tokens", 0)  # the whole caption: the index needs the events
    video = tmp_path / "footage" / "demo copy.mp4"
    video.parent.mkdir()
    shutil.copy(demo_video(), video)
    w = make_window(model=str(demo_model()))
    with qtbot.waitSignal(w.engine.modelReady, timeout=120_000):
        w.model_jobs.load_model()
    open_and_wait(qtbot, w, video)
    with qtbot.waitSignal(w.analysisFinished, timeout=180_000):
        w.model_jobs.analyse()
    qtbot.waitUntil(lambda: w.library_panel.videos.topLevelItemCount() == 1, timeout=30_000)
    # the analysis made in the window shows in the library's list too
    qtbot.waitUntil(lambda: w.library_panel.videos.topLevelItem(0).text(1) == "analysed",
                    timeout=30_000)
    with qtbot.waitSignal(w.library.searched, timeout=180_000):
        w.library.search("the blue screen")
    best = w.library.result.hits[0]
    assert best.stage == "model" and Path(best.path) == video, w.library.result.hits
    assert best.start == pytest.approx(8.0, abs=1.0) and best.end == pytest.approx(13.0, abs=1.0)
    assert not w.errors
