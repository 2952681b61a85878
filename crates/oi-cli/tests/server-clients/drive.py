"""The real clients of `interpreter server`: the official OpenAI Python
library against the chat completions endpoint (whole, streamed, the /v1
path, a wrong key) and the `websockets` library speaking Open
Interpreter's LMC chunks (a task, a confirmation answered with `go`, a
client that leaves mid-run). Prints what it saw as JSON."""

import json
import os

import openai
from openai import OpenAI
from websockets.sync.client import connect

url, key = os.environ["SERVER_URL"], os.environ["SERVER_KEY"]
report = {}

client = OpenAI(base_url=f"{url}/openai", api_key=key, max_retries=0)
whole = client.chat.completions.create(
    model="oi",
    messages=[
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "What is 6 times 7?"},
    ],
)
report["whole"] = {
    "content": whole.choices[0].message.content,
    "finish": whole.choices[0].finish_reason,
    "model": whole.model,
    "object": whole.object,
}

parts, finish, objects = [], None, set()
for chunk in client.chat.completions.create(
    model="oi", messages=[{"role": "user", "content": "Say it in the shell"}], stream=True
):
    objects.add(chunk.object)
    if chunk.choices:
        parts.append(chunk.choices[0].delta.content or "")
        finish = chunk.choices[0].finish_reason or finish
report["stream"] = {"text": "".join(parts), "finish": finish, "objects": sorted(objects)}

v1 = OpenAI(base_url=f"{url}/v1", api_key=key, max_retries=0)
report["v1"] = v1.chat.completions.create(
    model="oi", messages=[{"role": "user", "content": "hi"}]
).choices[0].message.content

try:
    OpenAI(base_url=f"{url}/v1", api_key="oi-wrong", max_retries=0).chat.completions.create(
        model="oi", messages=[{"role": "user", "content": "hi"}]
    )
    report["wrong_key"] = "accepted"
except openai.AuthenticationError as error:
    report["wrong_key"] = {"status": error.status_code, "message": error.message}

ws_url = url.replace("http://", "ws://") + "/"


def until_complete(ws):
    chunks = []
    while True:
        chunk = json.loads(ws.recv(timeout=60))
        chunks.append(chunk)
        if chunk.get("role") == "server" and chunk.get("type") == "status":
            return chunks


def say(ws, text):
    ws.send(json.dumps({"role": "user", "type": "message", "start": True}))
    ws.send(json.dumps({"role": "user", "type": "message", "content": text}))
    ws.send(json.dumps({"role": "user", "type": "message", "end": True}))


with connect(ws_url) as ws:
    ws.send(json.dumps({"auth": key}))
    report["ws_ready"] = json.loads(ws.recv(timeout=60))
    ws.send("{not json")
    report["ws_bad"] = json.loads(ws.recv(timeout=60))
    say(ws, "print something")
    report["ws_task"] = until_complete(ws)
    say(ws, "install it")
    seen = []
    while True:
        chunk = json.loads(ws.recv(timeout=60))
        seen.append(chunk)
        if chunk.get("type") == "confirmation":
            ws.send(json.dumps({"role": "user", "type": "command", "content": "go"}))
        if chunk.get("role") == "server" and chunk.get("type") == "status":
            break
    report["ws_confirmed"] = seen

try:
    with connect(ws_url) as ws:
        ws.send(json.dumps({"auth": "oi-wrong"}))
        report["ws_wrong_key"] = json.loads(ws.recv(timeout=30))
except Exception as error:  # the server closes after saying why
    report["ws_wrong_key_error"] = str(error)

with connect(ws_url, additional_headers={"X-API-KEY": key}) as ws:
    ready = json.loads(ws.recv(timeout=60))
    report["ws_left_conversation"] = ready["content"]["conversation"]
    say(ws, "take your time")
    # Leave once the run has started (it prints first).
    while True:
        chunk = json.loads(ws.recv(timeout=60))
        if chunk.get("type") == "console" and "started" in str(chunk.get("content", "")):
            break
# Left mid-run.
print(json.dumps(report))
