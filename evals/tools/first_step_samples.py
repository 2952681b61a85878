#!/usr/bin/env python3
"""How much sampling a small model's first step several times, and voting
among the samples, could add: an offline measurement on an eval suite.

For each task of SUITE:

1. oi makes the task's first request as it does in `interpreter eval`
   (its system prompt, the task with its first look, the reply grammar):
   the suite is run once with `-c max_turns=1` against a small logging
   proxy in front of the model server, which keeps each request's body.
2. That request is sent again K+1 times without streaming: once greedy
   (temperature 0, oi's default for small local models) and K times at
   `--temperature`, each with its own seed.
3. Each reply's code block runs (Python with `python3`, anything else with
   `bash`) in a fresh copy of the task's files, and the task's own `check`
   judges the workspace, as if the task had ended after that one step.
4. A vote picks one reply among those whose code ran without error, by
   what the run left (the files of the workspace, or its output when it
   changed no file): the largest group of alike results, the greedy
   reply's group on a tie; a lone result replaces the greedy one only when
   the greedy reply's code failed.

It prints, for votes among the first 3 and all K+1 replies: how many tasks
the greedy step passes, how many the voted step passes, and which changed;
and how many tasks any reply passes (what a perfect pick would reach).

This judges one step only. In a real task oi's notes fix many first steps
afterwards, so a gain here is an upper bound on the gain in success rate.

The candidates' code runs without oi's sandbox, in temporary folders:
run it on a machine and suite you trust, as the eval suites of this
repository are.

    localmodel serve 1.5b 8080 2 4096 &
    python3 evals/tools/first_step_samples.py evals/dev \
        --interpreter target/release/interpreter --server http://127.0.0.1:8080 \
        --samples 4 --temperature 0.7 --out samples.jsonl
"""

import argparse
import collections
import hashlib
import http.server
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import urllib.error
import urllib.request


def capture_first_requests(suite, interpreter, server, jobs_dir):
    """Runs the suite for one turn per task through a logging proxy; returns
    each task's first request body, by task name."""
    log = []
    lock = threading.Lock()

    class Proxy(http.server.BaseHTTPRequestHandler):
        def forward(self, method):
            length = int(self.headers.get("content-length") or 0)
            body = self.rfile.read(length) if length else None
            if method == "POST" and body and self.path.endswith("/chat/completions"):
                with lock:
                    log.append(json.loads(body))
            request = urllib.request.Request(server + self.path, data=body, method=method)
            for key, value in self.headers.items():
                if key.lower() in ("content-type", "authorization", "accept"):
                    request.add_header(key, value)
            try:
                response = urllib.request.urlopen(request, timeout=900)
                status, headers, data = response.status, response.headers, response.read()
            except urllib.error.HTTPError as error:
                status, headers, data = error.code, error.headers, error.read()
            self.send_response(status)
            if headers.get("content-type"):
                self.send_header("content-type", headers["content-type"])
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self):
            self.forward("GET")

        def do_POST(self):
            self.forward("POST")

        def log_message(self, *args):
            pass

    proxy = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Proxy)
    threading.Thread(target=proxy.serve_forever, daemon=True).start()
    address = f"127.0.0.1:{proxy.server_address[1]}"
    results = os.path.join(jobs_dir, "first-step.json")
    env = dict(os.environ, OI_LOCAL_SERVERS=address)
    # One task at a time, so the requests come in the suite's order.
    subprocess.run(
        [interpreter, "eval", suite, "--local", "-c", "max_turns=1", "--out", results],
        env=env,
        check=True,
        stdout=subprocess.DEVNULL,
    )
    proxy.shutdown()
    attempts = json.load(open(results))["attempts"]
    first = {}
    # The first request of each task is the first after the one before it
    # ended: with max_turns=1 each task makes exactly one.
    if len(log) != len(attempts):
        sys.exit(f"expected one request per task, got {len(log)} for {len(attempts)} tasks")
    for attempt, body in zip(attempts, log):
        first[attempt["task"]] = body
    return first


def ask(server, body, temperature, seed):
    body = dict(body, stream=False, temperature=temperature, seed=seed)
    body.pop("stream_options", None)
    request = urllib.request.Request(
        server + "/v1/chat/completions",
        data=json.dumps(body).encode(),
        headers={"content-type": "application/json"},
    )
    reply = json.load(urllib.request.urlopen(request, timeout=900))
    return reply["choices"][0]["message"].get("content") or ""


def code_block(reply):
    match = re.search(r"```([A-Za-z0-9_+-]*)\n(.*?)```", reply, re.S)
    if not match:
        return None, None
    return (match.group(1) or "python").lower(), match.group(2)


def fingerprint(workspace):
    digest = hashlib.sha256()
    for root, dirs, files in os.walk(workspace):
        dirs[:] = sorted(d for d in dirs if d not in (".git", "__pycache__"))
        for name in sorted(files):
            path = os.path.join(root, name)
            digest.update(os.path.relpath(path, workspace).encode())
            with open(path, "rb") as f:
                digest.update(f.read())
    return digest.hexdigest()[:16]


def try_reply(task_dir, reply):
    """Runs a reply's code in a fresh copy of the task's files and checks
    the result."""
    workspace = tempfile.mkdtemp(prefix="oi-sample-")
    script = tempfile.NamedTemporaryFile("w", suffix=".code", delete=False)
    try:
        files = os.path.join(task_dir, "files")
        if os.path.isdir(files):
            shutil.copytree(files, workspace, dirs_exist_ok=True)
        env = dict(os.environ, OI_WORKSPACE=workspace, OI_TASK_DIR=task_dir)
        setup = os.path.join(task_dir, "setup")
        if os.path.exists(setup):
            subprocess.run(["bash", setup], cwd=workspace, env=env, capture_output=True)
        before = fingerprint(workspace)
        language, code = code_block(reply)
        ran, output = False, ""
        if code is not None:
            script.write(code)
            script.close()
            runner = "python3" if language in ("python", "py", "python3") else "bash"
            try:
                run = subprocess.run(
                    [runner, script.name], cwd=workspace, env=env,
                    capture_output=True, text=True, timeout=60,
                )
                ran, output = run.returncode == 0, run.stdout
            except subprocess.TimeoutExpired:
                pass
        after = fingerprint(workspace)
        check = subprocess.run(
            ["bash", os.path.join(task_dir, "check")],
            cwd=workspace, env=env, capture_output=True,
        )
        left = after if after != before else "output " + hashlib.sha256(output.encode()).hexdigest()[:16]
        return {"ran": ran, "passed": check.returncode == 0, "left": left}
    finally:
        script.close()
        os.unlink(script.name)
        shutil.rmtree(workspace, ignore_errors=True)


def vote(replies):
    """The index of the reply a vote picks (0 is the greedy one)."""
    groups = collections.defaultdict(list)
    for i, reply in enumerate(replies):
        if reply["ran"]:
            groups[reply["left"]].append(i)
    if not groups:
        return 0
    largest = max(len(g) for g in groups.values())
    tops = [g for g in groups.values() if len(g) == largest]
    if any(0 in g for g in tops) or (largest == 1 and replies[0]["ran"]):
        return 0
    return min(g[0] for g in tops)


def wilson(k, n):
    if n == 0:
        return (0.0, 0.0)
    z = 1.96
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return (100 * (centre - half), 100 * (centre + half))


def share(k, n):
    low, high = wilson(k, n)
    return f"{k}/{n} ({100 * k / n:.1f}%, {low:.1f}–{high:.1f}%)"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("suite")
    parser.add_argument("--interpreter", required=True, help="the interpreter binary")
    parser.add_argument("--server", default="http://127.0.0.1:8080", help="the model server")
    parser.add_argument("--samples", type=int, default=4, help="sampled replies per task, beside the greedy one")
    parser.add_argument("--temperature", type=float, default=0.7)
    parser.add_argument("--out", required=True, help="where each task's replies and results go (JSON lines)")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="oi-first-step-") as jobs:
        first = capture_first_requests(args.suite, args.interpreter, args.server, jobs)
    records = []
    with open(args.out, "w") as out:
        for task in sorted(first):
            task_dir = os.path.join(args.suite, task)
            replies = []
            for i in range(args.samples + 1):
                temperature = 0.0 if i == 0 else args.temperature
                text = ask(args.server, first[task], temperature, 1000 + i)
                replies.append(dict(try_reply(task_dir, text), temperature=temperature, reply=text))
            records.append({"task": task, "replies": replies})
            out.write(json.dumps(records[-1]) + "\n")
            out.flush()
            marks = " ".join("P" if r["passed"] else ("r" if r["ran"] else "x") for r in replies)
            print(f"{task}: {marks}", flush=True)

    n = len(records)
    greedy = sum(r["replies"][0]["passed"] for r in records)
    sampled = [s for r in records for s in r["replies"][1:]]
    print(f"greedy first step passes {share(greedy, n)}")
    print(f"a sampled first step passes {share(sum(s['passed'] for s in sampled), len(sampled))}")
    for size in sorted({min(3, args.samples + 1), args.samples + 1}):
        picked = [r["replies"][:size][vote(r["replies"][:size])] for r in records]
        changed = [
            f"{r['task']} {'+' if p['passed'] else '-'}"
            for r, p in zip(records, picked)
            if p["passed"] != r["replies"][0]["passed"]
        ]
        print(f"vote among {size}: {share(sum(p['passed'] for p in picked), n)}; changed: {', '.join(changed) or 'none'}")
    print(f"any reply passes: {share(sum(any(x['passed'] for x in r['replies']) for r in records), n)}")


if __name__ == "__main__":
    main()
