"""The full-text index: filled by the migration and as windows are stored, stemmed, safe for
any typed text, and rebuilt (never the whole cache set aside) when deleted or damaged."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from marlin_desk.library import scan
from marlin_desk.library.search import search_library
from marlin_desk.store import AnalysisCache
from marlin_desk.store import sql as schema
from marlin_desk.store.fts_query import match_expression

from .conftest import key_for, store_windows, window

TEXTS = {
    "dog.mp4": ["a dog jumping into the pool", "a dog shakes off water"],
    "door.mp4": ["a man opens the door", "a woman walks in"],
    "blue.mp4": ["a blue screen", "a red screen"],
}


@pytest.fixture
def library(cache: AnalysisCache, make_file: Callable[..., Path]) -> AnalysisCache:
    for name, texts in TEXTS.items():
        path = make_file(name)
        store_windows(cache, path, [window(0, texts[:1]), window(1, texts[1:])])
    scan.add([str(path.parent)], cache)
    return cache


def texts(cache: AnalysisCache, query: str) -> list[str]:
    return [h.text for h in search_library(query, cache=cache).hits]


@pytest.mark.parametrize(("query", "found"), [
    ("jumps", "a dog jumping into the pool"),  # porter: jump
    ("JUMPED into pools", "a dog jumping into the pool"),
    ("opening", "a man opens the door"),
    ("blu", "a blue screen"),  # the last word as a prefix
    ("walk", "a woman walks in"),
    ("wo", "a woman walks in"),  # a short query: two letters
    ("in", "a woman walks in"),  # only a function word: searched all the same
])
def test_stemming_and_prefix_find_other_forms_of_a_word(library: AnalysisCache, query: str,
                                                        found: str) -> None:
    assert texts(library, query)[0] == found


NASTY = ['"', '""', "'", "-", "--dog", "*", "dog*", "^dog", "AND", "OR", "NOT", "NEAR",
         "dog AND", "OR dog", "NOT dog", "dog NOT", "NEAR(dog pool)", "(", ")", "((dog", "dog))",
         "text: dog", "text:dog", ":", "dog:", "{text}: dog", "+dog", "dog -pool", '"dog pool',
         "dög", "a", "the", "🐕 dog", "\x00dog", "dog\npool", "   ", "", "%", "_", "dog_pool",
         "$$$", "x" * 5000, " ".join(["dog"] * 500)]


@pytest.mark.parametrize("query", NASTY)
def test_typed_text_that_looks_like_fts_syntax_never_raises(library: AnalysisCache,
                                                            query: str) -> None:
    hits = search_library(query, cache=library).hits
    if "dog" in query.casefold() or "dög" in query:
        assert hits and "dog" in hits[0].text, (query, hits)
    expression = match_expression(query)
    assert expression is None or all(part.startswith('"') for part in
                                     expression.replace(" OR ", " ").split())


def test_operators_are_words_not_syntax(library: AnalysisCache) -> None:
    """`dog NOT pool` must not exclude the pool: every word is searched for, so the event with
    both words ranks first."""
    assert texts(library, "dog NOT pool")[0] == "a dog jumping into the pool"


def test_a_video_without_the_word_does_not_rank_first(library: AnalysisCache) -> None:
    hits = search_library("the blue screen", cache=library).hits
    assert hits[0].text == "a blue screen" and hits[0].path.endswith("blue.mp4")
    assert all(h.path.endswith("blue.mp4") for h in hits)  # "screen" is only there


def test_windows_are_indexed_as_they_are_stored_and_unindexed_when_cleared(
        library: AnalysisCache, make_file: Callable[..., Path]) -> None:
    path = make_file("later.mp4")
    store_windows(library, path, [window(0, ["a cat sleeps on the sofa"])])
    scan.scan(library)
    assert texts(library, "sleeping cats") == ["a cat sleeps on the sofa"]
    library.put_window(key_for(path), 1, path, window(0, ["a parrot talks"]))  # redone
    assert texts(library, "sofa") == [] and texts(library, "parrot") == ["a parrot talks"]
    library.clear(key_for(path).fingerprint)
    assert texts(library, "parrot") == []
    with sqlite3.connect(library.path) as raw:  # nothing orphaned in the FTS table
        assert raw.execute("SELECT count(*) FROM search_fts WHERE search_fts MATCH 'parrot'"
                           ).fetchone()[0] == 0


def _corrupt(path: Path) -> None:
    with sqlite3.connect(path) as raw:
        raw.execute("UPDATE search_fts_data SET block = x'00ff00ff00ff' WHERE id > 1")


@pytest.mark.parametrize("damage", ["drop", "corrupt"])
def test_a_deleted_or_damaged_index_is_rebuilt_and_nothing_else_is_lost(
        library: AnalysisCache, damage: str) -> None:
    before = texts(library, "dog")
    with sqlite3.connect(library.path) as raw:
        if damage == "drop":
            raw.execute("DROP TABLE search_fts")
        else:
            _corrupt(library.path)
    # the same open cache: the search finds the damage, rebuilds and answers
    assert texts(library, "dog") == before
    assert library.recovered_from is None  # the cache itself was not set aside
    assert len(scan.videos(library)) == 3
    # and damage found at open is repaired there too
    with sqlite3.connect(library.path) as raw:
        raw.execute("DROP TABLE search_fts")
    reopened = AnalysisCache(library.path)
    try:
        assert reopened.recovered_from is None
        with sqlite3.connect(library.path) as raw:
            assert raw.execute("SELECT count(*) FROM sqlite_master WHERE name = 'search_fts'"
                               ).fetchone()[0] == 1
        assert texts(reopened, "dog") == before
    finally:
        reopened.close()


def test_a_window_stored_while_the_index_is_broken_is_kept_and_indexed_later(
        library: AnalysisCache, make_file: Callable[..., Path]) -> None:
    _corrupt(library.path)
    path = make_file("during.mp4")
    key = store_windows(library, path, [window(0, ["a horse gallops"])])
    assert set(library.windows_done(key)) == {0}  # the cache write went through
    scan.scan(library)
    assert texts(library, "galloping horse") == ["a horse gallops"]
    assert library.recovered_from is None


def test_the_migration_indexes_what_a_v2_cache_already_holds(tmp_path: Path,
                                                             make_file: Callable[..., Path]
                                                             ) -> None:
    db = tmp_path / "old" / "analyses.sqlite3"
    db.parent.mkdir()
    path = make_file("old.mp4")
    key = key_for(path)
    raw = sqlite3.connect(db, isolation_level=None)
    schema.MIGRATIONS[0](raw)
    schema.MIGRATIONS[1](raw)
    raw.execute("PRAGMA user_version = 2")
    raw.execute(f"PRAGMA application_id = {schema.APPLICATION_ID}")
    raw.execute("INSERT INTO analyses (key, fingerprint, model_id, revision, precision, "
                "settings, video_name, video_path, total_windows, created_at, updated_at) "
                "VALUES (?, ?, 'm', 'r', 'fp32', '{}', 'old.mp4', ?, 2, 1, 1)",
                (key.digest(), key.fingerprint, str(path)))
    for i, text in enumerate(["a kite flies over the beach", "waves break"]):
        raw.execute("INSERT INTO windows VALUES (?, ?, ?, 1)",
                    (key.digest(), i, json.dumps(window(i, [text]).to_json())))
    raw.execute("INSERT INTO windows VALUES (?, 2, 'not json', 1)", (key.digest(),))
    raw.close()
    cache = AnalysisCache(db)
    try:
        assert cache.recovered_from is None
        scan.add([str(path)], cache)
        assert texts(cache, "flying kites") == ["a kite flies over the beach"]
        assert scan.videos(cache)[0].state == "partial"
    finally:
        cache.close()
