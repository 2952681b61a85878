"""Fixtures: the mock model server the Rust test harness started
(`OI_MOCK_URL`), and a fresh OpenInterpreter pointed at it in a folder of
its own. Run through `cargo test -p oi-cli --test e2e python_api`, which
starts the server and sets `OI_BINARY`."""

import json
import os
import urllib.request

import pytest


class Mock:
    def __init__(self, base):
        self.base = base.rstrip("/")
        self.root = self.base[: -len("/v1")] if self.base.endswith("/v1") else self.base

    def _call(self, method, action, body=None):
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(
            f"{self.root}/__mock/{action}", data=data, method=method,
            headers={"content-type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            return json.loads(response.read() or b"null")

    def reply(self, *specs):
        """Queues replies: {"text": …}, {"execute": [[lang, code]]}, {"error": …}."""
        self._call("POST", "replies", list(specs))

    def reset(self):
        self._call("POST", "reset", {})

    def requests(self):
        return self._call("GET", "requests")


def message_texts(request):
    """The texts of a chat-wire request's messages, by role."""
    out = []
    for m in request["body"].get("messages", []):
        content = m.get("content")
        if isinstance(content, list):
            content = "".join(part.get("text", "") for part in content)
        out.append((m["role"], content or ""))
    return out


@pytest.fixture
def mock():
    base = os.environ.get("OI_MOCK_URL")
    if not base:
        pytest.fail("OI_MOCK_URL is not set: run these tests with `cargo test -p oi-cli --test e2e python_api`")
    server = Mock(base)
    server.reset()
    return server


@pytest.fixture
def work(tmp_path, monkeypatch):
    folder = tmp_path / "work"
    folder.mkdir()
    monkeypatch.chdir(folder)
    return folder


@pytest.fixture
def oi(mock, work):
    from interpreter import OpenInterpreter

    instance = OpenInterpreter()
    instance.llm.model = "mock-model"
    instance.llm.api_base = mock.base
    instance.llm.api_key = "test-key"
    yield instance
    instance.close()
