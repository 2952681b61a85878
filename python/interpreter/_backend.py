"""The `interpreter lmc` process behind an OpenInterpreter: one session,
spoken to in JSON lines."""

import json
import os
import shutil
import signal
import subprocess
import sys
import sysconfig
import threading
from collections import deque

from .errors import OiError

BINARY_NAME = "interpreter.exe" if os.name == "nt" else "interpreter"


def find_binary() -> str:
    """The `interpreter` binary: `OI_BINARY`, else the one installed with
    this package, else the first on PATH."""
    given = os.environ.get("OI_BINARY")
    if given:
        if not os.access(given, os.X_OK):
            raise OiError(
                f"OI_BINARY names {given}, which is not an executable file",
                "point OI_BINARY at the `interpreter` binary, or unset it",
            )
        return given
    places = [sysconfig.get_path("scripts")]
    user = sysconfig.get_path("scripts", f"{os.name}_user")
    if user:
        places.append(user)
    places.append(os.path.dirname(sys.executable))
    for place in places:
        candidate = os.path.join(place, BINARY_NAME)
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    found = shutil.which(BINARY_NAME)
    if found:
        return found
    raise OiError(
        "the `interpreter` binary was not found (it is installed with this package)",
        "reinstall with `pip install .` from a clone of oi, or set OI_BINARY to the binary",
    )


class Backend:
    """A running `interpreter lmc`."""

    def __init__(self, argv, env, cwd):
        try:
            self.process = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                cwd=cwd,
                env=env,
                text=True,
                encoding="utf-8",
                bufsize=1,
                # Ctrl-C reaches this program, which sends `interrupt`;
                # the session itself goes on.
                start_new_session=True,
            )
        except OSError as error:
            raise OiError(
                f"could not start {argv[0]}: {error}",
                "check the binary (OI_BINARY) and the working folder",
            ) from error
        self.stderr_tail = deque(maxlen=40)
        self._stderr_reader = threading.Thread(target=self._read_stderr, daemon=True)
        self._stderr_reader.start()
        self.notices = []
        self.ready = None
        for line in self.lines():
            kind = line.get("type")
            if line.get("role") != "server":
                continue
            if kind == "ready":
                self.ready = line["content"]
                return
            if kind == "notice":
                self.notices.append(line["content"])
            elif kind == "error":
                self.close()
                raise OiError(line.get("content", "the session did not start"), line.get("hint"))
        raise self.died("the session did not start")

    def _read_stderr(self):
        # Ctrl-C is for the main thread, which sends `interrupt`.
        if hasattr(signal, "pthread_sigmask"):
            signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        for line in self.process.stderr:
            self.stderr_tail.append(line.rstrip("\n"))

    def died(self, what):
        # What the process said last, once it has said it.
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass
        self._stderr_reader.join(timeout=2)
        code = self.process.poll()
        tail = "\n".join(self.stderr_tail)
        message = f"{what}: `interpreter lmc` ended" + (
            f" with exit code {code}" if code is not None else ""
        )
        if tail:
            message += f"\n{tail}"
        return OiError(message, "the lines above are what it said; the same settings with the `interpreter` command show it too")

    def send(self, request):
        try:
            self.process.stdin.write(json.dumps(request) + "\n")
            self.process.stdin.flush()
        except (BrokenPipeError, OSError, ValueError) as error:
            raise self.died("could not reach the session") from error

    def lines(self):
        """The lines oi sends, as dicts, until the process ends."""
        while True:
            line = self.process.stdout.readline()
            if not line:
                return
            try:
                yield json.loads(line)
            except json.JSONDecodeError:
                continue

    def request(self, request):
        """Sends a request and yields its answer's lines; the `complete`
        status ends it (not yielded)."""
        self.send(request)
        for line in self.lines():
            if line.get("role") == "server" and line.get("type") == "status":
                return
            yield line
        raise self.died("the session stopped while answering")

    def close(self):
        process = self.process
        if process.poll() is None:
            try:
                process.stdin.close()
            except OSError:
                pass
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
