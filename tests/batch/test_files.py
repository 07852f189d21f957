"""Batch without a model: finding the videos, naming and writing the result files."""

from __future__ import annotations

import json
import os
from pathlib import Path
from types import SimpleNamespace

import pytest

from marlin_desk.batch_analysis import (
    BatchSettings,
    discover,
    format_seconds,
    output_bases,
    place_text,
    read_queries,
    write_outputs,
)
from marlin_desk.core.errors import BadInput
from marlin_desk.core.timeline import Analysis, Event
from marlin_desk.workflows import JobSettings


def touch(path: Path, data: bytes = b"x") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def test_a_folder_is_searched_recursively_by_extension_in_natural_order(tmp_path: Path) -> None:
    lib = tmp_path / "lib"
    for name in ["Day2/C10.MP4", "Day2/C2.mov", "Day 1/b.mkv", "Day 1/a.txt", "Day 1/._b.mkv",
                 ".hidden/x.mp4", "Day 1/.c.partial.mp4", "top.webm"]:
        touch(lib / name)
    found = [os.path.relpath(p, lib) for p in discover([str(lib)])]
    assert found == ["top.webm", os.path.join("Day 1", "b.mkv"), os.path.join("Day2", "C2.mov"),
                     os.path.join("Day2", "C10.MP4")]
    assert all(os.path.isabs(p) for p in discover([str(lib)]))


def test_a_list_takes_paths_relative_to_itself_with_comments_quotes_and_folders(
        tmp_path: Path) -> None:
    odd = touch(tmp_path / "media" / "l'été \"final\" cut.mov")
    other = touch(tmp_path / "elsewhere" / "clip.dat")  # named in a list: taken as it is
    touch(tmp_path / "media" / "sub" / "z.mp4")
    listing = tmp_path / "lists" / "todo.txt"
    listing.parent.mkdir()
    listing.write_text("\ufeff# shoot day 1\n\n  ../media/l'été \"final\" cut.mov  \n"
                       f"\"{other}\"\n../media/sub\n../media/l'été \"final\" cut.mov\n"
                       "../missing.mp4\n", encoding="utf-8")
    found = discover([str(listing)])
    assert found == [str(odd.resolve()), str(other.resolve()),
                     str((tmp_path / "media" / "sub" / "z.mp4").resolve()),
                     str((tmp_path / "missing.mp4").resolve())]  # reported later, per video


def test_arguments_that_are_not_usable_are_a_plain_bad_input(tmp_path: Path) -> None:
    with pytest.raises(BadInput, match="does not exist"):
        discover([str(tmp_path / "nope")])
    (tmp_path / "empty").mkdir()
    with pytest.raises(BadInput, match="no video files"):
        discover([str(tmp_path / "empty")])
    binary = touch(tmp_path / "clip.xyz", b"\x00\x01\x02binary")
    with pytest.raises(BadInput, match="not a text list of videos"):
        discover([str(binary)])


def test_queries_file(tmp_path: Path) -> None:
    f = tmp_path / "q.txt"
    f.write_text("# what to look for\nthe dog  jumps\n\nthe dog jumps\na man opens the door\n",
                 encoding="utf-8")
    assert read_queries(f) == ["the dog jumps", "a man opens the door"]
    f.write_text("# nothing\n\n", encoding="utf-8")
    with pytest.raises(BadInput, match="no queries"):
        read_queries(f)


def test_output_names_are_unique_and_the_same_on_every_run(tmp_path: Path) -> None:
    videos = [str(tmp_path / p) for p in ["Day1/C0001.MP4", "Day2/C0001.MP4", "Day2/clip.mp4",
                                          "Day2/clip.mov", "Day2/a:b?.mkv"]]
    beside = output_bases(videos, None)
    assert beside[videos[0]] == tmp_path / "Day1" / "C0001"
    assert beside[videos[2]] == tmp_path / "Day2" / "clip.mp4"  # stems collide: keep the ext
    assert beside[videos[3]] == tmp_path / "Day2" / "clip.mov"
    assert beside[videos[4]] == tmp_path / "Day2" / "a:b?"  # beside the video: its own name
    out = output_bases(videos, str(tmp_path / "out"))
    assert out[videos[0]] == tmp_path / "out" / "Day1" / "C0001"
    assert out[videos[1]] == tmp_path / "out" / "Day2" / "C0001"
    assert out[videos[4]] == tmp_path / "out" / "Day2" / "a_b_"  # safe on any disk
    assert output_bases(videos, str(tmp_path / "out")) == out
    assert len(set(out.values())) == len(videos)


def test_place_text_is_atomic_keeps_identical_files_and_never_overwrites(tmp_path: Path) -> None:
    final = tmp_path / "res" / "clip.srt"
    assert place_text(final, "one\n") == final
    assert place_text(final, "one\n") == final  # the same result: nothing new
    second = place_text(final, "two\n")
    assert second == tmp_path / "res" / "clip (2).srt" and final.read_text() == "one\n"
    assert place_text(final, "two\n") == second  # a re-run finds its own file
    assert place_text(final, "three\n", overwrite=True) == final
    assert final.read_text() == "three\n"
    source = touch(tmp_path / "res" / "movie.srt", b"a source file")
    assert place_text(source, "result\n", overwrite=True, protected=[str(source)]) != source
    assert source.read_bytes() == b"a source file"
    assert not [p for p in (tmp_path / "res").iterdir() if ".partial" in p.name]


def test_write_outputs_makes_json_subtitles_and_chapters(tmp_path: Path) -> None:
    events = [Event(0.0, 8.0, "a dog runs on the beach"), Event(12.0, 20.0, "a man opens a door"),
              Event(25.0, 33.0, "the sun sets over the sea")]
    analysis = Analysis(duration=45.0, model="m", scene="a beach", events=events, windows=[])
    finds = [SimpleNamespace(to_json=lambda: {"query": "dog", "seconds": 1.5, "spans": [],
                                              "windows": []})]
    info = SimpleNamespace(duration=45.0, fps=25.0)
    settings = BatchSettings(job=JobSettings(model="m"), subtitles="vtt")
    outputs, notes = write_outputs(tmp_path / "clip", "/v/clip.mp4", analysis, finds, info, "m",
                                   settings)
    assert notes == []
    assert set(outputs) == {"analysis", "find", "vtt", "chapters"}
    doc = json.loads(Path(outputs["analysis"]).read_text(encoding="utf-8"))
    assert doc["video"] == "/v/clip.mp4" and len(doc["events"]) == 3
    found = json.loads(Path(outputs["find"]).read_text(encoding="utf-8"))
    assert found["queries"] == [{"query": "dog", "spans": [], "windows": []}]  # no timings
    assert Path(outputs["vtt"]).read_text(encoding="utf-8").startswith("WEBVTT")
    assert Path(outputs["chapters"]).read_text(encoding="utf-8").splitlines() == [
        "0:00 a dog runs on the beach", "0:12 a man opens a door", "0:25 the sun sets over the sea"]
    again, _ = write_outputs(tmp_path / "clip", "/v/clip.mp4", analysis, finds, info, "m",
                             settings)
    assert again == outputs  # identical results: the same files, nothing added

    short = Analysis(duration=5.0, model="m", scene="", events=[], windows=[])
    outputs, notes = write_outputs(tmp_path / "short", "/v/short.mp4", short, [],
                                   SimpleNamespace(duration=5.0, fps=25.0), "m", settings)
    assert set(outputs) == {"analysis"}
    assert any("no subtitles" in n for n in notes) and any("no chapters" in n for n in notes)


def test_format_seconds() -> None:
    assert [format_seconds(s) for s in (4.4, 65, 3725)] == ["4 s", "1 min 05 s", "1 h 02 min"]
