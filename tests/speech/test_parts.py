"""The parts of transcription that need no Whisper: where it runs, where chunks are cut, word
edges on the sound, the phrase span of a speech hit, and the store's v6 migration."""

from __future__ import annotations

import dataclasses
import sqlite3
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from marlin_desk.core.errors import BadInput
from marlin_desk.core.timeline import Event, WindowResult
from marlin_desk.core.transcript import Word
from marlin_desk.dev.speech import SpeechVideo, have_espeak
from marlin_desk.speech.audio import SAMPLE_RATE, frame_rms, iter_chunks, quietest_cut
from marlin_desk.speech.device import GIB, plan_device
from marlin_desk.speech.words import tighten_words
from marlin_desk.store import AnalysisCache, CacheKey, sql
from marlin_desk.store.search_index import matching_span
from marlin_desk.store.transcripts import TranscriptStore
from tests.speech.conftest import needs_speech


def test_whisper_takes_the_gpu_only_with_room_beside_marlin() -> None:
    need, marlin = int(1.5 * GIB), int(8.5 * GIB)
    assert plan_device("auto", 0, None, need, marlin).device == "cpu"
    assert plan_device("auto", 1, None, need, marlin).device == "cpu"  # free memory unknown
    tight = plan_device("auto", 1, 9 * GIB, need, marlin)
    assert (tight.device, tight.compute_type) == ("cpu", "int8") and "Marlin keeps" in tight.why
    roomy = plan_device("auto", 1, 10 * GIB, need, marlin)
    assert (roomy.device, roomy.compute_type) == ("cuda", "float16")
    assert plan_device("auto", 1, 2 * GIB, need, 0).device == "cuda"  # Marlin elsewhere
    assert plan_device("cuda", 1, 9 * GIB, need, marlin).device == "cpu"  # never Marlin's room
    assert plan_device("cpu", 1, 80 * GIB, need, 0).device == "cpu"
    with pytest.raises(BadInput):
        plan_device("cuda", 0, None, need, 0)
    with pytest.raises(BadInput):
        plan_device("tpu", 0, None, need, 0)


def test_the_cut_goes_to_the_quietest_moment_nearest_the_nominal_place() -> None:
    rng = np.random.default_rng(0)
    sound = (0.3 * rng.standard_normal(10 * SAMPLE_RATE)).astype(np.float32)
    sound[int(3.2 * SAMPLE_RATE):int(3.5 * SAMPLE_RATE)] = 0.0  # a pause 0.8 s early
    sound[int(4.9 * SAMPLE_RATE):int(5.0 * SAMPLE_RATE)] *= 0.01  # a quieter spot, not silent
    cut = quietest_cut(sound, 0, 4 * SAMPLE_RATE, 2 * SAMPLE_RATE, 0)
    assert 3.2 * SAMPLE_RATE < cut < 3.5 * SAMPLE_RATE
    silence = np.zeros(10 * SAMPLE_RATE, np.float32)  # all equal: the nominal place itself
    assert abs(quietest_cut(silence, 0, 4 * SAMPLE_RATE, SAMPLE_RATE, 0) - 4 * SAMPLE_RATE) \
        <= 0.06 * SAMPLE_RATE


@pytest.mark.skipif(not have_espeak(), reason="needs espeak-ng")
def test_chunks_of_a_real_soundtrack_are_cut_between_words(spoken: SpeechVideo) -> None:
    from marlin_desk.media.probe import probe

    info = probe(str(spoken.path))
    chunks = list(iter_chunks(str(spoken.path), info.start_time, info.duration, 4.0, 1.0))
    assert len(chunks) == round(info.duration / 4.0) and chunks[0].start == 0.0
    assert chunks[-1].end == pytest.approx(info.duration)
    for a, b in zip(chunks, chunks[1:], strict=False):
        assert a.end == b.start and len(a.samples) == round((a.end - a.start) * SAMPLE_RATE)
        assert not any(w.start < a.end < w.end for w in spoken.words), a.end  # between words
    whole = np.concatenate([c.samples for c in chunks])
    loud = np.nonzero(frame_rms(whole) > 0.01)[0]
    assert loud[0] * 0.01 == pytest.approx(spoken.words[0].start, abs=0.02)  # video time


def test_word_edges_move_onto_the_sound() -> None:
    sound = np.zeros(3 * SAMPLE_RATE, np.float32)
    t = np.arange(3 * SAMPLE_RATE) / SAMPLE_RATE
    tone = (0.5 * np.sin(2 * np.pi * 220 * t)).astype(np.float32)
    for a, b in ((0.5, 1.0), (1.2, 1.6)):  # two words with a 0.2 s pause between them
        sound[int(a * SAMPLE_RATE):int(b * SAMPLE_RATE)] = tone[int(a * SAMPLE_RATE):
                                                               int(b * SAMPLE_RATE)]
    heard = [Word(0.2, 1.3, " one"), Word(1.3, 2.2, " two")]  # Whisper-like: shared edge
    one, two = tighten_words(heard, sound, 0.0)
    assert (one.start, one.end) == pytest.approx((0.5, 1.0), abs=0.011)
    assert (two.start, two.end) == pytest.approx((1.2, 1.6), abs=0.011)
    noisy = sound + 0.2  # nothing is quiet: nothing moves
    assert tighten_words(heard, noisy, 0.0) == heard


def test_a_speech_hit_is_narrowed_to_the_words_that_match() -> None:
    spoken = [(1.0, 1.3, " Our"), (1.5, 1.9, " launch"), (2.1, 2.4, " date."),
              (3.0, 3.3, " Launch"), (3.5, 3.9, " again")]
    assert matching_span(spoken, ["launch", "date"]) == (1.5, 2.4)
    assert matching_span(spoken, ["launching"]) == (1.5, 1.9)  # stems, as the index does
    assert matching_span(spoken, ["aga"]) == (3.5, 3.9)  # the last word as a prefix
    assert matching_span(spoken, ["nothing"]) is None


def test_a_v4_cache_migrates_and_keeps_its_search(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """A file written by the release before transcripts (search rows owned by analyses only)
    gains the transcript tables and a refilled index that finds its old windows."""
    path = tmp_path / "old.sqlite3"
    released = """
        CREATE TABLE IF NOT EXISTS search_rows (
            id INTEGER PRIMARY KEY,
            key TEXT NOT NULL REFERENCES analyses(key) ON DELETE CASCADE,
            fingerprint TEXT NOT NULL, idx INTEGER NOT NULL, kind TEXT NOT NULL,
            start REAL NOT NULL, end REAL NOT NULL)"""
    with monkeypatch.context() as m:
        m.setattr(sql, "CREATE_SEARCH_ROWS", released)
        m.setattr(sql, "MIGRATIONS", sql.MIGRATIONS[:4])
        m.setattr(sql, "LATEST", 4)
        later = ("transcript", "analysis_queue", "queue_state")  # tables of v5, v6
        m.setattr(sql, "EXPECTED_COLUMNS", {k: v for k, v in sql.EXPECTED_COLUMNS.items()
                                            if not k.startswith(later)})
        m.setattr(sql, "HAS_TRANSCRIPTS", "SELECT 1")
        m.setattr(sql, "CREATE_SEARCH_ROWS_SPEECH_INDEX", "SELECT 1")
        m.setattr(sql, "SELECT_ALL_CHUNKS", "SELECT 1, 2, 3, 4 WHERE 0")
        with AnalysisCache(path) as old:
            key = CacheKey("f" * 64, "m", "r", "fp32", {})
            old.put_window(key, 1, tmp_path / "v.mp4",
                           WindowResult(0, 0.0, 10.0, "raw", True, "A harbour.",
                                        [Event(1.0, 2.0, "a ferry docks")]))
    with sqlite3.connect(path) as raw:
        assert raw.execute("PRAGMA user_version").fetchone() == (4,)
    raw.close()
    with AnalysisCache(path) as cache:
        assert cache.recovered_from is None
        assert cache.read(lambda c: c.execute("PRAGMA user_version").fetchone()) == (sql.LATEST,)
        rows = cache.read(lambda c: c.execute(
            "SELECT kind FROM search_rows r JOIN search_fts f ON f.rowid = r.id "
            "WHERE search_fts MATCH 'ferry'").fetchall())
        assert rows == [("event",)]
        store = TranscriptStore(cache)  # and takes transcripts
        tkey = dataclasses.replace(key, model_id="Systran/faster-whisper-tiny.en")
        store.put_chunk(tkey, 1, tmp_path / "v.mp4", 0, {
            "index": 0, "start": 0.0, "end": 10.0, "segments": [
                {"start": 3.0, "end": 4.0, "text": " The ferry is late.", "words": []}]})
        kinds = cache.read(lambda c: c.execute(
            "SELECT r.kind FROM search_rows r JOIN search_fts f ON f.rowid = r.id "
            "WHERE search_fts MATCH 'ferry' ORDER BY r.kind").fetchall())
        assert kinds == [("event",), ("speech",)]
        assert store.discard(tkey)
        assert cache.read(lambda c: c.execute("SELECT count(*) FROM search_fts").fetchone()) \
            == (2,)  # the window's scene and event are left
        store.put_chunk(tkey, 1, tmp_path / "v.mp4", 0, {"index": 0, "start": 0.0,
                                                         "end": 10.0, "segments": []})
        assert cache.clear(key.fingerprint) == 1  # `cache clear` takes the transcripts too
        assert store.entries() == [] and cache.entries() == []


@needs_speech
def test_transcribing_never_loads_torch(spoken: SpeechVideo) -> None:
    """Whisper here is CTranslate2: the app's transcription must not pull in torch (memory,
    start-up time), whatever faster-whisper could use."""
    code = ("import sys\nfrom marlin_desk.workflows.speech import transcribe, speech_settings\n"
            f"t = transcribe({str(spoken.path)!r}, speech_settings(), use_cache=False)\n"
            "assert t.words, t\nprint('torch' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=Path(__file__).resolve().parents[2])
    assert out.stdout.strip() == "False"
