#!/usr/bin/env python3
# Usage: python scripts/peer-catalog-run.py RESULTS.json [OKN_BENCHMARK] (docs/PERFORMANCE.md, "catalog run").
# Peer for `catalog run`: the official MCP Python SDK making the same tool calls,
# one fresh stdio session per phrasing, as catalog run does (SPARQL recipes aside).
import asyncio, json, sys, time
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
calls = []
for q in json.load(open(sys.argv[1]))["queries"]:
    for p in q["phrasings"]:
        if p["tool"] != "SPARQL":
            calls.append((p["tool"], p["arguments"]))
async def main():
    params = StdioServerParameters(command=sys.argv[2] if len(sys.argv) > 2 else "okn-benchmark", args=["kg-server", "--data", "demo/kg"])
    for tool, args in calls:
        async with stdio_client(params) as (r, w):
            async with ClientSession(r, w) as s:
                await s.initialize()
                await s.call_tool(tool, args)
t = time.time(); asyncio.run(main()); print(f"{len(calls)} calls in {time.time()-t:.2f} s")
