"""The pull against huggingface_hub's real HTTP code (http_get), served by a loopback server.

Only model_info is faked; the bytes travel through huggingface_hub's own download function, so
the Range-based resume and the "server ignored Range" fallback are exercised for real.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import huggingface_hub
import pytest
from huggingface_hub import constants

from marlin_desk.core.errors import Cancelled
from marlin_desk.models import PARTIAL_DIR, ModelManager, Progress

from .conftest import MODEL, FakeHub, model_files

BIG = "model-00002-of-00002.safetensors"


class Server:
    """Serves the FakeHub's repos at /<owner>/<name>/resolve/<commit>/<file>, with Range."""

    def __init__(self, hub: FakeHub) -> None:
        self.hub, self.ranges, self.ignore_range = hub, [], False
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - http.server's name
                if "/resolve/" not in self.path:  # huggingface_hub's own side requests
                    self.send_error(404)
                    return
                repo, rest = self.path.lstrip("/").split("/resolve/", 1)
                filename = rest.split("/", 1)[1]
                data = outer.hub.repos[repo][1][filename]
                rng = self.headers.get("Range")
                outer.ranges.append((filename, rng))
                start = 0
                if rng and not outer.ignore_range:
                    start = int(rng.split("=")[1].split("-")[0])
                    self.send_response(206)
                    self.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
                else:
                    self.send_response(200)
                self.send_header("Content-Length", str(len(data) - start))
                self.end_headers()
                self.wfile.write(data[start:])

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[Server]:
    hub = FakeHub()
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(huggingface_hub.HfApi, "model_info",
                        lambda self, repo_id, **kw: hub.model_info(repo_id, **kw))
    srv = Server(hub)
    monkeypatch.setattr(constants, "ENDPOINT", srv.url)
    monkeypatch.setattr(constants, "HUGGINGFACE_CO_URL_TEMPLATE",
                        srv.url + "/{repo_id}/resolve/{revision}/{filename}")
    thread = threading.Thread(target=srv.httpd.serve_forever, daemon=True)
    thread.start()
    yield srv
    srv.httpd.shutdown()
    srv.httpd.server_close()


def _cancel_after(cancel: threading.Event, name: str, nbytes: int):
    def callback(p: Progress) -> None:
        if p.file == name and p.phase == "download" and p.bytes_done >= nbytes:
            cancel.set()
    return callback


def test_real_download_cancel_and_range_resume(server: Server, manager: ModelManager) -> None:
    files = model_files(weights=30 * 2**20)  # bigger than http_get's 10 MB chunks
    server.hub.add(MODEL, files)
    cancel = threading.Event()
    manager.progress_interval = 0.0
    with pytest.raises(Cancelled):
        manager.pull(MODEL, progress=_cancel_after(cancel, BIG, 40 * 2**20), cancel=cancel)
    part = manager.folder_for(MODEL) / PARTIAL_DIR / (BIG + ".part")
    kept = part.stat().st_size
    assert 0 < kept < len(files[BIG]) and manager.installed_folder(MODEL) is None

    server.ranges.clear()
    st = manager.pull(MODEL)
    assert st.state == "verified"
    assert (BIG, f"bytes={kept}-") in server.ranges
    assert (manager.folder_for(MODEL) / BIG).read_bytes() == files[BIG]


def test_server_ignoring_range_still_gives_a_correct_file(server: Server,
                                                          manager: ModelManager) -> None:
    files = model_files(weights=3 * 2**20)
    server.hub.add(MODEL, files)
    part = manager.folder_for(MODEL) / PARTIAL_DIR / (BIG + ".part")
    part.parent.mkdir(parents=True)
    part.write_bytes(files[BIG][:100_000])
    server.ignore_range = True
    events: list[Progress] = []
    st = manager.pull(MODEL, progress=events.append)
    assert st.state == "verified"
    assert (manager.folder_for(MODEL) / BIG).read_bytes() == files[BIG]
    done = [e.bytes_done for e in events]
    assert done == sorted(done) and events[-1].fraction == 1.0
