"""The library end to end with the trained tiny model (resources/models/marlin-tiny-trained):
real videos analysed by real model classes into a real cache, then found across the library by
the text index and refined by the model's own find. The model knows red, green, blue and yellow
screens on black, so the truth of every answer is known."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from marlin_desk.dev.videos import make_video
from marlin_desk.library import scan
from marlin_desk.library.search import INDEX, MODEL, search_library
from marlin_desk.store import AnalysisCache
from marlin_desk.workflows import JobSettings, analyze, find, find_in_windows, open_video
from training.data import COLOURS

TINY = Path(__file__).resolve().parents[2] / "resources" / "models" / "marlin-tiny-trained"
SETTINGS = JobSettings(model=str(TINY), device="cpu")
# (file, segments): every video is one 20 s window for the model
VIDEOS = {
    "beach.mp4": [(2, "black"), (4, "blue"), (2, "black"), (3, "red")],
    "city.mp4": [(1, "black"), (3, "green"), (2, "black"), (4, "blue"), (1, "black")],
    "forest.mp4": [(2, "black"), (4, "red"), (2, "black"), (3, "green")],
    "desert.mp4": [(1, "black"), (5, "yellow"), (2, "black")],
}


def truth(name: str, colour: str) -> tuple[float, float]:
    t = 0.0
    for seconds, c in VIDEOS[name]:
        if c == colour:
            return t, t + seconds
        t += seconds
    raise KeyError(colour)


def iou(a: tuple[float, float], b: tuple[float, float]) -> float:
    inter = max(0.0, min(a[1], b[1]) - max(a[0], b[0]))
    return inter / (max(a[1], b[1]) - min(a[0], b[0]))


@pytest.fixture(scope="module")
def analysed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The four videos analysed once into a cache file: tests work on copies of both."""
    root = tmp_path_factory.mktemp("analysed")
    cache = AnalysisCache(root / "analyses.sqlite3")
    engine = None
    (root / "videos").mkdir()
    for name, parts in VIDEOS.items():
        path = make_video(root / "videos" / name, segments=[(d, COLOURS[c]) for d, c in parts],
                          size=(64, 64), fps=10, frame_code=False)
        bench = open_video(str(path), SETTINGS, cache=cache, engine=engine)
        analyze(bench)
        engine = bench.engine
        bench.close()
    cache.close()
    return root


@pytest.fixture
def library(analysed: Path, tmp_path: Path) -> Iterator[tuple[AnalysisCache, Path]]:
    folder = shutil.copytree(analysed / "videos", tmp_path / "library")
    shutil.copy(analysed / "analyses.sqlite3", tmp_path / "analyses.sqlite3")
    cache = AnalysisCache(tmp_path / "analyses.sqlite3")
    scan.add([str(folder)], cache)
    yield cache, folder
    cache.close()


def name(hit: object) -> str:
    return Path(hit.path).name  # type: ignore[attr-defined]


def test_the_blue_screen_is_found_in_every_video_that_has_one(
        library: tuple[AnalysisCache, Path]) -> None:
    cache, _ = library
    assert {v.state for v in scan.videos(cache)} == {"analysed"}
    hits = search_library("the blue screen", cache=cache).hits
    assert name(hits[0]) in {"beach.mp4", "city.mp4"}  # a video without blue is not first
    top_two = hits[:2]
    assert {name(h) for h in top_two} == {"beach.mp4", "city.mp4"}, hits
    for h in top_two:
        assert h.stage == INDEX and "blue" in h.text and h.online
        assert iou((h.start, h.end), truth(name(h), "blue")) >= 0.7, h


def test_refine_runs_the_model_in_the_best_windows_only(
        library: tuple[AnalysisCache, Path]) -> None:
    cache, _ = library
    result = search_library("the blue screen", cache=cache, top=4, refine=2, settings=SETTINGS)
    assert result.refined_windows == 2  # one 20 s window in each of the two blue videos
    refined = [h for h in result.hits if h.stage == MODEL]
    assert {name(h) for h in refined} == {"beach.mp4", "city.mp4"}
    assert result.hits[:2] == refined  # the refined come first; the rest keep stage one's
    for h in refined:
        assert "blue" in h.text and h.score <= 0.0  # a log-probability
        assert iou((h.start, h.end), truth(name(h), "blue")) >= 0.6, h
    assert all(h.stage == INDEX for h in result.hits[2:])


def test_a_moved_file_is_found_after_a_rescan_with_its_analysis(
        library: tuple[AnalysisCache, Path]) -> None:
    cache, folder = library
    moved = folder / "2025" / "trip" / "beach renamed.mp4"
    moved.parent.mkdir(parents=True)
    (folder / "beach.mp4").rename(moved)
    report = scan.scan(cache)
    assert (report.counts.moved, report.counts.offline, report.hashed) == (1, 0, 1)
    entry = {Path(v.path).name: v for v in scan.videos(cache)}["beach renamed.mp4"]
    assert entry.path == str(moved) and entry.online and entry.state == "analysed"
    hits = search_library("blue", cache=cache).hits
    assert str(moved) in {h.path for h in hits}
    assert not any(h.path.endswith("/beach.mp4") for h in hits)


def test_a_deleted_file_is_offline_and_keeps_its_analysis(
        library: tuple[AnalysisCache, Path]) -> None:
    cache, folder = library
    (folder / "city.mp4").unlink()
    assert scan.scan(cache).counts.offline == 1
    entry = {Path(v.path).name: v for v in scan.videos(cache)}["city.mp4"]
    assert not entry.online and entry.state == "analysed"
    assert any(e.complete for e in cache.entries(entry.fingerprint))
    hits = search_library("blue", cache=cache, refine=2, settings=SETTINGS)
    city = [h for h in hits.hits if name(h) == "city.mp4"]
    assert city and not city[0].online and city[0].stage == INDEX  # shown, not refined
    assert any("offline" in note for note in hits.notes)


def test_refine_takes_a_cached_whole_video_answer_without_the_model(
        library: tuple[AnalysisCache, Path]) -> None:
    cache, folder = library
    bench = open_video(str(folder / "beach.mp4"), SETTINGS, cache=cache)
    (whole,) = find(bench, ["the blue screen"])
    bench.close()
    fresh = open_video(str(folder / "beach.mp4"), SETTINGS, cache=cache)
    part = find_in_windows(fresh, "the blue screen", {0})
    assert fresh.engine is None and fresh.session is None  # no model loaded
    assert part.spans and [s.to_json() for s in part.spans] == [
        s.to_json() for s in whole.spans if s.window == 0]
