"""Library roots and scans (files of random bytes stand in for videos: a scan reads only
bytes), and the `marlin-desk library` command's documents."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from marlin_desk.cli.main import main
from marlin_desk.core.errors import BadInput
from marlin_desk.core.media_types import dialog_filter, is_video_name
from marlin_desk.library import scan
from marlin_desk.store import AnalysisCache

from .conftest import key_for, store_windows, window


def by_name(cache: AnalysisCache) -> dict[str, scan.LibraryVideo]:  # type: ignore[name-defined]
    return {Path(v.path).name: v for v in scan.videos(cache)}


def test_folders_are_walked_for_videos_only_and_states_are_shown(
        cache: AnalysisCache, make_file: Callable[..., Path]) -> None:
    done, partial = make_file("a/done.MP4"), make_file("a/b/partial.mkv")
    make_file("a/notes.txt"), make_file("a/.hidden.mp4"), make_file("a/.cache/x.mp4")
    fresh = make_file("a/b/c/fresh.mov")
    store_windows(cache, partial, [window(0, ["a dog"])], total=3)
    key = store_windows(cache, done, [window(0, ["a cat"])])
    from marlin_desk.core.timeline import Analysis

    cache.complete(key, Analysis(20.0, "m", "", [], [window(0, ["a cat"])], str(done)))
    report = scan.add([str(done.parents[0])], cache)
    assert report.counts.new == 3 and report.hashed == 3
    videos = by_name(cache)
    assert set(videos) == {"done.MP4", "partial.mkv", "fresh.mov"}
    assert videos["done.MP4"].state == "analysed"
    assert (videos["partial.mkv"].state, videos["partial.mkv"].windows_done,
            videos["partial.mkv"].windows_total) == ("partial", 1, 3)
    assert videos["fresh.mov"].state == "not analysed" and videos["fresh.mov"].online
    assert scan.scan(cache).hashed == 0  # nothing changed: nothing hashed again
    fresh.write_bytes(os.urandom(100))  # new content at the same path: a new video
    report = scan.scan(cache)
    assert (report.hashed, report.counts.new, report.counts.offline) == (1, 1, 1)


def test_a_file_moved_between_roots_keeps_one_row_and_its_analysis(
        cache: AnalysisCache, make_file: Callable[..., Path], tmp_path: Path) -> None:
    clip = make_file("one/clip.mp4")
    (tmp_path / "videos" / "two").mkdir()
    store_windows(cache, clip, [window(0, ["a kite"])])
    scan.add([str(clip.parent), str(tmp_path / "videos" / "two")], cache)
    target = tmp_path / "videos" / "two" / "kite.mp4"
    clip.rename(target)
    counts = scan.scan(cache).counts
    assert (counts.moved, counts.offline, counts.new) == (1, 0, 0)
    (video,) = scan.videos(cache)
    assert video.path == str(target) and video.state == "partial"
    assert cache.entries(video.fingerprint)[0].video_path == str(target)  # last seen there


def test_a_missing_root_takes_its_videos_offline_and_back(
        cache: AnalysisCache, make_file: Callable[..., Path], tmp_path: Path) -> None:
    clip = make_file("drive/clip.mp4")
    scan.add([str(clip.parent)], cache)
    unplugged = tmp_path / "unplugged"
    clip.parent.rename(unplugged)
    report = scan.scan(cache)
    assert report.missing_roots == [str(clip.parent)] and report.counts.offline == 1
    assert not scan.videos(cache)[0].online
    unplugged.rename(clip.parent)
    assert scan.scan(cache).counts.back == 1 and scan.videos(cache)[0].online


def test_remove_a_root_or_one_video_keeps_the_analyses(
        cache: AnalysisCache, make_file: Callable[..., Path]) -> None:
    a, b = make_file("f/a.mp4"), make_file("f/b.mp4")
    key = store_windows(cache, a, [window(0, ["a cat"])])
    scan.add([str(a.parent)], cache)
    assert scan.remove([str(b)], cache) == 1
    scan.scan(cache)
    assert set(by_name(cache)) == {"a.mp4"}  # the removed one stays out on later scans
    assert scan.remove([str(a.parent)], cache) == 1
    assert scan.videos(cache) == [] and scan.roots(cache) != []  # b's exclusion is kept
    assert cache.windows_done(key)  # analyses are not the library's to delete
    with pytest.raises(BadInput):
        scan.remove([str(a.parent / "nothing.mp4")], cache)
    with pytest.raises(BadInput):
        scan.add([str(a.parent / "nothing")], cache)


def test_the_video_extensions_are_one_list() -> None:
    assert is_video_name("x.MTS") and is_video_name("a.b.webm") and not is_video_name("x.srt")
    assert "*.mxf" in dialog_filter() and dialog_filter().endswith(";;All files (*)")


def test_the_command_line_documents(make_file: Callable[..., Path],
                                    capsys: pytest.CaptureFixture[str]) -> None:
    """The CLI uses the default cache (MARLIN_DESK_CACHE, a test folder)."""
    clip = make_file("cli/clip.mp4")
    with AnalysisCache() as cache:
        store_windows(cache, clip, [window(0, ["a dog jumping into the pool"])])
    assert main(["library", "add", str(clip.parent), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["online"] >= 1
    assert main(["library", "list", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    mine = [v for v in listed["videos"] if v["path"] == str(clip)]
    assert mine and mine[0]["state"] == "partial" and mine[0]["online"] is True
    for query in ['dog" AND (jumps', "NOT", "-*"]:
        assert main(["library", "search", "--json", "--top", "3", "--", query]) == 0
        doc = json.loads(capsys.readouterr().out)
        assert all(r["stage"] == "index" for r in doc["results"])
    assert main(["library", "search", "jumps", "--json"]) == 0
    (hit, *_) = json.loads(capsys.readouterr().out)["results"]
    assert hit["path"] == str(clip) and hit["fingerprint"] == key_for(clip).fingerprint
    assert (hit["start"], hit["end"], hit["text"]) == (1.0, 5.0, "a dog jumping into the pool")
    assert main(["library", "reindex", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["windows"] >= 1
    assert main(["library", "remove", str(clip.parent)]) == 0
    assert main(["library", "search", "x", "--top", "0"]) == 2  # a usage error, one line
