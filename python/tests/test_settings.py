"""The settings that change how the session runs, each seen in what the
session does."""

import base64
import os
import shutil
import socket
import warnings

import pytest

from conftest import message_texts
from interpreter import OiError

# A 1x1 PNG.
PNG = base64.b64encode(
    bytes.fromhex(
        "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
        "1f15c4890000000d49444154789c6360f8cf00000301010018dd8db00000000049454e44ae426082"
    )
).decode()


@pytest.fixture
def oi_home(tmp_path, monkeypatch):
    """A copy of the test's oi folder whose configuration a test extends."""
    home = tmp_path / "oi-home"
    shutil.copytree(os.path.join(os.environ["HOME"], ".openinterpreter"), home)
    monkeypatch.setenv("INTERPRETER_HOME", str(home))
    return home


def test_workspace_is_where_code_runs(oi, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    oi.workspace = elsewhere
    out = oi.computer.run("shell", "pwd")
    assert out[0]["content"].strip() == str(elsewhere)


def test_a_read_only_sandbox_keeps_code_from_writing(oi, work):
    oi.sandbox = "read-only"
    oi.computer.run("shell", "touch written.txt")
    assert not (work / "written.txt").exists(), "the read-only sandbox (Landlock) let code write"
    oi.sandbox = "workspace-write"
    oi.computer.run("shell", "touch written.txt")
    assert (work / "written.txt").exists()


def test_offline_keeps_code_off_the_network(oi, mock):
    port = int(mock.root.rsplit(":", 1)[1])
    probe = (
        "import socket\n"
        f"try:\n    socket.create_connection(('127.0.0.1', {port}), timeout=5).close(); print('reached')\n"
        "except OSError as e:\n    print('blocked', e.errno)"
    )
    assert oi.computer.run("python", probe)[0]["content"].startswith("reached")
    oi.offline = True
    assert oi.computer.run("python", probe)[0]["content"].startswith("blocked")


def test_os_mode_without_a_display_is_an_error_that_says_so(oi, monkeypatch):
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    oi.os = True
    oi.llm.supports_vision = True
    with pytest.raises(OiError) as error:
        oi.chat("take a screenshot", display=False)
    assert "display" in str(error.value).lower()


def test_a_profile_applies(oi, oi_home, mock):
    with open(oi_home / "config.toml", "a") as config:
        config.write('\n[profiles.terse]\ncustom_instructions = "Answer in one word."\n')
    oi.profile = "terse"
    mock.reply({"text": "Yes."})
    oi.chat("hi", display=False)
    assert "Answer in one word." in message_texts(mock.requests()[0])[0][1]


def test_max_budget_stops_a_task_that_would_pass_it(oi, oi_home, mock):
    with open(oi_home / "config.toml", "a") as config:
        config.write('\n[models."mock-model"]\ninput_price = 100.0\noutput_price = 100.0\n')
    oi.max_budget = 0.15
    oi.auto_run = True
    mock.reply(
        {"execute": [["python", "print(1)"]], "usage": [1000, 100]},
        {"text": "never asked"},
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        oi.chat("go", display=False)
    assert len(mock.requests()) == 1
    assert any("budget" in str(w.message) for w in caught), [str(w.message) for w in caught]


def test_the_context_window_is_respected(oi):
    oi.llm.context_window = 1000
    with pytest.raises(OiError) as error:
        oi.chat("word " * 5000, display=False)
    assert "context" in str(error.value).lower()


def test_supports_vision_decides_whether_the_model_sees_images(oi, mock):
    image = {"role": "user", "type": "image", "format": "base64.png", "content": PNG}
    oi.llm.supports_vision = True
    mock.reply({"text": "A dot."}, {"text": "I cannot see it."})
    oi.chat([{"role": "user", "type": "message", "content": "what is this?"}, image], display=False)
    first = str(mock.requests()[0]["body"]["messages"][-1])
    assert "image_url" in first and PNG in first
    oi.llm.supports_vision = False
    oi.chat([{"role": "user", "type": "message", "content": "and now?"}, image], display=False)
    second = str(mock.requests()[1]["body"]["messages"][-1])
    assert PNG not in second


def test_ollama_names_reach_an_ollama_server(oi, mock):
    oi.llm.model = "ollama/llama3"
    oi.llm.api_base = mock.root  # as Open Interpreter's docs write it: no /v1
    mock.reply({"text": "hello from llama"})
    assert oi.chat("hi", display=False)[-1]["content"] == "hello from llama"
    request = mock.requests()[0]
    assert request["path"] == "/v1/chat/completions" and request["body"]["model"] == "llama3"
