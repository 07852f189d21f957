"""The desktop app with the remote backend: Preferences name the server, the model "loads" by
connecting, and an analysis and a query run through the real vLLM server off the GUI thread."""

from __future__ import annotations

from pathlib import Path

from marlin_desk.dev.videos import make_video
from marlin_desk.dev.vllm_server import VllmServer, free_port
from tests.gui.conftest import make_window, open_and_wait, settings  # noqa: F401 - fixtures


def test_the_app_analyses_and_searches_through_a_server(qtbot, make_window,  # noqa: F811
                                                        settings, tmp_path: Path,  # noqa: F811
                                                        vllm_server: VllmServer) -> None:
    video = make_video(tmp_path / "gui remote.mp4", size=(320, 192), fps=25,
                       segments=[(2.0, (200, 30, 30)), (2.0, (30, 60, 200))])
    settings.set("backend", "remote")
    settings.set("server_url", vllm_server.url)
    w = make_window()
    with qtbot.waitSignal(w.engine.modelReady, timeout=120_000):
        w.model_jobs.load_model()
    assert "remote" in w.model_label.text() and vllm_server.url in w.model_label.text()
    open_and_wait(qtbot, w, video)
    with qtbot.waitSignal(w.analysisFinished, timeout=300_000) as done:
        w.model_jobs.analyse()
    analysis = done.args[0]
    assert len(analysis.windows) == 1 and analysis.windows[0].prompt_tokens > 0
    assert len(w.timeline.data.events.items) == len(analysis.events)
    assert w.doc.analysis_ref and w.doc.analysis_ref["model_id"] == "remote:marlin-tiny"
    with qtbot.waitSignal(w.findFinished, timeout=300_000):
        w.model_jobs.run_query("a blue screen")
    assert w.search_panel.results.topLevelItemCount() == len(w.doc.results)
    assert not w.errors


def test_no_server_is_a_plain_message_and_the_app_lives_on(qtbot, make_window,  # noqa: F811
                                                          settings) -> None:  # noqa: F811
    settings.set("backend", "remote")
    settings.set("server_url", f"http://127.0.0.1:{free_port()}/v1")
    w = make_window()
    with qtbot.waitSignal(w.errorShown, timeout=120_000) as err:
        w.model_jobs.load_model()
    assert "cannot reach the server" in err.args[0]
