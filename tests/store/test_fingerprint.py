"""The fingerprint follows content, not paths; the key changes with whatever changes answers."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from marlin_desk.core.errors import BadInput
from marlin_desk.store import CacheKey, fingerprint
from marlin_desk.store.fingerprint import CHUNK

MIB = 1024 * 1024


def test_same_content_anywhere_same_fingerprint(make_video, tmp_path: Path) -> None:
    video = make_video("a.mp4")
    before = fingerprint(video)
    moved = tmp_path / "elsewhere" / "renamed.mov"
    moved.parent.mkdir()
    shutil.move(video, moved)
    assert fingerprint(moved) == before
    copy = tmp_path / "copy.mp4"
    shutil.copy(moved, copy)
    assert fingerprint(copy) == before
    assert len(before) == 64 and int(before, 16) >= 0


@pytest.mark.parametrize("offset", [0, MIB - 1, -1, -MIB])
def test_a_change_at_either_end_changes_it(make_video, offset: int) -> None:
    video = make_video(size=5 * MIB)
    before = fingerprint(video)
    data = bytearray(video.read_bytes())
    data[offset] ^= 0xFF
    video.write_bytes(bytes(data))
    assert fingerprint(video) != before


def test_a_size_change_changes_it(make_video) -> None:
    video = make_video(size=5 * MIB)
    before = fingerprint(video)
    data = video.read_bytes()
    # Same head and tail bytes, one byte fewer in the middle.
    video.write_bytes(data[: 2 * MIB] + data[2 * MIB + 1:])
    assert fingerprint(video) != before


def test_same_size_edit_in_the_middle_is_the_documented_blind_spot(make_video) -> None:
    video = make_video(size=5 * MIB)
    before = fingerprint(video)
    data = bytearray(video.read_bytes())
    data[2 * MIB] ^= 0xFF
    video.write_bytes(bytes(data))
    assert fingerprint(video) == before  # accepted trade-off, see fingerprint.py


@pytest.mark.parametrize("size", [0, 1, CHUNK, CHUNK + 1, 2 * CHUNK - 1, 2 * CHUNK])
def test_small_files_are_hashed_whole(tmp_path: Path, size: int) -> None:
    path = tmp_path / "small.bin"
    data = bytearray(os.urandom(size))
    path.write_bytes(bytes(data))
    before = fingerprint(path)
    if size:
        data[size // 2] ^= 0xFF  # any byte of a file up to two MiB is covered
        path.write_bytes(bytes(data))
        assert fingerprint(path) != before


def test_unreadable_file_is_bad_input(tmp_path: Path) -> None:
    with pytest.raises(BadInput, match="missing.mp4"):
        fingerprint(tmp_path / "missing.mp4")


def _key(**changes: object) -> CacheKey:
    parts: dict[str, object] = {"fingerprint": "ab" * 32, "model_id": "marlin/Marlin-2B",
                                "revision": "r1", "precision": "bf16",
                                "settings": {"window_s": 120, "budget": {"fps": 1.0}}}
    parts.update(changes)
    return CacheKey(**parts)  # type: ignore[arg-type]


def test_digest_is_stable_across_runs_and_versions() -> None:
    # A fixed value: if this changes, every user's cache silently misses.
    assert _key().digest() == GOLDEN_DIGEST


@pytest.mark.parametrize("change", [
    {"fingerprint": "cd" * 32}, {"model_id": "marlin/Marlin-7B"}, {"revision": "r2"},
    {"precision": "fp16"}, {"settings": {"window_s": 60, "budget": {"fps": 1.0}}},
    {"settings": {"window_s": 120, "budget": {"fps": 2.0}}},
    {"settings": {"window_s": 120, "budget": {"fps": 1.0}, "prompt_version": 2}},
])
def test_every_part_of_the_key_matters(change: dict[str, object]) -> None:
    assert _key(**change).digest() != _key().digest()


def test_integral_floats_and_ints_are_one_setting() -> None:
    assert (_key(settings={"window_s": 120.0, "budget": {"fps": 1}}).digest()
            == _key().digest())


def test_key_copies_its_settings() -> None:
    settings = {"window_s": 120, "budget": {"fps": 1.0}}
    key = _key(settings=settings)
    settings["budget"]["fps"] = 4.0  # type: ignore[index]
    assert key.digest() == _key().digest()
    assert hash(key) == hash(_key())


@pytest.mark.parametrize("bad", [{"x": float("nan")}, {"x": object()}, {1: "a"}])
def test_settings_must_be_json_data(bad: dict[object, object]) -> None:
    with pytest.raises((TypeError, ValueError)):
        _key(settings=bad)


@given(st.dictionaries(st.text(max_size=8),
                       st.one_of(st.integers(), st.text(max_size=8), st.booleans(), st.none(),
                                 st.floats(allow_nan=False, allow_infinity=False)),
                       max_size=8))
def test_digest_ignores_key_order(settings: dict[str, object]) -> None:
    reordered = dict(reversed(list(settings.items())))
    assert _key(settings=settings).digest() == _key(settings=reordered).digest()


GOLDEN_DIGEST = "162855172c1b15647ad88834add4a32a296bf509478524c914a46ee244e0f07c"
