"""OpenInterpreter: Open Interpreter's Python API on an oi session."""

import json
import os
import subprocess
import threading
import warnings

from ._backend import Backend, find_binary
from .display import Display
from .errors import OiError

# Model-name prefixes that name one of oi's providers (as Open Interpreter
# names them, after LiteLLM).
PROVIDERS = {
    "openai",
    "anthropic",
    "ollama",
    "ollama_chat",
    "lmstudio",
    "openrouter",
    "groq",
    "deepseek",
    "mistral",
    "together_ai",
    "together",
}


class Llm:
    """The model: `interpreter.llm.model = "gpt-4o"` … A change takes
    effect at the next request (the session restarts with it, keeping the
    conversation; the kernels start afresh)."""

    def __init__(self):
        self.model = None
        self.api_base = None
        self.api_key = None
        self.context_window = None
        self.max_tokens = None
        self.temperature = None
        self.supports_functions = None
        self.supports_vision = None


class Computer:
    """The session's kernels: `interpreter.computer.run("python", "1 + 1")`."""

    def __init__(self, owner):
        self._owner = owner

    def run(self, language, code, stream=False, display=False):
        """Runs code in the session's kernels, without the model and without
        asking; returns the output as LMC messages (or yields chunks with
        `stream=True`)."""
        chunks = self._owner._run(language, code, display)
        if stream:
            return chunks
        return _merge(chunks)

    def terminate(self):
        """Stops the kernels (and the session; the next request starts a new one)."""
        self._owner._stop()


class _DefaultPrompt(str):
    """oi's own system prompt, as read from `system_message`: adding to it
    (`interpreter.system_message += "…"`) keeps it and adds the text."""

    def __add__(self, other):
        return _Extended(str(self) + other, other)


class _Extended(str):
    def __new__(cls, value, extra):
        text = super().__new__(cls, value)
        text.extra = extra
        return text


def _merge(chunks):
    """LMC messages from a stream of chunks (flags dropped; content of one
    block joined)."""
    messages = []
    _Collector(messages).feed_all(chunks)
    return messages


class _Collector:
    """Builds messages from chunks as they pass."""

    def __init__(self, messages):
        self.messages = messages
        self.current = None

    def feed(self, chunk):
        if chunk.get("role") == "server" or chunk.get("type") == "confirmation":
            return
        if chunk.get("start") or chunk.get("end"):
            self.current = None
            return
        if chunk.get("format") == "active_line":
            return
        key = (chunk.get("role"), chunk.get("type"), chunk.get("format"))
        current = self.current
        if current is not None and current[0] == key and chunk.get("type") != "image":
            current[1]["content"] += chunk.get("content", "")
            return
        message = {"role": key[0], "type": key[1]}
        if key[2] is not None:
            message["format"] = key[2]
        message["content"] = chunk.get("content", "")
        self.messages.append(message)
        self.current = (key, message)

    def feed_all(self, chunks):
        for chunk in chunks:
            self.feed(chunk)


def _toml(value):
    """A value as TOML (for `-c KEY=VALUE`)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    return json.dumps(str(value))


class OpenInterpreter:
    """One oi session with its own kernels, driven from Python.

    Settings take effect at the next request: `auto_run` at once, the
    others by restarting the session with the conversation kept (the
    kernels start afresh)."""

    def __init__(self, **settings):
        self._backend = None
        self._lock = threading.RLock()
        self._messages = []
        self._restore = False
        self._argv = None
        self._approval = None
        self._system_message = None
        self._system_extra = []
        self.llm = Llm()
        self.computer = Computer(self)
        self.auto_run = False
        self.offline = False
        self.max_output = None
        self.custom_instructions = ""
        self.os = False
        self.sandbox = None
        self.workspace = None
        self.profile = None
        self.max_budget = None
        self.max_turns = None
        self.loop = False
        self.loop_message = (
            "Go on with the task. If all of it is done, say exactly: The task is done. "
            "If it cannot be done, say exactly: The task is impossible."
        )
        self.loop_breakers = ["The task is done.", "The task is impossible."]
        self.loop_limit = 10
        self.approve = None
        self.verbose = False
        self.responding = False
        self.last_messages_count = 0
        for name, value in settings.items():
            if not hasattr(self, name):
                raise OiError(f"OpenInterpreter() has no setting `{name}`", "see docs/python.md for the settings")
            setattr(self, name, value)

    # -- the conversation ----------------------------------------------------

    @property
    def messages(self):
        """The conversation as LMC messages; assign a list to restore one."""
        return self._messages

    @messages.setter
    def messages(self, value):
        if not isinstance(value, list):
            raise OiError("`messages` must be a list of LMC messages", "e.g. [{\"role\": \"user\", \"type\": \"message\", \"content\": \"hi\"}]")
        self._messages = list(value)
        self._restore = True

    def reset(self):
        """Forgets the conversation and restarts the kernels."""
        with self._lock:
            if self._backend is not None:
                self._answer({"op": "reset"})
            self._messages = []
            self._restore = False
            self.last_messages_count = 0

    # -- the system prompt ---------------------------------------------------

    @property
    def system_message(self):
        """The system prompt. Assigning replaces oi's own; adding to it
        (`+=`) keeps oi's and adds the text."""
        if self._system_message is not None:
            return self._system_message
        for line in self._answer({"op": "system_prompt"}):
            if line.get("type") == "system_prompt":
                return _DefaultPrompt(line["content"])
        raise OiError("the session did not report its system prompt")

    @system_message.setter
    def system_message(self, value):
        if isinstance(value, _Extended):
            self._system_extra.append(value.extra.strip())
        else:
            self._system_message = None if value is None else str(value)
            self._system_extra = []

    # -- the session process -------------------------------------------------

    def _model_args(self):
        args = []
        model = self.llm.model
        base = self.llm.api_base
        if model:
            prefix, _, rest = model.partition("/")
            if rest and prefix in PROVIDERS:
                provider = {"ollama_chat": "ollama", "together_ai": "together"}.get(prefix, prefix)
                if base:
                    if provider == "ollama" and not base.rstrip("/").endswith("/v1"):
                        base = base.rstrip("/") + "/v1"
                else:
                    args += ["-c", f"model_provider={_toml(provider)}"]
                model = rest
            args += ["--model", model]
        if base:
            args += ["--api-base", base]
        llm = self.llm
        if llm.context_window is not None:
            args += ["-c", f"context_window={int(llm.context_window)}"]
        if llm.max_tokens is not None:
            args += ["-c", f"max_tokens={int(llm.max_tokens)}"]
        if llm.temperature is not None:
            args += ["-c", f"temperature={float(llm.temperature)}"]
        if llm.supports_functions is not None:
            args += ["-c", "harness=" + _toml("native" if llm.supports_functions else "markdown")]
        if llm.supports_vision is not None and model:
            args += ["-c", f"models.{json.dumps(model)}.vision={_toml(bool(llm.supports_vision))}"]
        return args

    def _instructions(self):
        parts = [p for p in [self.custom_instructions or "", *self._system_extra] if p.strip()]
        if self.loop:
            parts.append(
                "When all of the task is done, end your reply with exactly: The task is done."
            )
        return "\n\n".join(parts)

    def _wanted_argv(self):
        argv = [find_binary(), *self._model_args()]
        if self.offline:
            argv.append("--offline")
        if self.os:
            argv.append("--os")
        if self.sandbox:
            argv += ["--sandbox", str(self.sandbox)]
        if self.workspace:
            argv += ["--workspace", os.fspath(self.workspace)]
        if self.profile:
            argv += ["--profile", str(self.profile)]
        if self.max_budget is not None:
            argv += ["--max-budget", str(self.max_budget)]
        if self.max_output is not None:
            argv += ["--max-output", str(int(self.max_output))]
        if self.max_turns is not None:
            argv += ["--max-turns", str(int(self.max_turns))]
        instructions = self._instructions()
        if instructions:
            argv += ["-c", f"custom_instructions={_toml(instructions)}"]
        if self._system_message is not None:
            argv += ["-c", f"system_message={_toml(self._system_message)}"]
        argv.append("lmc")
        return argv

    def _env(self):
        env = dict(os.environ)
        if self.llm.api_key:
            env["OI_API_KEY"] = str(self.llm.api_key)
        return env

    def _approval_policy(self):
        return "auto" if self.auto_run else "ask"

    def _session(self):
        """The running session, started (or restarted after a change of
        settings, keeping the conversation) as needed."""
        argv = self._wanted_argv()
        if self._backend is not None and argv != self._argv:
            self._stop()
            self._restore = bool(self._messages)
        if self._backend is None or self._backend.process.poll() is not None:
            full = argv[:-1] + ["-c", f"approval={_toml(self._approval_policy())}", "lmc"]
            self._backend = Backend(full, self._env(), os.getcwd())
            self._argv = argv
            self._approval = self._approval_policy()
            for notice in self._backend.notices:
                if self.verbose:
                    warnings.warn(notice, stacklevel=3)
            self._restore = bool(self._messages)
        backend = self._backend
        if self._approval != self._approval_policy():
            self._approval = self._approval_policy()
            _checked(backend.request({"op": "set_approval", "policy": self._approval}))
        if self._restore:
            self._restore = False
            _checked(backend.request({"op": "messages", "messages": self._messages}))
        return backend

    def _answer(self, request):
        with self._lock:
            return _checked(self._session().request(request))

    def _stop(self):
        if self._backend is not None:
            self._backend.close()
            self._backend = None

    def close(self):
        """Ends the session: its kernels stop."""
        self._stop()

    def __del__(self):
        try:
            self._stop()
        except Exception:
            pass

    # -- running ---------------------------------------------------------------

    def _stream(self, request, decide, display):
        """Sends a request and yields its chunks; Ctrl-C interrupts it (the
        session stays) and is raised again."""
        backend = self._session()
        error = None
        answered = False
        try:
            backend.send(request)
            for line in backend.lines():
                if line.get("role") == "server":
                    kind = line.get("type")
                    if kind == "status":
                        answered = True
                        break
                    if display:
                        display.chunk(line)
                    if kind == "error" and error is None:
                        error = OiError(line.get("content", ""), line.get("hint"))
                    elif kind == "warning" and not display:
                        warnings.warn(line.get("content", ""), stacklevel=3)
                    continue
                if line.get("type") == "confirmation":
                    yield from decide(backend, line)
                    continue
                if display:
                    display.chunk(line)
                yield line
            else:
                raise backend.died("the session stopped during the request")
        except KeyboardInterrupt:
            backend.send({"op": "interrupt"})
            _drain_until_complete(backend)
            answered = True
            raise
        except GeneratorExit:
            # The caller stopped reading: stop the task too.
            if not answered and backend.process.poll() is None:
                backend.send({"op": "interrupt"})
                _drain_until_complete(backend)
            raise
        if error is not None:
            raise error

    def _decider(self, display, stream):
        """How a confirmation is answered: the `approve` callback, else the
        person at the terminal (display), else the caller who keeps reading
        (stream, as in Open Interpreter), else only code oi finds safe."""

        def decide(backend, chunk):
            if self.approve is not None:
                verdict = self.approve(chunk)
                if isinstance(verdict, str):
                    decision = verdict
                else:
                    decision = "approve" if verdict else "decline"
                yield_chunk = stream
            elif display is not None:
                decision = display.ask(chunk)
                yield_chunk = stream
            elif stream:
                yield chunk
                decision = "approve"
                yield_chunk = False
            else:
                decision = "decline" if chunk.get("risks") else "approve"
                yield_chunk = False
            if yield_chunk:
                yield chunk
            backend.send({"op": "approve", "id": chunk["id"], "decision": decision})

        return decide

    def _chat_chunks(self, message, display, stream):
        with self._lock:
            self.responding = True
            try:
                # The session first, with the conversation so far.
                self._session()
                if isinstance(message, list):
                    self._messages = list(message)
                    self._restore = False
                    self.last_messages_count = len(self._messages)
                else:
                    user = (
                        {"role": "user", "type": "message", "content": message}
                        if isinstance(message, str)
                        else {"role": "user", **message}
                    )
                    self._messages.append(user)
                    self.last_messages_count = len(self._messages)
                screen = Display() if display else None
                decide = self._decider(screen, stream)
                collector = _Collector(self._messages)
                request = {"op": "chat", "message": message}
                for turn in range(self.loop_limit + 1 if self.loop else 1):
                    chunks = self._stream(request, decide, screen)
                    try:
                        for chunk in chunks:
                            collector.feed(chunk)
                            yield chunk
                    finally:
                        chunks.close()
                    if not self.loop or self._loop_done():
                        break
                    follow = {"role": "user", "type": "message", "content": self.loop_message}
                    self._messages.append(follow)
                    collector.current = None
                    request = {"op": "chat", "message": self.loop_message}
                if screen:
                    screen.newline()
            finally:
                self.responding = False

    def _loop_done(self):
        for message in reversed(self._messages):
            if message.get("role") == "assistant" and message.get("type") == "message":
                return any(b in message.get("content", "") for b in self.loop_breakers)
            if message.get("role") == "user":
                return False
        return False

    def _run(self, language, code, display):
        with self._lock:
            screen = Display() if display else None
            return list(
                self._stream(
                    {"op": "run", "language": language, "code": code},
                    self._decider(None, False),
                    screen,
                )
            )

    def chat(self, message=None, display=True, stream=False, blocking=True):
        """Sends the user's message (a string, an LMC message or a list of
        them) and returns the new messages; `stream=True` yields LMC chunks
        instead; `display=True` shows the work in the terminal. With no
        message, the interactive session starts."""
        if not blocking:
            thread = threading.Thread(
                target=self.chat, args=(message, display, stream, True), daemon=True
            )
            thread.start()
            return thread
        if message is None:
            if not display:
                raise OiError(
                    "chat() needs a message when display=False",
                    "pass the user's words: interpreter.chat(\"…\")",
                )
            return self._interactive()
        if stream:
            return self._chat_chunks(message, display, True)
        for _ in self._chat_chunks(message, display, False):
            pass
        return self._messages[self.last_messages_count :]

    def _interactive(self):
        """The terminal session of the `interpreter` command, with these
        settings; it continues this conversation."""
        session = None
        if self._backend is not None or self._messages:
            session = self._session().ready.get("session_id")
        argv = self._wanted_argv()[:-1]
        if self.auto_run:
            argv.append("--yes")
        if session:
            argv += ["--resume", session]
        self._stop()
        return subprocess.call(argv, env=self._env())


def _checked(lines):
    """An answer's lines, all read (so the next answer starts clean); its
    first error raised."""
    lines = list(lines)
    for line in lines:
        if line.get("role") == "server" and line.get("type") == "error":
            raise OiError(line.get("content", ""), line.get("hint"))
    return lines


def _drain_until_complete(backend):
    """Reads what is left of an answer (after an interrupt); a second
    Ctrl-C ends the session's process."""
    try:
        for line in backend.lines():
            if line.get("role") == "server" and line.get("type") == "status":
                return
    except KeyboardInterrupt:
        backend.process.kill()
        raise
