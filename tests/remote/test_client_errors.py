"""The server client's behaviour on a real local HTTP server that answers with scripted
statuses: retries with backoff on 429/5xx, and one plain sentence (with the right exit code) for
each failure a user meets. Protocol only: no model answers are made up here."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from marlin_desk.dev.vllm_server import free_port
from marlin_desk.remote.client import (
    ModelNotServed,
    RequestTooLong,
    ServerClient,
    ServerFailed,
    ServerMisconfigured,
    ServerUnreachable,
)

COMPLETION = {
    "id": "x", "object": "chat.completion", "created": 0, "model": "marlin",
    "choices": [{"index": 0, "finish_reason": "stop",
                 "message": {"role": "assistant", "content": "From 1.0 to 2.0."},
                 "logprobs": {"content": [
                     {"token": t, "logprob": lp, "bytes": None, "top_logprobs": []}
                     for t, lp in [("From", -0.01), (" ", -0.01), ("1", -0.5), (".", 0.0),
                                   ("0", -0.1), (" to", 0.0), (" ", 0.0), ("2", -0.3),
                                   (".", 0.0), ("0", -0.1), (".", 0.0)]]}}],
    "usage": {"prompt_tokens": 321, "completion_tokens": 12, "total_tokens": 333},
}
MODELS = {"object": "list", "data": [{"id": "marlin", "object": "model", "created": 0,
                                      "owned_by": "vllm", "root": "/models/marlin",
                                      "max_model_len": 4096}]}


class Script:
    """What the fake endpoint answers, in order; the last answer repeats."""

    def __init__(self) -> None:
        self.answers: list[tuple[int, dict]] = [(200, COMPLETION)]
        self.requests: list[dict] = []


@pytest.fixture
def server() -> Iterator[tuple[str, Script]]:
    script = Script()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def _send(self, status: int, body: dict) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            if status == 429:
                self.send_header("Retry-After", "0")
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:  # noqa: N802
            self._send(200, MODELS)

        def do_POST(self) -> None:  # noqa: N802
            length = int(self.headers["Content-Length"])
            script.requests.append(json.loads(self.rfile.read(length)))
            status, body = script.answers.pop(0) if len(script.answers) > 1 else \
                script.answers[0]
            self._send(status, body)

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/v1", script
    httpd.shutdown()


def _chat(client: ServerClient) -> object:
    return client.chat("marlin", "data:video/mp4;base64,AAAA", "Where?", 16,
                       {"media_io_kwargs": {"video": {"fps": 2}}})


def test_a_reply_carries_text_tokens_and_usage(server: tuple[str, Script]) -> None:
    url, script = server
    reply = _chat(ServerClient(url, max_retries=0))
    assert reply.text == "From 1.0 to 2.0."
    assert reply.pieces[2] == "1" and reply.logprobs[2] == -0.5
    assert reply.prompt_tokens == 321 and reply.finish_reason == "stop"
    body = script.requests[0]
    assert body["media_io_kwargs"] == {"video": {"fps": 2}}  # extra fields reach the server
    assert body["temperature"] == 0.0 and body["logprobs"] is True
    content = body["messages"][0]["content"]
    assert content[0]["type"] == "video_url" and content[1] == {"type": "text", "text": "Where?"}


def test_busy_and_failing_servers_are_retried(server: tuple[str, Script]) -> None:
    url, script = server
    script.answers = [(429, {"message": "busy"}), (503, {"message": "restarting"}),
                      (200, COMPLETION)]
    reply = _chat(ServerClient(url, max_retries=2))
    assert reply.text == "From 1.0 to 2.0." and len(script.requests) == 3


def test_a_server_that_keeps_failing_is_a_plain_error(server: tuple[str, Script]) -> None:
    url, script = server
    script.answers = [(500, {"object": "error", "message": "engine dead", "code": 500})]
    with pytest.raises(ServerFailed, match="HTTP 500.*engine dead") as err:
        _chat(ServerClient(url, max_retries=1))
    assert err.value.exit_code == 5 and len(script.requests) == 2


def test_context_too_long_says_what_to_change(server: tuple[str, Script]) -> None:
    url, script = server
    script.answers = [(400, {"object": "error", "code": 400, "message":
                             "This model's maximum context length is 4096 tokens. However, "
                             "you requested 11000 tokens."})]
    with pytest.raises(RequestTooLong, match="max-model-len.*shorter --window") as err:
        _chat(ServerClient(url, max_retries=3))
    assert err.value.exit_code == 2 and len(script.requests) == 1  # a 400 is never retried


def test_a_model_the_server_does_not_serve(server: tuple[str, Script]) -> None:
    url, script = server
    client = ServerClient(url, max_retries=0)
    assert client.model(None).root == "/models/marlin"
    with pytest.raises(ModelNotServed, match="does not serve 'marlin-7b'; it serves marlin") \
            as err:
        client.model("marlin-7b")
    assert err.value.exit_code == 3
    script.answers = [(404, {"object": "error", "code": 404,
                             "message": "The model `marlin-7b` does not exist."})]
    with pytest.raises(ModelNotServed, match="marlin-7b"):
        client.chat("marlin-7b", "data:,", "?", 4, {})


def test_nothing_listening_is_unreachable() -> None:
    client = ServerClient(f"http://127.0.0.1:{free_port()}/v1", max_retries=0)
    with pytest.raises(ServerUnreachable, match="connection refused.*is it running") as err:
        client.models()
    assert err.value.exit_code == 3


def test_a_server_without_the_trust_flag_says_how_to_start_it(
        server: tuple[str, Script]) -> None:
    url, script = server
    script.answers = [(400, {"object": "error", "code": 400, "param": "media_io_kwargs",
                             "message": "Per-request mm_processor_kwargs are disabled by "
                                        "default. Start the server with "
                                        "--trust-request-mm-kwargs to allow them."})]
    with pytest.raises(ServerMisconfigured, match="started with --trust-request-mm-kwargs") \
            as err:
        _chat(ServerClient(url, max_retries=0))
    assert err.value.exit_code == 3
