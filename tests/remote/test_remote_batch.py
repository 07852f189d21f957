"""Batch analysis of a folder through the real vLLM server: several videos in flight, a bad
file skipped, and a server killed mid-batch (a plain error, finished videos kept, a re-run after
the restart completes the rest)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from marlin_desk.batch_analysis import BatchSettings, discover, run_batch
from marlin_desk.dev.videos import make_video
from marlin_desk.dev.vllm_server import VllmServer
from marlin_desk.store.cache import AnalysisCache
from marlin_desk.workflows import JobSettings, ServerSettings

COLOURS = [(220, 30, 30), (30, 30, 220), (30, 200, 30), (230, 230, 40)]


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    shoot = tmp_path / "shoot «day 1»"
    shoot.mkdir()
    for i, colour in enumerate(COLOURS):
        make_video(shoot / f"clip {i}.mp4", size=(160, 96), fps=25,
                   segments=[(2.0, colour), (2.0, COLOURS[(i + 1) % 4])])
    (shoot / "broken.mp4").write_bytes(b"not a video at all")
    return shoot


def batch_settings(server: VllmServer, videos_at_once: int) -> BatchSettings:
    job = JobSettings(model=str(server.model_dir), window=4.0, backend="remote",
                      caption_tokens=16,
                      server=ServerSettings(url=server.url, windows_in_flight=2, timeout=60))
    return BatchSettings(job=job, queries=["the blue screen"], subtitles="srt",
                         videos_at_once=videos_at_once)


def test_a_folder_through_the_server(vllm_server: VllmServer, folder: Path,
                                     tmp_path: Path) -> None:
    cache = AnalysisCache(tmp_path / "cache.db")
    report = run_batch(discover([str(folder)]), batch_settings(vllm_server, 3), cache=cache)
    statuses = {Path(r.video).name: r.status for r in report.results}
    assert statuses == {"broken.mp4": "failed", "clip 0.mp4": "done", "clip 1.mp4": "done",
                        "clip 2.mp4": "done", "clip 3.mp4": "done"}
    assert report.videos_at_once == 3 and report.engine["backend"] == "remote"
    for r in report.results:
        if r.status == "done":
            doc = json.loads(Path(r.outputs["analysis"]).read_text())
            assert len(doc["windows"]) == 1 and doc["windows"][0]["prompt_tokens"] > 0
            assert Path(r.outputs["find"]).is_file()


def test_a_server_killed_mid_batch_then_resumed(vllm_server: VllmServer, folder: Path,
                                                tmp_path: Path) -> None:
    cache = AnalysisCache(tmp_path / "cache.db")
    videos = [v for v in discover([str(folder)]) if "broken" not in v]
    settings = batch_settings(vllm_server, 1)

    def kill_after_first(index: int, result: object) -> None:
        if getattr(result, "status", "") == "done" and vllm_server.is_running():
            vllm_server.kill()

    try:
        report = run_batch(videos, settings, cache=cache, on_result=kill_after_first)
        assert report.fatal and "cannot reach the server" in report.fatal
        assert report.fatal_code == 3
        done = [r for r in report.results if r.status == "done"]
        assert len(done) == 1 and Path(done[0].outputs["analysis"]).is_file()
        assert all(r.status in {"pending", "failed"} for r in report.results if r not in done)
    finally:
        vllm_server.restart()
    again = run_batch(videos, settings, cache=cache)
    assert [r.status for r in again.results].count("cached") == 1
    assert all(r.status in {"done", "cached"} for r in again.results)
    assert not again.fatal
