"""A raw MCP server over stdio (newline-delimited JSON-RPC, no SDK) whose
tools reply with what the test asks for, byte for byte: the tests of
issue 24 (tests/it/mcp_proxy.rs, tests/it/credentials.rs) run it behind
the proxy to send replies no real server is kind enough to send.

Tools:

- `echo` {"text": T, "structured": S?}: a successful reply whose one text
  block is T (and whose structuredContent is S, when given).
- `deep` {"where": W, "depth": N}: a reply nested N levels deep, in its
  `structuredContent` (W = "structured"), its `_meta` ("meta") or, as a
  JSON-RPC error, its `error.data` ("error"); or cut short
  ("truncated": the reply's line ends half-way).
- `environment` {"name": N}: the value of the environment variable N.

The tool list carries the value of the environment variable
`REPLY_TOOL_SUFFIX`, when set, in the name, description and schema of one
more tool, `serverInfo.name` the value of `REPLY_SERVER_NAME`, and stderr
the value of `REPLY_STDERR` at start: a server may put what it was given
anywhere.

    python3 reply_mcp.py
"""

import json
import os
import sys


def send(line):
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def reply(mid, result):
    send(json.dumps({"jsonrpc": "2.0", "id": mid, "result": result}))


def nested(depth):
    return "[" * depth + "]" * depth


TOOLS = [
    {"name": name, "description": "reply with " + name, "inputSchema": {"type": "object"}}
    for name in ("echo", "deep", "environment")
]
suffix = os.environ.get("REPLY_TOOL_SUFFIX")
if suffix:
    TOOLS.append(
        {
            "name": "tool_" + suffix,
            "description": "named after " + suffix,
            "inputSchema": {"type": "object", "description": suffix},
        }
    )

if os.environ.get("REPLY_STDERR"):
    sys.stderr.write("starting with " + os.environ["REPLY_STDERR"] + "\n")
    sys.stderr.flush()

for line in sys.stdin:
    try:
        message = json.loads(line)
    except ValueError:
        continue
    mid = message.get("id")
    method = message.get("method")
    if mid is None:
        continue
    if method == "initialize":
        reply(
            mid,
            {
                "protocolVersion": "2025-06-18",
                "capabilities": {"tools": {}},
                "serverInfo": {"name": os.environ.get("REPLY_SERVER_NAME", "reply"), "version": "1"},
            },
        )
    elif method == "tools/list":
        reply(mid, {"tools": TOOLS})
    elif method == "tools/call":
        name = message["params"]["name"]
        arguments = message["params"].get("arguments") or {}
        if name == "echo":
            result = {"content": [{"type": "text", "text": arguments.get("text", "")}]}
            if "structured" in arguments:
                result["structuredContent"] = arguments["structured"]
            reply(mid, result)
        elif name == "deep":
            where = arguments.get("where")
            deep = nested(int(arguments.get("depth", 200)))
            head = '{"jsonrpc":"2.0","id":%s,' % json.dumps(mid)
            if where == "structured":
                send(head + '"result":{"content":[],"structuredContent":{"x":%s}}}' % deep)
            elif where == "meta":
                send(head + '"result":{"content":[{"type":"text","text":"ok"}],"_meta":{"x":%s}}}' % deep)
            elif where == "error":
                send(head + '"error":{"code":-32000,"message":"x","data":%s}}' % deep)
            else:
                send(head + '"result":{"content":[{"type":"text","text":"cut sh')
        elif name == "environment":
            value = os.environ.get(arguments.get("name", ""), "")
            reply(mid, {"content": [{"type": "text", "text": value}]})
        else:
            send(json.dumps({"jsonrpc": "2.0", "id": mid, "error": {"code": -32601, "message": "no such tool"}}))
    else:
        reply(mid, {})
