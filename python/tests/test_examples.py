"""Open Interpreter's own examples (its README and docs), unchanged but
for where the model is, run as scripts."""

import subprocess
import sys
import textwrap

from conftest import message_texts


def run(mock, work, body, stdin=""):
    # The examples set no server; a user-level config or these lines would.
    prelude = textwrap.dedent(
        f"""
        from interpreter import interpreter
        interpreter.llm.api_base = {mock.base!r}
        interpreter.llm.api_key = "fake_key"
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", prelude + textwrap.dedent(body)],
        input=stdin, capture_output=True, text=True, timeout=120, cwd=work,
    )
    assert done.returncode == 0, done
    return done


def test_streaming_example(mock, work):
    mock.reply({"execute": [["shell", "uname -s"]]}, {"text": "We are on Linux."})
    done = run(
        mock,
        work,
        """
        interpreter.llm.model = "gpt-3.5-turbo"
        message = "What operating system are we on?"
        for chunk in interpreter.chat(message, display=False, stream=True):
          print(chunk)
        """,
    )
    assert "'type': 'confirmation'" in done.stdout
    assert "Linux" in done.stdout
    assert mock.requests()[0]["body"]["model"] == "gpt-3.5-turbo"


def test_saving_and_restoring_chats_example(mock, work):
    mock.reply({"text": "Nice to meet you, Killian."}, {"text": "Your name is Killian."})
    done = run(
        mock,
        work,
        """
        messages = interpreter.chat("My name is Killian.", display=False)
        interpreter.messages = []
        interpreter.messages = messages
        interpreter.chat("What's my name?", display=False)
        print(interpreter.messages[-1]["content"])
        """,
    )
    assert done.stdout.strip().endswith("Your name is Killian.")
    second = message_texts(mock.requests()[1])
    assert any("Nice to meet you" in text for _, text in second)


def test_customizing_the_system_message_example(mock, work):
    mock.reply({"text": "ok"})
    run(
        mock,
        work,
        '''
        interpreter.system_message += """
        Run shell commands with -y so the user doesn't have to confirm them.
        """
        print(interpreter.system_message)
        interpreter.chat("hi", display=False)
        ''',
    )
    system = message_texts(mock.requests()[0])[0][1]
    assert "Run shell commands with -y" in system and "oi" in system


def test_local_model_example(mock, work):
    mock.reply({"text": "local hello"})
    done = run(
        mock,
        work,
        f"""
        interpreter.offline = False
        interpreter.llm.model = "openai/x"
        interpreter.llm.api_key = "fake_key"
        interpreter.llm.api_base = {mock.base!r}
        interpreter.chat("hi", display=False)
        print(interpreter.messages[-1]["content"])
        """,
    )
    assert done.stdout.strip() == "local hello"
    assert mock.requests()[0]["body"]["model"] == "x"


def test_single_command_with_display_example(mock, work):
    mock.reply({"execute": [["python", "print(sum(range(10)))"]]}, {"text": "The sum is 45."})
    done = run(
        mock,
        work,
        """
        interpreter.auto_run = True
        interpreter.chat("Add up the numbers below ten")
        """,
    )
    assert "45" in done.stdout and "The sum is 45." in done.stdout
