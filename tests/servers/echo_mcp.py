"""A real MCP server (the official Python SDK's FastMCP) that echoes what
it was given: the HTTP request's Authorization and X-Api-Key headers and
the ECHO_SECRET environment value, in the reply of its one tool, `query`
(named so the scripted agent calls it), and ECHO_SECRET on stderr at start.

The tests of issue 24, item 27 (tests/it/credentials.rs) run it in front of
the proxy: nothing a profile sets may reach a recorded file. With
ECHO_ENVIRON=1 it also prints its whole environment on stderr at start, one
`ENV NAME=VALUE` line each, and echoes it in its reply (`environ`): what
the runner's environment let through.

    python echo_mcp.py stdio
    python echo_mcp.py streamable-http PORT
"""

import json
import os
import sys

from mcp.server.fastmcp import Context, FastMCP

transport = sys.argv[1]
port = int(sys.argv[2]) if len(sys.argv) > 2 else 8000
server = FastMCP("echo", host="127.0.0.1", port=port)


@server.tool()
def query(query_string: str, ctx: Context) -> str:
    """Says what the server was given (it runs no SPARQL)."""
    request = getattr(ctx.request_context, "request", None)
    headers = dict(request.headers) if request is not None else {}
    seen = {
        "authorization": headers.get("authorization"),
        "x-api-key": headers.get("x-api-key"),
        "env": os.environ.get("ECHO_SECRET"),
    }
    if os.environ.get("ECHO_ENVIRON") == "1":
        seen["environ"] = dict(os.environ)
    # JSON, but no result table; json.dumps writes every character outside
    # ASCII as \uXXXX.
    return json.dumps({"the server saw": seen})


print(
    f"echo server starting, ECHO_SECRET={os.environ.get('ECHO_SECRET')}",
    file=sys.stderr,
    flush=True,
)
if os.environ.get("ECHO_ENVIRON") == "1":
    for name, value in sorted(os.environ.items()):
        print(f"ENV {name}={value}", file=sys.stderr, flush=True)
server.run(transport=transport)
