#!/usr/bin/env python3
"""Runs an oi eval suite with Open Interpreter (the Python project, 0.4.3 from
PyPI) as the peer to compare with, on the same tasks and the same model server.

Each task runs as `interpreter eval` runs it for oi: a fresh temporary
workspace with the task's files and setup, the task's prompt, code run
without asking (OI's `auto_run`, the same as oi's `--yes`), the task's
timeout, and then the task's own `check`. OI is driven through its Python API
in a child process whose working folder is the workspace, with the settings
its command line takes (`--api_base URL --model openai/NAME`).

    python3 -m venv oi043 && oi043/bin/pip install open-interpreter==0.4.3
    oi043/bin/python evals/peers/open_interpreter.py evals/holdout \
        --api-base http://127.0.0.1:8080/v1 --model openai/qwen --out oi-holdout.json

Writes a results file (one entry per task, rewritten after every task) and
prints the success rate with its 95% Wilson interval.
"""

import argparse
import json
import math
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import tomllib
from datetime import datetime, timezone

# The child: one task, one fresh Open Interpreter.
CHILD = r"""
import json, sys
from interpreter import interpreter
settings = json.loads(sys.argv[1])
interpreter.llm.model = settings["model"]
interpreter.llm.api_base = settings["api_base"]
interpreter.llm.api_key = settings.get("api_key") or "none"
if settings.get("context_window"):
    interpreter.llm.context_window = settings["context_window"]
if settings.get("max_tokens"):
    interpreter.llm.max_tokens = settings["max_tokens"]
interpreter.auto_run = True
interpreter.offline = True
interpreter.safe_mode = "off"
messages = interpreter.chat(settings["prompt"], display=False)
print("\n@@OI-MESSAGES@@" + json.dumps(messages, default=str))
"""


def wilson(k, n, z=1.96):
    if n == 0:
        return (0.0, 0.0)
    p = k / n
    d = 1 + z * z / n
    c = p + z * z / (2 * n)
    m = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return ((c - m) / d, (c + m) / d)


def bash(script, cwd, env, timeout=120):
    out = subprocess.run(["bash", script], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    return out.returncode == 0, (out.stdout + out.stderr)[-2000:]


def run_task(task_dir, settings, python):
    spec = tomllib.loads(open(os.path.join(task_dir, "task.toml")).read())
    timeout = spec.get("timeout", 300)
    work = tempfile.mkdtemp(prefix="oi-peer-")
    env = dict(os.environ, OI_TASK_DIR=task_dir, OI_WORKSPACE=work)
    result = {"task": os.path.basename(task_dir), "passed": False, "failure": None}
    try:
        files = os.path.join(task_dir, "files")
        if os.path.isdir(files):
            shutil.copytree(files, work, dirs_exist_ok=True, symlinks=True)
        setup = os.path.join(task_dir, "setup")
        if os.path.exists(setup):
            ok, out = bash(setup, work, env)
            if not ok:
                result.update(failure="setup", check_output=out)
                return result
        child = dict(settings, prompt=spec["prompt"])
        started = time.monotonic()
        proc = subprocess.Popen(
            [python, "-c", CHILD, json.dumps(child)],
            cwd=work,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
        )
        try:
            output, _ = proc.communicate(timeout=timeout)
            timed_out = False
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            output, _ = proc.communicate()
            timed_out = True
        # Kernels OI started may outlive it.
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        result["wall_secs"] = round(time.monotonic() - started, 1)
        result["timed_out"] = timed_out
        head, _, messages = output.partition("@@OI-MESSAGES@@")
        result["log"] = head[-4000:]
        # The kernel OI started may still write (to the same pipe) after
        # the messages: read the JSON value and leave what follows.
        try:
            result["messages"] = json.JSONDecoder().raw_decode(messages)[0] if messages else None
        except json.JSONDecodeError:
            result["messages"] = None
        if not timed_out and proc.returncode != 0:
            result["failure"] = "error"
        ok, out = bash(os.path.join(task_dir, "check"), work, env)
        result["check_output"] = out
        result["passed"] = ok
        if not ok and result["failure"] is None:
            result["failure"] = "timeout" if timed_out else "check"
        return result
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("suite")
    ap.add_argument("--api-base", required=True)
    ap.add_argument("--model", required=True, help="as OI takes it, e.g. openai/qwen2.5-coder")
    ap.add_argument("--api-key", default=None)
    ap.add_argument("--context-window", type=int, default=None)
    ap.add_argument("--max-tokens", type=int, default=None)
    ap.add_argument("--out", default="peer-results.json")
    ap.add_argument("--python", default=sys.executable, help="the Python that has open-interpreter installed")
    ap.add_argument("--task", action="append", help="only this task (repeatable)")
    args = ap.parse_args()

    suite = os.path.abspath(args.suite)
    tasks = sorted(d for d in os.listdir(suite) if os.path.exists(os.path.join(suite, d, "task.toml")))
    if args.task:
        tasks = [t for t in tasks if t in args.task]
    settings = {k: getattr(args, k) for k in ("model", "api_base", "api_key", "context_window", "max_tokens")}
    version = subprocess.run(
        [args.python, "-c", "import importlib.metadata as m; print(m.version('open-interpreter'))"],
        capture_output=True, text=True,
    ).stdout.strip()
    report = {
        "peer": "open-interpreter",
        "peer_version": version,
        "started": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "suite": suite,
        "settings": settings,
        "attempts": [],
    }
    for name in tasks:
        result = run_task(os.path.join(suite, name), settings, args.python)
        report["attempts"].append(result)
        with open(args.out, "w") as f:
            json.dump(report, f, indent=1)
        mark = "pass" if result["passed"] else f"FAIL ({result['failure']})"
        print(f"{name}: {mark} {result.get('wall_secs', 0)} s", flush=True)
    n = len(report["attempts"])
    k = sum(a["passed"] for a in report["attempts"])
    lo, hi = wilson(k, n)
    times = sorted(a["wall_secs"] for a in report["attempts"] if a["passed"])
    median = times[len(times) // 2] if times else 0
    print(f"{k} of {n} passed: {100 * k / max(n, 1):.1f}% (95% interval {100 * lo:.1f}–{100 * hi:.1f}%), median {median} s per success")


if __name__ == "__main__":
    main()
