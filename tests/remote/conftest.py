"""A real vLLM server (CPU build) serving the tiny model, started once per test session.

Skipped when .venv-vllm is missing (scripts/vllm_env.sh makes it; scripts/test.sh runs that, so
CI has it). Start-up takes about a minute on 2 cores.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from marlin_desk.dev.vllm_server import (
    SETUP_HINT,
    ServerStartError,
    VllmServer,
    build_model,
    vllm_python,
)


@pytest.fixture(scope="session")
def vllm_model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny model in its vLLM variant (DeltaNet head dims 64, bf16); the app loads it too."""
    return build_model(tmp_path_factory.mktemp("vllm-tiny"))


@pytest.fixture(scope="session")
def vllm_server(vllm_model_dir: Path,
                tmp_path_factory: pytest.TempPathFactory) -> Iterator[VllmServer]:
    """A running server: `.url` ("http://127.0.0.1:PORT/v1"), `.served_model`, `.model_dir`,
    `.log_path`, `.stop()`, `.kill()`, `.restart()`. A test that stops or kills it must
    restart it before it ends (later tests share it)."""
    if vllm_python() is None:
        pytest.skip(f"no vLLM environment (.venv-vllm): {SETUP_HINT}")
    from marlin_desk.engine.loader import model_budget

    log_path = tmp_path_factory.mktemp("vllm-server") / "server.log"
    server = VllmServer(model_dir=vllm_model_dir, log_path=log_path,
                        budget=model_budget(str(vllm_model_dir)))
    try:
        server.start()
    except ServerStartError as exc:
        pytest.fail(str(exc), pytrace=False)
    try:
        yield server
    finally:
        server.stop()
