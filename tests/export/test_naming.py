"""File names: template fields, safe on every OS, never clobbering."""

from __future__ import annotations

import unicodedata
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from marlin_desk.core.errors import BadInput
from marlin_desk.media.naming import (
    place_without_overwrite,
    render_name,
    safe_filename,
    slugify,
    temp_name,
    time_for_name,
)


def test_default_template() -> None:
    name = render_name("{video}_{index:02d}_{start}-{end}_{slug}", video="/x/Beach day.mov",
                       index=3, description="Dog runs into the sea!", start=72.5, end=80)
    assert name == "Beach day_03_01m12.500s-01m20.000s_dog-runs-into-the-sea.mp4"


def test_empty_slug_leaves_no_dangling_separator() -> None:
    name = render_name("{video}_{index:02d}_{slug}", video="a.mp4", index=1, start=0, end=1)
    assert name == "a_01.mp4"


def test_separators_in_the_video_name_are_kept() -> None:
    name = render_name("{video}_{slug}", video="My - Video..final.mov", index=1, start=0, end=1)
    assert name == "My - Video..final.mp4"


def test_unknown_field_is_a_plain_error() -> None:
    with pytest.raises(BadInput, match="unknown field"):
        render_name("{video}_{colour}", video="a.mp4", index=1, start=0, end=1)


def test_times_in_names() -> None:
    assert time_for_name(3725.25) == "1h02m05.250s"
    assert time_for_name(0) == "00m00.000s"


@pytest.mark.parametrize(("raw", "safe"), [
    ('a<b>c:d"e/f\\g|h?i*j.mp4', "a_b_c_d_e_f_g_h_i_j.mp4"),
    ("CON.mp4", "_CON.mp4"), ("nul", "_nul"), ("trailing. . ", "trailing"),
    ("-rf.mp4", "rf.mp4"), ("tab\there.mp4", "tab here.mp4"), ("", "clip"),
])
def test_safe_filename(raw: str, safe: str) -> None:
    assert safe_filename(raw) == safe


@given(st.text(min_size=0, max_size=300))
def test_any_text_becomes_a_valid_name(text: str) -> None:
    name = safe_filename(text + ".mp4")
    assert name.endswith(".mp4") and len(name.encode("utf-8")) <= 200
    assert not any(c in name for c in '<>:"/\\|?*') and all(ord(c) >= 32 for c in name)
    assert name == unicodedata.normalize("NFC", name) and not name.startswith("-")
    assert not name[:-4].endswith((" ", "."))


def test_slug_keeps_letters_of_every_script() -> None:
    assert slugify("Ünïcode 日本 — a/b") == "ünïcode-日本-a-b"
    assert len(slugify("word " * 30)) <= 40


def test_place_without_overwrite(tmp_path: Path) -> None:
    final = tmp_path / "clip.mp4"
    final.write_text("old")
    tmp = temp_name(final, "abcd")
    assert tmp.name.startswith(".") and tmp.parent == tmp_path
    tmp.write_text("new")
    placed = place_without_overwrite(tmp, final)
    assert placed == tmp_path / "clip (2).mp4" and placed.read_text() == "new"
    assert final.read_text() == "old" and not tmp.exists()
