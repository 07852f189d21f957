"""Kills, concurrent writers and damaged files: the cache keeps what was committed and never
stops the app from starting."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from marlin_desk.store import AnalysisCache, CacheKey
from marlin_desk.store import sql as schema

from .conftest import make_analysis, make_key, make_window

REPO = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
KEY = CacheKey("f" * 64, "marlin/Marlin-2B", "r1", "bf16", {"window_s": 120})

# Writes windows as fast as it can, printing each index once put_window has returned.
WRITER = textwrap.dedent("""
    import sys
    from marlin_desk.store import AnalysisCache, CacheKey
    from tests.store.conftest import make_window
    cache = AnalysisCache(sys.argv[1])
    key = CacheKey("f" * 64, "marlin/Marlin-2B", "r1", "bf16", {"window_s": 120})
    start = len(cache.windows_done(key))
    for i in range(start, 100_000):
        cache.put_window(key, 100_000, "/videos/long.mp4", make_window(i, raw_size=20_000))
        print(i, flush=True)
""")


def _run_until_killed(db: Path, script: Path, acks: int) -> int:
    """Start a writer, SIGKILL it after `acks` committed windows; return the last acknowledged."""
    proc = subprocess.Popen([sys.executable, str(script), str(db)], cwd=REPO, env=ENV,
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    last = -1
    for _ in range(acks):
        line = proc.stdout.readline()
        assert line, "the writer died on its own"
        last = int(line)
    os.kill(proc.pid, signal.SIGKILL)  # mid-write: it never stops between windows
    proc.wait(timeout=30)
    proc.stdout.close()
    assert proc.returncode == -signal.SIGKILL
    return last


@pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL")
def test_kill_during_writing_keeps_every_committed_window(tmp_path: Path) -> None:
    db = tmp_path / "analyses.sqlite3"
    script = tmp_path / "writer.py"
    script.write_text(WRITER)
    for acks in (25, 40, 10):  # three kills, each run resuming where the last one stopped
        last = _run_until_killed(db, script, acks)
        cache = AnalysisCache(db)
        assert cache.recovered_from is None
        done = cache.windows_done(KEY)
        assert last in done
        assert sorted(done) == list(range(len(done)))  # no hole: nothing half-written
        assert done[last].to_json() == make_window(last, raw_size=20_000).to_json()
        with sqlite3.connect(db) as raw:
            assert raw.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        cache.close()


def test_threads_write_at_once_without_lock_errors(cache: AnalysisCache) -> None:
    threads_n, windows_n = 8, 40
    barrier = threading.Barrier(threads_n)
    errors: list[BaseException] = []
    connections: dict[int, int] = {}

    def work(t: int) -> None:
        try:
            mine = CacheKey(f"{t:064x}", "m", "r", "bf16", {})
            shared = CacheKey("e" * 64, "m", "r", "bf16", {})
            barrier.wait()
            for i in range(windows_n):
                cache.put_window(mine, windows_n, f"/v/{t}.mp4", make_window(i))
                cache.put_window(shared, threads_n * windows_n, "/v/shared.mp4",
                                 make_window(t * windows_n + i))
                cache.windows_done(mine)
            cache.complete(mine, make_analysis(2))
            connections[t] = id(cache._conn())
        except BaseException as exc:  # noqa: BLE001 - reported by the main thread
            errors.append(exc)

    workers = [threading.Thread(target=work, args=(t,)) for t in range(threads_n)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert errors == []
    assert len(set(connections.values())) == threads_n  # one connection per thread
    assert len(cache.windows_done(CacheKey("e" * 64, "m", "r", "bf16", {}))) == (
        threads_n * windows_n)
    assert sum(e.complete for e in cache.entries()) == threads_n


def test_processes_write_at_once_without_lock_errors(tmp_path: Path) -> None:
    db = tmp_path / "analyses.sqlite3"
    script = tmp_path / "writer.py"
    script.write_text(textwrap.dedent("""
        import sys
        from marlin_desk.store import AnalysisCache, CacheKey
        from tests.store.conftest import make_window
        cache = AnalysisCache(sys.argv[1])
        key = CacheKey(sys.argv[2] * 64, "m", "r", "bf16", {})
        for i in range(60):
            cache.put_window(key, 60, "/v/a.mp4", make_window(i))
            cache.entries()
    """))
    procs = [subprocess.Popen([sys.executable, str(script), str(db), c], cwd=REPO, env=ENV,
                              stderr=subprocess.PIPE, text=True) for c in "abcd"]
    for p in procs:
        _, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
    with AnalysisCache(db) as cache:
        assert [e.windows_done for e in cache.entries()] == [60] * 4


def test_connections_are_wal_with_a_busy_timeout(cache: AnalysisCache) -> None:
    conn = cache._conn()
    assert conn.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    assert conn.execute("PRAGMA busy_timeout").fetchone()[0] >= 5000
    assert conn.execute("PRAGMA foreign_keys").fetchone() == (1,)


# ---- damaged files ----------------------------------------------------------------------------

def _filled(db: Path, n: int = 150) -> None:
    """A real cache with enough pages that cutting it loses table pages, checkpointed and closed
    so that everything is in the main file."""
    with AnalysisCache(db) as cache:
        for i in range(n):
            cache.put_window(CacheKey(f"{i:064x}", "m", "r", "bf16", {}), 1, "/v/a.mp4",
                             make_window(0, raw_size=500))
    assert not Path(f"{db}-wal").exists()


def _assert_recovered(db: Path, original: bytes, caplog: pytest.LogCaptureFixture,
                      reason: str) -> None:
    cache = AnalysisCache(db)
    assert cache.recovered_from is not None
    assert cache.recovered_from.name.startswith("analyses.sqlite3.corrupt-")
    assert cache.recovered_from.read_bytes() == original  # the evidence is kept as it was
    assert reason in (cache.recovery_reason or "")
    assert "moved it to" in caplog.text
    assert cache.entries() == []
    cache.complete(make_key(cache.recovered_from), make_analysis(1))  # and it works again
    assert len(cache.entries()) == 1
    cache.close()
    assert AnalysisCache(db).recovered_from is None  # the new file is fine next time


@pytest.mark.parametrize("garbage", [os.urandom(5000), b"not a database at all\n" * 10,
                                     b"SQLite format 3\x00" + os.urandom(4000)])
def test_garbage_file_is_moved_aside(db_path: Path, garbage: bytes,
                                     caplog: pytest.LogCaptureFixture) -> None:
    db_path.parent.mkdir(parents=True)
    db_path.write_bytes(garbage)
    _assert_recovered(db_path, garbage, caplog, "unreadable")


@pytest.mark.parametrize("fraction", [0.5, 0.9, 0.3, 0.001])
def test_truncated_file_is_moved_aside(db_path: Path, fraction: float,
                                       caplog: pytest.LogCaptureFixture) -> None:
    _filled(db_path)
    data = db_path.read_bytes()
    cut = data[: max(1, int(len(data) * fraction))]
    db_path.write_bytes(cut)
    _assert_recovered(db_path, cut, caplog, "")


def test_foreign_database_is_moved_aside(db_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    db_path.parent.mkdir(parents=True)
    with sqlite3.connect(db_path) as raw:
        raw.execute("CREATE TABLE photos (id INTEGER PRIMARY KEY, name TEXT)")
    raw.close()
    _assert_recovered(db_path, db_path.read_bytes(), caplog, "not an analysis cache")


def test_other_programs_database_is_moved_aside(db_path: Path,
                                                caplog: pytest.LogCaptureFixture) -> None:
    db_path.parent.mkdir(parents=True)
    with sqlite3.connect(db_path) as raw:
        raw.execute("PRAGMA application_id = 1234")
        raw.execute("PRAGMA user_version = 1")
    raw.close()
    _assert_recovered(db_path, db_path.read_bytes(), caplog, "another program")


def test_newer_schema_is_moved_aside(db_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    AnalysisCache(db_path).close()
    with sqlite3.connect(db_path) as raw:
        raw.execute(f"PRAGMA user_version = {schema.LATEST + 1}")
    raw.close()
    _assert_recovered(db_path, db_path.read_bytes(), caplog, "newer")


def test_schema_that_lies_about_its_version_is_moved_aside(
        db_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    AnalysisCache(db_path).close()
    with sqlite3.connect(db_path) as raw:
        raw.execute("DROP TABLE finds")
        raw.execute("CREATE TABLE finds (key TEXT, query TEXT)")
    raw.close()
    _assert_recovered(db_path, db_path.read_bytes(), caplog, "lacks finds columns")


def test_damaged_database_with_a_wal_is_rebuilt_clean(db_path: Path) -> None:
    """A crash snapshot: old pages in the main file, newer ones in the WAL, then damage. Nothing
    of the old WAL may end up in the new database."""
    _filled(db_path)
    with AnalysisCache(db_path) as cache:
        for i in range(3):  # these frames stay in the WAL
            cache.put_window(KEY, 3, "/v/a.mp4", make_window(i))
        snapshot = {suffix: Path(f"{db_path}{suffix}").read_bytes() for suffix in ("", "-wal")}
    for suffix, data in snapshot.items():
        Path(f"{db_path}{suffix}").write_bytes(data)
    data = bytearray(snapshot[""])
    data[8192:] = os.urandom(len(data) - 8192)
    db_path.write_bytes(bytes(data))
    cache = AnalysisCache(db_path)
    assert cache.recovered_from is not None
    # the damage is found by the integrity check, or earlier when it hits the schema's pages
    reason = cache.recovery_reason or ""
    assert "integrity check (" in reason or "unreadable (database disk image" in reason, reason
    assert "\n" not in reason  # one line, fit for a status bar
    assert cache.entries() == [] and cache.windows_done(KEY) == {}
    assert cache._conn().execute("PRAGMA integrity_check").fetchone() == ("ok",)
    cache.close()


def test_damage_found_mid_session_is_recovered(db_path: Path, make_video,
                                               caplog: pytest.LogCaptureFixture) -> None:
    video = make_video()
    _filled(db_path)
    cache = AnalysisCache(db_path)
    assert cache.recovered_from is None
    cache.close()  # the next call reconnects without the opening checks
    data = bytearray(db_path.read_bytes())
    data[4096:] = os.urandom(len(data) - 4096)  # every page but the first is garbage
    db_path.write_bytes(bytes(data))
    cache.put_window(make_key(video), 2, video, make_window(0))  # lands in the rebuilt file
    assert cache.recovered_from is not None
    assert "became unreadable" in (cache.recovery_reason or "")
    assert list(cache.windows_done(make_key(video))) == [0]
    assert len(cache.entries()) == 1
    cache.close()


def test_two_recoveries_in_one_second_keep_both_files(db_path: Path) -> None:
    db_path.parent.mkdir(parents=True)
    moved = set()
    for _ in range(2):
        db_path.write_bytes(os.urandom(3000))
        cache = AnalysisCache(db_path)
        assert cache.recovered_from is not None
        moved.add(cache.recovered_from)
        cache.close()
    assert len(moved) == 2 and all(p.exists() for p in moved)
