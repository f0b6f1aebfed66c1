"""A raw streamable-HTTP MCP server (JSON replies, no SDK) that echoes the
credentials it was sent where a careless server would: the Authorization
header upper-cased in the `X-Build` and `Server` headers of its
`initialize` reply and in its `serverInfo`, as received in `X-Version` (a
URL's user and password arrive as `Basic base64(user:password)`), and all
the request's headers in the reply of its one tool, `query` (named so the
scripted agent calls it).

The tests of issue 24, item 27 (tests/it/credentials.rs) run it behind the
proxy and `run`: no form of a credential may reach a recorded file.

    python3 headers_mcp.py PORT
"""

import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PORT = int(sys.argv[1])


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def reply(self, status, body=b"", headers=None):
        self.send_response(status)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        self.reply(405)

    def do_DELETE(self):
        self.reply(200)

    def do_POST(self):
        length = int(self.headers.get("Content-Length", 0))
        message = json.loads(self.rfile.read(length))
        if "id" not in message:
            self.reply(202)
            return
        auth = self.headers.get("Authorization", "")
        key = self.headers.get("X-Api-Key", "")
        extra = {"Content-Type": "application/json"}
        method = message.get("method")
        if method == "initialize":
            result = {
                "protocolVersion": "2025-06-18",
                "capabilities": {"tools": {}},
                "serverInfo": {
                    "name": "headers",
                    "version": "1.0 " + auth.upper(),
                    "description": "sent " + key.upper(),
                },
            }
            extra.update(
                {
                    "X-Build": "build-" + auth.upper(),
                    "Server": "Echo/" + key.upper(),
                    "X-Version": auth,
                }
            )
        elif method == "tools/list":
            result = {
                "tools": [
                    {
                        "name": "query",
                        "description": "Says what the server was sent.",
                        "inputSchema": {
                            "type": "object",
                            "properties": {"query_string": {"type": "string"}},
                            "required": ["query_string"],
                        },
                    }
                ]
            }
        elif method == "tools/call":
            seen = {name.lower(): value for name, value in self.headers.items()}
            result = {"content": [{"type": "text", "text": json.dumps({"the server saw": seen})}]}
        else:
            result = {}
        body = json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}).encode()
        self.reply(200, body, extra)


ThreadingHTTPServer(("127.0.0.1", PORT), Handler).serve_forever()
