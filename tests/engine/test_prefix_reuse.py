"""Answers from a window's reused prefill equal a full re-run by transformers' own generate."""

from __future__ import annotations

import pytest

from marlin_desk.core.prompts import CAPTION_PROMPT, find_prompt
from marlin_desk.core.windows import plan_windows
from marlin_desk.dev.videos import make_video
from marlin_desk.engine.session import VideoSession


@pytest.fixture(scope="module")
def session(tiny_engine, tmp_path_factory: pytest.TempPathFactory) -> VideoSession:  # noqa: ANN001
    video = make_video(tmp_path_factory.mktemp("reuse") / "v.mp4", duration=8.0, size=(128, 96),
                       segments=[(3.0, (255, 0, 0)), (5.0, (0, 0, 255))])
    return VideoSession(tiny_engine, str(video))


@pytest.mark.parametrize("prompt", [CAPTION_PROMPT, find_prompt("the screen turns blue"),
                                    find_prompt("a red square")])
def test_reuse_is_token_identical_to_a_full_run(session: VideoSession, prompt: str) -> None:
    window = plan_windows(session.info.duration)[0]
    reused = session.ask(window, prompt, max_new_tokens=24)
    baseline = session.ask_without_reuse(window, prompt, max_new_tokens=24)
    assert reused.token_ids == baseline.token_ids
    assert reused.prompt_tokens == baseline.prompt_tokens
    # the probabilities too, not only the argmax: a wrong position or a mutated cache shows here
    assert reused.mean_logprob == pytest.approx(baseline.mean_logprob, abs=1e-4)


def test_prefill_is_computed_once_and_survives_many_questions(session: VideoSession) -> None:
    window = plan_windows(session.info.duration)[0]
    first = session.prefill(window)
    answers = [session.ask(window, find_prompt(q), 8) for q in ("red", "blue", "red")]
    assert session.prefill(window) is first
    assert answers[0].token_ids == answers[2].token_ids  # the cache was not mutated
    assert answers[0].mean_logprob == pytest.approx(answers[2].mean_logprob, abs=1e-6)


def test_cancel_inside_generation(session: VideoSession) -> None:
    from marlin_desk.core.errors import Cancelled

    window = plan_windows(session.info.duration)[0]
    calls = {"n": 0}

    def stop_after_three() -> bool:
        calls["n"] += 1
        return calls["n"] > 3

    with pytest.raises(Cancelled):
        session.ask(window, CAPTION_PROMPT, 500, should_stop=stop_after_three)


def test_loop_guard_stops_degenerate_answers() -> None:
    from marlin_desk.engine.session import _looping

    assert _looping([7] * 60)
    assert _looping([1, 2, 3] * 20)
    assert not _looping(list(range(100)))
    assert not _looping([5] * 10)
