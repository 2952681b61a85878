"""An MCP server written with the official MCP Python SDK (`mcp` from PyPI),
for oi's MCP client tests. Its tools:

- `add(a, b)`: read-only (annotated so), returns the sum as text and data;
- `write_note(name, text)`: writes `notes/NAME.txt` in its working folder
  (not read-only: it changes files);
- `dot()`: an image (a 1x1 PNG);
- `fail()`: a tool that reports an error;
- `crash()`: the server exits;
- `secret()`: not offered (the test configures it as disabled).

`python server.py` serves on stdio; `python server.py --http PORT` serves
streamable HTTP on 127.0.0.1:PORT at /mcp, and then requires the header
`Authorization: Bearer test-token` (a 401 otherwise).
`python server.py --crash` exits before answering.
"""

import base64
import os
import sys

from mcp.server.mcpserver import Image, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ToolAnnotations

if "--crash" in sys.argv:
    print("cannot open the database", file=sys.stderr)
    sys.exit(3)

PORT = int(sys.argv[sys.argv.index("--http") + 1]) if "--http" in sys.argv else 0
server = MCPServer("oi-test-tools")

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8/5+hHgAHggJ/PchI7wAAAABJRU5ErkJggg=="
)


@server.tool(annotations=ToolAnnotations(readOnlyHint=True))
def add(a: int, b: int) -> int:
    """Adds two whole numbers."""
    return a + b


@server.tool()
def write_note(name: str, text: str) -> str:
    """Writes a note to notes/NAME.txt."""
    os.makedirs("notes", exist_ok=True)
    with open(os.path.join("notes", name + ".txt"), "w") as f:
        f.write(text)
    return "saved notes/" + name + ".txt"


@server.tool(annotations=ToolAnnotations(readOnlyHint=True))
def dot() -> Image:
    """A tiny picture."""
    return Image(data=PNG, format="png")


@server.tool(annotations=ToolAnnotations(readOnlyHint=True))
def fail() -> str:
    """Always fails."""
    raise ToolError("the archive is offline")


@server.tool(annotations=ToolAnnotations(readOnlyHint=True))
def crash() -> str:
    """Makes the server exit."""
    print("segfault in the index", file=sys.stderr, flush=True)
    os._exit(1)


@server.tool(annotations=ToolAnnotations(readOnlyHint=True))
def secret() -> str:
    """Should never be offered."""
    return "leaked"


if PORT:
    import uvicorn
    from starlette.middleware.base import BaseHTTPMiddleware
    from starlette.responses import PlainTextResponse

    class RequireToken(BaseHTTPMiddleware):
        async def dispatch(self, request, call_next):
            if request.headers.get("authorization") != "Bearer test-token":
                return PlainTextResponse("unauthorized", status_code=401)
            if request.headers.get("x-team") != "core":
                return PlainTextResponse("missing X-Team", status_code=400)
            return await call_next(request)

    app = server.streamable_http_app(host="127.0.0.1")
    app.add_middleware(RequireToken)
    uvicorn.run(app, host="127.0.0.1", port=PORT, log_level="warning")
else:
    server.run("stdio")
