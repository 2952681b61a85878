"""Drives `interpreter mcp-server` with the official MCP Python SDK (`mcp`
from PyPI), unchanged: the client starts the server over stdio, lists the
tools, runs a task (following its progress), continues its session, and asks about a session that
does not exist. Prints one JSON report on stdout for the Rust test to check.

Environment: OI_BIN (the interpreter binary), WORK (the folder the task
works in); the rest of the environment (INTERPRETER_HOME, the mock model
server's configuration) is passed on to the server.
"""

import asyncio
import json
import os

from mcp import ClientSession, StdioServerParameters, stdio_client


def result_json(result):
    return {
        "isError": bool(result.is_error),
        "text": [c.text for c in result.content if getattr(c, "type", None) == "text"],
        "structured": result.structured_content,
    }


async def main():
    params = StdioServerParameters(
        command=os.environ["OI_BIN"],
        args=["mcp-server"],
        env=dict(os.environ),
        cwd=os.environ["WORK"],
    )
    report = {}
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            report["server"] = {"name": init.server_info.name, "protocol": init.protocol_version}
            tools = await session.list_tools()
            report["tools"] = [
                {"name": t.name, "required": t.input_schema.get("required", [])} for t in tools.tools
            ]
            progress = []

            async def on_progress(done, total, message):
                progress.append({"progress": done, "message": message})

            first = await session.call_tool(
                "interpreter",
                {"prompt": "how many lines has data.csv?", "cwd": os.environ["WORK"]},
                progress_callback=on_progress,
            )
            report["first"] = result_json(first)
            report["progress"] = progress
            session_id = (first.structured_content or {}).get("sessionId")
            second = await session.call_tool(
                "interpreter-reply", {"sessionId": session_id, "prompt": "and the sum of column b?"}
            )
            report["second"] = result_json(second)
            try:
                missing = await session.call_tool("interpreter-reply", {"sessionId": "nope", "prompt": "x"})
                report["missing"] = {"result": result_json(missing)}
            except Exception as error:  # the SDK raises the JSON-RPC error
                report["missing"] = {"error": str(error)}
    print(json.dumps(report))


asyncio.run(main())
