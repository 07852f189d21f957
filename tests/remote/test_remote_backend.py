"""The remote backend against a real vLLM server (tests/remote/conftest.py) serving the tiny
model: analyse and find through workflows and the CLI, the prompt the server saw (token counts
equal to the local backend's), the budget check, concurrency, cancel and resume, and the
errors a user meets. The tiny model's weights are random, so the answers' content is noise:
these check the plumbing and the contract, and that server and app agree on the prompt."""

from __future__ import annotations

import dataclasses
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

from marlin_desk.core.errors import BadInput, Cancelled, ModelUnavailable
from marlin_desk.dev.videos import make_video
from marlin_desk.dev.vllm_server import VllmServer
from marlin_desk.remote import budget as remote_budget
from marlin_desk.store.cache import AnalysisCache
from marlin_desk.workflows import JobSettings, ServerSettings, analyze, find, open_video

CAPTION_TOKENS = 24  # random weights never stop by themselves: keep answers short
COLOURS = [(3.0, (220, 30, 30)), (3.0, (30, 30, 220)), (3.0, (30, 200, 30)),
           (3.0, (230, 230, 40))]


@pytest.fixture(scope="module")
def video(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """12 s, four colours, at an odd size and 25 fps: windows of 6 s give two windows."""
    folder = tmp_path_factory.mktemp("remote videos")
    return make_video(folder / "Remote clip «1».mp4", segments=COLOURS, size=(200, 120), fps=25)


def remote_settings(server: VllmServer, *, window: float = 6.0, concurrency: int = 4,
                    served: str | None = None) -> JobSettings:
    return JobSettings(model=str(server.model_dir), window=window, backend="remote",
                       caption_tokens=CAPTION_TOKENS,
                       server=ServerSettings(url=server.url, served_model=served,
                                             windows_in_flight=concurrency))


def test_analyze_through_the_server(vllm_server: VllmServer, video: Path,
                                    tmp_path: Path) -> None:
    cache = AnalysisCache(tmp_path / "cache.db")
    bench = open_video(str(video), remote_settings(vllm_server), cache=cache)
    streamed: list[int] = []
    analysis, cached = analyze(bench, on_window=lambda r: streamed.append(r.index))
    assert not cached and sorted(streamed) == [0, 1]
    assert [(w.start, w.end) for w in analysis.windows] == [(0.0, 6.0), (6.0, 12.0)]
    for w in analysis.windows:
        assert w.prompt_tokens > w.video_tokens > 0  # usage came back
        assert w.frames == 12 and w.frame_times[0] >= w.start
        assert 0 < w.new_tokens <= CAPTION_TOKENS
    assert bench.engine.describe()["backend"] == "remote"
    assert bench.key.precision == "remote" and bench.key.model_id == "remote:marlin-tiny"
    assert not bench.session.notes, bench.session.notes  # the server honoured the budget
    # a second open is answered by the cache, without the server being asked
    again = open_video(str(video), remote_settings(vllm_server, served="marlin-tiny"),
                       cache=cache)
    analysis2, cached2 = analyze(again)
    assert cached2 and again.engine is None
    assert [w.raw for w in analysis2.windows] == [w.raw for w in analysis.windows]


def test_the_server_sees_the_prompt_the_local_model_sees(vllm_server: VllmServer,
                                                          video: Path) -> None:
    """Same frames, same template, same budget: the same number of prompt tokens per window
    (the server's chat template renders the video as the bare pad token, as the app does)."""
    remote = open_video(str(video), remote_settings(vllm_server), use_cache=False)
    remote_analysis, _ = analyze(remote)
    local_settings = JobSettings(model=str(vllm_server.model_dir), window=6.0, device="cpu",
                                 backend="fp32", caption_tokens=4)
    local = open_video(str(video), local_settings, use_cache=False)
    local_analysis, _ = analyze(local)
    assert [w.prompt_tokens for w in remote_analysis.windows] == \
        [w.prompt_tokens for w in local_analysis.windows]
    assert [w.video_tokens for w in remote_analysis.windows] == \
        [w.video_tokens for w in local_analysis.windows]


def test_find_scores_from_the_servers_logprobs(vllm_server: VllmServer, video: Path) -> None:
    bench = open_video(str(video), remote_settings(vllm_server), use_cache=False)
    [result] = find(bench, ["the blue screen"])
    assert [w["window"] for w in result.windows] == [0, 1]
    for w in result.windows:
        assert math.isfinite(w["score"]) and w["score"] <= 0.0
    for span in result.spans:
        assert 0.0 <= span.start <= span.end <= 12.0 + 1e-6


def test_concurrency_gives_the_same_windows(vllm_server: VllmServer, video: Path) -> None:
    one = open_video(str(video), remote_settings(vllm_server, window=3.0, concurrency=1),
                     use_cache=False)
    four = open_video(str(video), remote_settings(vllm_server, window=3.0, concurrency=4),
                      use_cache=False)
    a, _ = analyze(one)
    b, _ = analyze(four)
    assert [w.index for w in b.windows] == [0, 1, 2, 3]  # in plan order whatever the arrival
    assert [w.prompt_tokens for w in a.windows] == [w.prompt_tokens for w in b.windows]


def test_cancel_keeps_finished_windows_and_resume_completes(vllm_server: VllmServer,
                                                            video: Path, tmp_path: Path) -> None:
    cache = AnalysisCache(tmp_path / "cache.db")
    settings = remote_settings(vllm_server, window=3.0, concurrency=1)
    bench = open_video(str(video), settings, cache=cache)
    done: list[int] = []
    with pytest.raises(Cancelled):
        analyze(bench, on_window=lambda r: done.append(r.index),
                should_stop=lambda: len(done) >= 2)
    assert sorted(cache.windows_done(bench.key)) == [0, 1]
    resumed = open_video(str(video), settings, cache=cache)
    seen: list[int] = []
    analysis, cached = analyze(resumed, on_window=lambda r: seen.append(r.index))
    assert not cached and len(analysis.windows) == 4
    assert seen[:2] == [0, 1]  # replayed from the cache first, then the rest answered


def test_a_wrong_budget_on_the_server_is_reported(vllm_server: VllmServer, video: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """If the server samples or scales differently from the model's budget, the prompt token
    count shows it and the user is told (here: a request that asks for a quarter of the
    pixels)."""
    real = remote_budget.request_kwargs

    def shrunk(budget, times, **options):  # noqa: ANN001, ANN003, ANN202 - as the real one
        kwargs = real(budget, times, **options)
        size = kwargs["mm_processor_kwargs"]["size"]
        size["longest_edge"] = max(1, size["longest_edge"] // 16)
        size["shortest_edge"] = 1
        return kwargs

    monkeypatch.setattr("marlin_desk.remote.session.request_kwargs", shrunk)
    bench = open_video(str(video), remote_settings(vllm_server), use_cache=False)
    analyze(bench)
    assert any("did not apply the model's video budget" in n for n in bench.session.notes)


def test_context_too_long_is_a_plain_bad_input(vllm_server: VllmServer, video: Path) -> None:
    settings = dataclasses.replace(remote_settings(vllm_server), caption_tokens=10_000_000)
    bench = open_video(str(video), settings, use_cache=False)
    with pytest.raises(BadInput, match="max-model-len|shorter --window|maximum"):
        analyze(bench)


def test_a_model_the_server_does_not_serve(vllm_server: VllmServer, video: Path) -> None:
    with pytest.raises(ModelUnavailable, match="does not serve 'marlin-7b'.*marlin-tiny"):
        bench = open_video(str(video), remote_settings(vllm_server, served="marlin-7b"),
                           use_cache=False)
        analyze(bench)


def test_cli_analyze_and_find_json(vllm_server: VllmServer, video: Path, tmp_path: Path) -> None:
    env = {"MARLIN_DESK_CACHE": str(tmp_path / "cache"), "HF_HUB_OFFLINE": "1"}
    base = [sys.executable, "-m", "marlin_desk"]
    run = subprocess.run([*base, "find", str(video), "the red screen", "--url", vllm_server.url,
                          "--window", "6", "--json"], capture_output=True, text=True,
                         env={**_env(), **env}, timeout=600)
    assert run.returncode == 0, run.stderr
    doc = json.loads(run.stdout)
    assert doc["engine"]["backend"] == "remote" and doc["engine"]["url"] == vllm_server.url
    assert doc["engine"]["served_model"] == "marlin-tiny"
    assert len(doc["queries"][0]["windows"]) == 2


def test_cli_server_down_is_exit_3(tmp_path: Path, video: Path) -> None:
    from marlin_desk.dev.vllm_server import free_port

    url = f"http://127.0.0.1:{free_port()}/v1"
    run = subprocess.run([sys.executable, "-m", "marlin_desk", "analyze", str(video),
                          "--backend", "remote", "--url", url, "--timeout", "5"],
                         capture_output=True, text=True, timeout=300,
                         env={**_env(), "MARLIN_DESK_CACHE": str(tmp_path)})
    assert run.returncode == 3, run.stderr
    assert "cannot reach the server" in run.stderr and "is it running" in run.stderr
    assert "Traceback" not in run.stderr


def _env() -> dict[str, str]:
    return dict(os.environ)
