"""Shot boundaries: FFmpeg finds the hard cuts at the exact frames, once; later calls come from
the cache; clips snap to them (workflows, CLI)."""

from __future__ import annotations

import json
import subprocess
import threading
from dataclasses import dataclass
from pathlib import Path

import av
import pytest

from marlin_desk.cli.main import main
from marlin_desk.core.errors import Cancelled
from marlin_desk.core.snap import snap_span
from marlin_desk.media.ffmpeg_bin import find_ffmpeg
from marlin_desk.media.probe import probe
from marlin_desk.media.shots import ShotSettings, detect_shots
from marlin_desk.store.cache import AnalysisCache
from marlin_desk.workflows import shots as shots_flow

SIZE = "160x96"
SOURCES = ("testsrc", "color=c=red", "testsrc2", "color=c=0x2040a0")


@dataclass(frozen=True)
class Cut:
    path: Path
    cut_frames: list[int]  # index of the first frame of each new shot


def _make(path: Path, rate: str, frames: list[int], *, offset: float = 0.0) -> Cut:
    """Segments of `frames` frames each (testsrc / solid colours alternating), concatenated."""
    args = [find_ffmpeg().path, "-v", "error", "-y"]
    chains = []
    for i, _ in enumerate(frames):
        src = SOURCES[i % len(SOURCES)]
        sep = ":" if "=" in src else "="
        args += ["-f", "lavfi", "-i", f"{src}{sep}s={SIZE}:r={rate}"]
    for i, n in enumerate(frames):
        chains.append(f"[{i}:v]trim=end_frame={n},setpts=PTS-STARTPTS[v{i}]")
    joined = "".join(f"[v{i}]" for i in range(len(frames)))
    graph = ";".join(chains) + f";{joined}concat=n={len(frames)}:v=1:a=0[out]"
    args += ["-filter_complex", graph, "-map", "[out]", "-c:v", "libx264", "-preset",
             "ultrafast", "-pix_fmt", "yuv420p", "-g", "12"]
    if offset:
        args += ["-output_ts_offset", str(offset)]
    subprocess.run([*args, str(path)], check=True)
    starts, total = [], 0
    for n in frames[:-1]:
        total += n
        starts.append(total)
    return Cut(path, starts)


@pytest.fixture(scope="module")
def cuts(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Cut]:
    d = tmp_path_factory.mktemp("shots")
    return {
        "25": _make(d / "c25.mp4", "25", [20, 15, 25]),
        "2997": _make(d / "c2997.mp4", "30000/1001", [24, 18, 20]),
        "25-offset": _make(d / "c25o.mp4", "25", [13, 22, 10], offset=10.0),
        "2997-ts": _make(d / "c2997.ts", "30000/1001", [30, 17, 16], offset=10.0),
    }


def _frame_times(path: Path) -> list[float]:
    """Every decoded frame's VIDEO time (start offset removed, as probe defines it)."""
    start = probe(str(path)).start_time
    with av.open(str(path)) as c:
        return [float(f.time) - start for f in c.decode(c.streams.video[0])]


@pytest.mark.parametrize("name", ["25", "2997", "25-offset", "2997-ts"])
def test_detection_finds_exactly_the_cut_frames(cuts: dict[str, Cut], name: str) -> None:
    cut = cuts[name]
    seen: list[float] = []
    found = detect_shots(str(cut.path), on_progress=seen.append)
    times = _frame_times(cut.path)
    expected = [times[k] for k in cut.cut_frames]
    assert len(found) == len(expected), (found, expected)
    for got, want in zip(found, expected, strict=True):
        assert abs(got - want) < 1e-6
    assert seen and seen[-1] == 1.0
    if name == "25":
        assert found == pytest.approx([20 / 25, 35 / 25], abs=1e-6)
    if name == "2997":
        assert found == pytest.approx([24 * 1001 / 30000, 42 * 1001 / 30000], abs=1e-6)


def test_cached_second_call_runs_no_ffmpeg(cuts: dict[str, Cut], tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    cache = AnalysisCache(tmp_path / "cache.sqlite3")
    runs: list[float] = []
    real = shots_flow.detect_shots

    def counting(*args: object, **kwargs: object) -> list[float]:
        runs.append(1.0)
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(shots_flow, "detect_shots", counting)
    video = str(cuts["25"].path)
    first = shots_flow.find_shots(video, cache)
    again = shots_flow.find_shots(video, cache)
    assert (first.cached, again.cached, len(runs)) == (False, True, 1)
    assert again.times == first.times
    assert shots_flow.shot_boundaries(video, cache) == first.times and len(runs) == 1
    # Other settings are another key; a cleared cache forgets the cuts too.
    shots_flow.find_shots(video, cache, settings=ShotSettings(threshold=0.5))
    assert len(runs) == 2
    cache.clear()
    assert not shots_flow.find_shots(video, cache).cached and len(runs) == 3


def test_cancel_stops_ffmpeg(cuts: dict[str, Cut], tmp_path: Path) -> None:
    cache = AnalysisCache(tmp_path / "cache.sqlite3")
    with pytest.raises(Cancelled):
        shots_flow.shot_boundaries(str(cuts["2997"].path), cache, should_stop=lambda: True)
    stop = threading.Event()
    stop.set()
    with pytest.raises(Cancelled):
        shots_flow.shot_boundaries(str(cuts["2997"].path), cache, should_stop=stop)
    fp = shots_flow.fingerprint(str(cuts["2997"].path))
    assert cache.get_shots(fp, ShotSettings().to_json()) is None  # nothing half-stored


def test_spans_off_by_0_4_s_snap_to_the_exact_cut_frames(cuts: dict[str, Cut]) -> None:
    found = detect_shots(str(cuts["2997"].path))
    a, b = found
    assert snap_span(a - 0.4, b + 0.4, found, 1.0) == (a, b, True, True)
    # Tolerance respected: 0.4 s away is out of reach of 0.39 s.
    assert snap_span(a - 0.4, b + 0.4, found, 0.39) == (a - 0.4, b + 0.4, False, False)
    assert snap_span(a - 0.4, b - 0.4, found, 0.15) == (a - 0.4, b - 0.4, False, False)
    assert snap_span(a + 0.1, b + 0.4, found, 0.2) == (a, b + 0.4, True, False)


def test_cli_shots_and_export_snapped(cuts: dict[str, Cut], tmp_path: Path, capsys) -> None:
    video = str(cuts["25"].path)
    assert main(["shots", video, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["cuts"] == [0.8, 1.4] and doc["count"] == 2 and "seconds" in doc
    assert main(["shots", video, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["cached"] is True
    assert main(["shots", video]) == 0
    assert capsys.readouterr().out.split() == ["0.800000", "1.400000"]

    rc = main(["export", video, "--clip", "0.4-1.8", "--clip", "0.1-0.3", "--snap-to-shots",
               "--snap-tolerance", "0.4", "--mode", "exact", "--out", str(tmp_path), "--json"])
    assert rc == 0
    out = json.loads(capsys.readouterr().out)
    first, second = out["snap"]["clips"]
    assert (first["start"], first["end"]) == (0.8, 1.4)
    assert (first["from_start"], first["from_end"]) == (0.4, 1.8)
    assert first["snapped_start"] and first["snapped_end"]
    assert not second["snapped_start"] and not second["snapped_end"]
    assert out["snap"]["shots"]["cached"] is True and out["snap"]["tolerance"] == 0.4
    clip = out["clips"][0]
    assert clip["status"] == "done"
    assert abs(probe(clip["path"]).duration - 0.6) < 0.03
