"""A local fake of the Hugging Face hub: real bytes, real sizes, real sha256 and git blob ids.
Shared by the model-manager tests (tests/models/conftest.py) and the GUI's download dialog tests
(tests/gui/conftest.py), which import its fixtures.

Only the two calls the model manager makes are replaced (HfApi.model_info and
file_download.http_get); everything between them and our code runs for real.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import httpx2
import huggingface_hub
import pytest
from huggingface_hub import file_download
from huggingface_hub.errors import RepositoryNotFoundError
from huggingface_hub.hf_api import BlobLfsInfo, RepoSibling

from marlin_desk.models import ModelManager

MODEL = "NemoStation/Marlin-2B"
CHUNK = 64 * 1024


def model_files(weights: int = 600_000, shards: int = 2) -> dict[str, bytes]:
    """A checkpoint-shaped file set, plus the pickles and code a real repo may carry."""
    files = {"config.json": b'{"model_type": "qwen3_5"}',
             "tokenizer.json": b'{"version": "1.0"}' + b" " * 3000,
             "chat_template.jinja": b"{% for m in messages %}{{ m.content }}{% endfor %}",
             "merges.txt": b"a b\n" * 500,
             "pytorch_model.bin": b"PICKLE" * 100,
             "modeling_marlin.py": b"import os\n",
             "training_args.pt": b"PICKLE",
             ".gitattributes": b"*.safetensors filter=lfs\n"}
    for i in range(shards):
        files[f"model-{i + 1:05d}-of-{shards:05d}.safetensors"] = os.urandom(weights)
    return files


def git_blob_id(data: bytes) -> str:
    return hashlib.sha1(f"blob {len(data)}\0".encode() + data).hexdigest()


@dataclass
class FakeHub:
    """Serves repos from memory; records every download request (file, resume offset)."""

    repos: dict[str, tuple[str, dict[str, bytes]]] = field(default_factory=dict)
    requests: list[tuple[str, int]] = field(default_factory=list)
    served: dict[str, int] = field(default_factory=dict)  # bytes sent, per file
    corrupt: set[str] = field(default_factory=set)  # files served with one byte flipped
    on_chunk: Callable[[str, int], None] | None = None  # called after each chunk written
    fail: BaseException | None = None  # raised by model_info (network down)

    def add(self, model_id: str, files: dict[str, bytes]) -> str:
        commit = hashlib.sha1(model_id.encode() + str(len(self.repos)).encode()).hexdigest()
        self.repos[model_id] = (commit, dict(files))
        return commit

    def model_info(self, repo_id: str, *, revision: str | None = None,
                   files_metadata: bool = False, **_: Any) -> SimpleNamespace:
        if self.fail is not None:
            raise self.fail
        if repo_id not in self.repos:
            url = f"https://huggingface.co/api/models/{repo_id}"
            response = httpx2.Response(404, request=httpx2.Request("GET", url))
            raise RepositoryNotFoundError(f"404 {repo_id}", response=response)
        commit, files = self.repos[repo_id]
        siblings = []
        for name, data in files.items():
            lfs = None
            if name.endswith((".safetensors", ".bin", ".pt")):
                lfs = BlobLfsInfo(size=len(data), sha256=hashlib.sha256(data).hexdigest(),
                                  pointer_size=134)
            siblings.append(RepoSibling(rfilename=name, size=len(data),
                                        blob_id=git_blob_id(data), lfs=lfs))
        return SimpleNamespace(id=repo_id, sha=commit, siblings=siblings)

    def http_get(self, url: str, temp_file: Any, *, resume_size: int = 0,
                 headers: dict[str, str] | None = None, expected_size: int | None = None,
                 **_: Any) -> None:
        repo_part, rest = url.split("/resolve/", 1)
        repo_id = "/".join(repo_part.rstrip("/").split("/")[-2:])
        commit, filename = rest.split("/", 1)
        want_commit, files = self.repos[repo_id]
        assert commit == want_commit, "downloads must use the pinned commit"
        data = files[filename]
        if filename in self.corrupt:
            data = bytes([data[0] ^ 0xFF]) + data[1:]
        self.requests.append((filename, resume_size))
        if expected_size is not None and resume_size == expected_size:
            return
        for start in range(resume_size, len(data), CHUNK):
            chunk = data[start:start + CHUNK]
            temp_file.write(chunk)
            self.served[filename] = self.served.get(filename, 0) + len(chunk)
            if self.on_chunk is not None:
                self.on_chunk(filename, start + CHUNK)

    def fetched(self, name: str) -> list[int]:
        return [offset for f, offset in self.requests if f == name]


@pytest.fixture
def hub(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeHub]:
    fake = FakeHub()
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("TRANSFORMERS_OFFLINE", raising=False)
    monkeypatch.setattr(huggingface_hub.HfApi, "model_info",
                        lambda self, repo_id, **kw: fake.model_info(repo_id, **kw))
    monkeypatch.setattr(file_download, "http_get", fake.http_get)
    yield fake


@pytest.fixture
def manager(tmp_path: Path) -> ModelManager:
    return ModelManager(tmp_path / "models")


def write_folder(folder: Path, files: dict[str, bytes]) -> Path:
    for name, data in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(data)
    return folder
