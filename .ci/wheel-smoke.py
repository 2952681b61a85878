"""The installed wheel works as a user gets it: the `interpreter` command
is the one installed with the package, and the API runs code with it."""

import os
import subprocess
import sys
import sysconfig
import tempfile

os.environ.pop("OI_BINARY", None)
from interpreter import OpenInterpreter  # noqa: E402
from interpreter._backend import find_binary  # noqa: E402

scripts = sysconfig.get_path("scripts")
binary = find_binary()
assert binary == os.path.join(scripts, "interpreter"), (binary, scripts)
version = subprocess.run([sys.executable, "-m", "interpreter", "--version"], capture_output=True, text=True, check=True)
assert version.stdout.startswith("interpreter "), version
os.chdir(tempfile.mkdtemp())
oi = OpenInterpreter()
oi.llm.model = "none"
oi.llm.api_base = "http://127.0.0.1:9/v1"
out = oi.computer.run("python", "print(6 * 7)")
assert out == [{"role": "computer", "type": "console", "format": "output", "content": "42\n"}], out
oi.close()
print(f"wheel ok: {binary}")
