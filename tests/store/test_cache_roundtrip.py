"""What goes in comes out; a renamed file hits; a changed model or setting misses; resume works."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from marlin_desk.core.timeline import Span
from marlin_desk.store import AnalysisCache, CacheKey, fingerprint

from .conftest import SETTINGS, make_analysis, make_key, make_window


def test_windows_round_trip(cache: AnalysisCache, make_video) -> None:
    video = make_video()
    key = make_key(video)
    for i in (0, 2, 1):
        cache.put_window(key, 3, video, make_window(i))
    done = cache.windows_done(key)
    assert list(done) == [0, 1, 2]
    for i, window in done.items():
        assert window.to_json() == make_window(i).to_json()


def test_analysis_round_trip_only_when_complete(cache: AnalysisCache, make_video) -> None:
    video = make_video()
    key = make_key(video)
    analysis = make_analysis(2, video=str(video))
    cache.put_window(key, 2, video, analysis.windows[0])
    cache.put_window(key, 2, video, analysis.windows[1])
    assert cache.get_analysis(key) is None  # every window done, but not merged yet
    cache.complete(key, analysis)
    got = cache.get_analysis(key)
    assert got is not None and got.to_json() == analysis.to_json()


def test_complete_without_windows_first_stores_them(cache: AnalysisCache, make_video) -> None:
    video = make_video()
    key = make_key(video)
    cache.complete(key, make_analysis(3, video="clip.mp4"))
    assert list(cache.windows_done(key)) == [0, 1, 2]
    [entry] = cache.entries()
    assert (entry.windows_done, entry.total_windows, entry.complete) == (3, 3, True)
    assert entry.video_name == "clip.mp4"


def test_find_round_trip(cache: AnalysisCache, make_video) -> None:
    video = make_video()
    key = make_key(video)
    cache.complete(key, make_analysis(2))
    spans = [Span(12.5, 18.0, 0.91, 0), Span(130.25, 140.0, None, 1, low_confidence=True)]
    cache.put_find(key, "a dog catches a frisbee", spans, {"top_k": 5, "seconds": 3.2})
    found = cache.get_find(key, "  a dog   catches a frisbee ")  # spacing is not meaning
    assert found is not None
    assert [s.to_json() for s in found.spans] == [s.to_json() for s in spans]
    assert found.extra == {"top_k": 5, "seconds": 3.2}
    assert found.query == "a dog catches a frisbee"
    assert cache.get_find(key, "A dog catches a frisbee") is None  # case reaches the model
    assert cache.get_find(key, "a cat") is None
    cache.put_find(key, "a dog catches a frisbee", [])  # a newer answer replaces the old one
    again = cache.get_find(key, "a dog catches a frisbee")
    assert again is not None and again.spans == [] and again.extra is None


def test_find_before_any_window_is_kept(cache: AnalysisCache, make_video) -> None:
    key = make_key(make_video())
    cache.put_find(key, "q", [Span(1, 2)])
    assert cache.get_find(key, "q") is not None


def test_hit_after_rename_and_move(tmp_path: Path, db_path: Path, make_video) -> None:
    video = make_video("holiday.mp4")
    with AnalysisCache(db_path) as cache:
        cache.complete(make_key(video), make_analysis(2, video=str(video)))
    moved = tmp_path / "archive" / "2024" / "renamed.mkv"
    moved.parent.mkdir(parents=True)
    shutil.move(video, moved)
    with AnalysisCache(db_path) as cache:  # a later session
        [entry] = cache.lookup(moved)  # nothing but the file
        assert entry.complete and entry.video_name == "renamed.mkv"
        assert entry.video_path == str(moved)
        assert entry.key == make_key(moved)
        assert cache.get_analysis(entry.key) is not None
        assert cache.get_analysis(make_key(moved)) is not None


@pytest.mark.parametrize("change", [
    {"model_id": "marlin/Marlin-7B"}, {"revision": "fedcba9876543210"}, {"precision": "fp16"},
    {"precision": "gptq-int4"}, {"settings": {**SETTINGS, "window_s": 60}},
    {"settings": {**SETTINGS, "overlap_s": 0}},
    {"settings": {**SETTINGS, "budget": {**SETTINGS["budget"], "max_frames": 32}}},
    {"settings": {**SETTINGS, "prompt_version": 4}},
])
def test_miss_after_model_precision_or_settings_change(cache: AnalysisCache, make_video,
                                                       change: dict[str, object]) -> None:
    video = make_video()
    cache.complete(make_key(video), make_analysis(2))
    cache.put_find(make_key(video), "q", [Span(1, 2)])
    other = make_key(video, **change)
    assert cache.get_analysis(other) is None
    assert cache.windows_done(other) == {}
    assert cache.get_find(other, "q") is None
    assert cache.get_analysis(make_key(video)) is not None  # the old one is still there


def test_miss_after_content_change(cache: AnalysisCache, make_video) -> None:
    video = make_video()
    cache.complete(make_key(video), make_analysis(2))
    video.write_bytes(video.read_bytes() + b"appended")
    assert cache.get_analysis(make_key(video)) is None
    assert cache.lookup(video) == []


def test_resume_after_reopening(db_path: Path, make_video) -> None:
    video = make_video()
    key = make_key(video)
    first = AnalysisCache(db_path)
    for i in range(3):
        first.put_window(key, 5, video, make_window(i))
    # No close(): an interrupted session does not get to clean up.
    second = AnalysisCache(db_path)
    done = second.windows_done(key)
    assert sorted(done) == [0, 1, 2]
    assert second.get_analysis(key) is None
    [entry] = second.entries()
    assert (entry.windows_done, entry.total_windows, entry.complete) == (3, 5, False)
    for i in range(5):
        if i not in done:
            second.put_window(key, 5, video, make_window(i))
    second.complete(key, make_analysis(5))
    assert second.get_analysis(key) is not None
    first.close()
    second.close()


def test_window_index_must_fit_the_plan(cache: AnalysisCache, make_video) -> None:
    video = make_video()
    with pytest.raises(ValueError):
        cache.put_window(make_key(video), 2, video, make_window(2))


def test_entries_lookup_clear_and_discard(cache: AnalysisCache, make_video) -> None:
    a, b = make_video("a.mp4"), make_video("b.mp4")
    cache.complete(make_key(a), make_analysis(2))
    cache.put_window(make_key(a, precision="fp32"), 4, a, make_window(0))
    cache.complete(make_key(b), make_analysis(1))
    entries = cache.entries()
    assert len(entries) == 3
    assert [e.complete for e in entries] == [True, True, False]
    assert all(e.size_bytes > 0 for e in entries)
    assert {e.key.fingerprint for e in cache.entries(fingerprint(a))} == {fingerprint(a)}
    assert len(cache.lookup(a)) == 2
    assert cache.clear(fingerprint(a)) == 2
    assert [e.key.fingerprint for e in cache.entries()] == [fingerprint(b)]
    assert cache.discard(make_key(b)) and not cache.discard(make_key(b))
    cache.complete(make_key(b), make_analysis(1))
    cache.put_find(make_key(b), "q", [Span(1, 2)])
    assert cache.clear() == 1
    assert cache.entries() == [] and cache.get_find(make_key(b), "q") is None
    with sqlite3.connect(cache.path) as raw:  # nothing left behind by the cascade
        assert raw.execute("SELECT count(*) FROM windows").fetchone() == (0,)
        assert raw.execute("SELECT count(*) FROM finds").fetchone() == (0,)


def test_stored_json_that_no_longer_decodes_is_a_miss(cache: AnalysisCache, make_video,
                                                       caplog: pytest.LogCaptureFixture) -> None:
    video = make_video()
    key = make_key(video)
    cache.complete(key, make_analysis(2))
    with sqlite3.connect(cache.path) as raw:  # what an older app version might have written
        raw.execute("UPDATE analyses SET analysis = ?", (json.dumps({"events": []}),))
        raw.execute("UPDATE windows SET result = ? WHERE idx = 1",
                    (json.dumps({"index": 1, "renamed_field": 0}),))
    assert cache.get_analysis(key) is None
    assert list(cache.windows_done(key)) == [0]
    assert "no longer decodes" in caplog.text


def test_key_for_a_missing_file_says_which(tmp_path: Path) -> None:
    from marlin_desk.core.errors import BadInput

    with pytest.raises(BadInput, match="gone.mp4"):
        CacheKey.for_file(tmp_path / "gone.mp4", "m", "r", "bf16")
