"""Drives `interpreter app-server` with the official Codex Python SDK
(`openai-codex` from PyPI, the version .ci/pip pins), unchanged but for
where its binary is: a thread with two turns (code run and approved by
the SDK's own handler, then an image), the thread listed, taken up again by
id in a second client with a structured answer, and a turn that fails.
Prints one JSON report for the Rust test to check.

Every notification is also checked against the SDK's own models, which
are generated from Codex's published schema: the SDK alone would quietly
treat one that does not validate as an unknown notification.
"""

import json
import os
import sys

from openai_codex import Codex, CodexConfig, LocalImageInput, Sandbox, TextInput
from openai_codex.client import CodexClient
from openai_codex.generated.notification_registry import NOTIFICATION_MODELS

problems = []
methods = []
_coerce = CodexClient._coerce_notification


def _strict(self, method, params):
    methods.append(method)
    model = NOTIFICATION_MODELS.get(method)
    if model is None:
        problems.append(f"{method}: not a notification of Codex's schema")
    else:
        try:
            model.model_validate(params if isinstance(params, dict) else {})
        except Exception as error:  # noqa: BLE001 - reported, not raised
            problems.append(f"{method}: {error}")
    return _coerce(self, method, params)


CodexClient._coerce_notification = _strict

work = os.environ["WORK"]
config = CodexConfig(codex_bin=os.environ["OI_BIN"], cwd=work)


def dump(model):
    return model.model_dump(by_alias=True, mode="json", exclude_none=True)


def turn(result):
    return {
        "id": result.id,
        "status": result.status.value,
        "finalResponse": result.final_response,
        "items": [dump(item) for item in result.items],
        "usage": dump(result.usage) if result.usage else None,
    }


report = {}
with Codex(config) as codex:
    report["server"] = dump(codex.metadata)
    thread = codex.thread_start(cwd=work, sandbox=Sandbox.workspace_write)
    report["threadId"] = thread.id
    report["first"] = turn(thread.run("How many lines does data.csv have?"))
    report["second"] = turn(
        thread.run(
            [TextInput("And what is in this picture?"), LocalImageInput(os.environ["IMAGE"])]
        )
    )
    report["listed"] = [t.id for t in codex.thread_list(cwd=work).data]

with Codex(config) as codex:
    thread = codex.thread_resume(report["threadId"])
    report["resumedId"] = thread.id
    report["third"] = turn(
        thread.run(
            "Give the count as JSON.",
            output_schema={
                "type": "object",
                "properties": {"lines": {"type": "integer"}},
                "required": ["lines"],
                "additionalProperties": False,
            },
        )
    )
    try:
        thread.run("One more, please.")
        report["failed"] = None
    except Exception as error:  # noqa: BLE001 - the report says what it was
        report["failed"] = str(error)

report["problems"] = problems
report["methods"] = sorted(set(methods))
json.dump(report, sys.stdout)
print()
