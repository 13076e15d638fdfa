#!/usr/bin/env python3
"""pvai as an MCP server, through the official Python MCP SDK (`mcp`, pinned in .ci/run), unmodified:

    node test/contract/serve-for-contract.mjs --backend sqlite -- .tools/venv-mcp/bin/python test/clients/python/mcp_client.py

The SDK's Streamable HTTP client connects to /z1/mcp with the server's API key and an end user (`X-PV-User`),
negotiates a protocol version, lists the tools (each with its input schema), and calls each: `remember` then
`recall` (structured output), `search_documents` over a document put through the REST API, `web_search` (the
contract server's stand-in SearXNG), `run_python`, and `forget` of another's memory as the tool's error result; a
wrong key is refused before any tool runs. Every check prints `ok …` or `FAIL …`; the exit status is 1
when any failed.
"""

import asyncio
import json
import os
import secrets
import sys
import traceback
import urllib.request

sys.dont_write_bytecode = True
from mcp import ClientSession  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402
from mcp.shared._httpx_utils import create_mcp_http_client  # noqa: E402

URL = f"{os.environ['PVAI_URL']}/z1/mcp"
API_KEY = os.environ["PVAI_API_KEY"]
USER = f"py-mcp-{secrets.token_hex(4)}"
failures = []


def expect(condition, message):
    if condition:
        print(f"ok   {message}")
    else:
        print(f"FAIL {message}")
        failures.append(message)


def structured(result):
    return result.structured_content if hasattr(result, "structured_content") else result.structuredContent


def is_error(result):
    return result.is_error if hasattr(result, "is_error") else result.isError


def put_document(content):
    """A document of the end user, through the ordinary REST operation (ready when it answers 201)."""
    body = json.dumps({"user_id": USER, "title": "Ferry", "content": content}).encode()
    request = urllib.request.Request(
        f"{os.environ['PVAI_URL']}/z1/rag/documents",
        data=body,
        headers={"Authorization": f"Bearer {API_KEY}", "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request) as response:
        expect(response.status == 201, "a document put through /z1/rag/documents")


async def session_checks():
    headers = {"Authorization": f"Bearer {API_KEY}", "X-PV-User": USER}
    async with create_mcp_http_client(headers=headers) as http:
        async with streamable_http_client(URL, http_client=http, terminate_on_close=False) as (read, write):
            async with ClientSession(read, write) as session:
                init = await session.initialize()
                info = init.server_info if hasattr(init, "server_info") else init.serverInfo
                version = init.protocol_version if hasattr(init, "protocol_version") else init.protocolVersion
                expect(info.name == "pvai", f"initialize: server {info.name}, protocol {version}")

                tools = {t.name: t for t in (await session.list_tools()).tools}
                expected = {"search_documents", "remember", "recall", "forget", "run_python", "web_search"}
                expect(expected <= set(tools), f"tools/list: {sorted(tools)}")
                schema = getattr(tools["remember"], "input_schema", None) or tools["remember"].inputSchema
                expect("content" in schema.get("properties", {}), "remember's input schema names content")

                fact = f"My favourite tea is {secrets.token_hex(3)} oolong"
                stored = await session.call_tool("remember", {"content": fact})
                memory = structured(stored) or {}
                expect(not is_error(stored) and memory.get("content") == fact, f"remember: {memory}")

                found = await session.call_tool("recall", {"query": "favourite tea", "k": 3})
                memories = (structured(found) or {}).get("memories", [])
                expect(any(m.get("content") == fact for m in memories), f"recall finds it: {len(memories)} memories")

                put_document(f"The harbour ferry for {USER} leaves at 07:45 from pier 3.")
                searched = await session.call_tool("search_documents", {"query": "harbour ferry pier", "k": 3})
                results = (structured(searched) or {}).get("results", [])
                expect(any("07:45" in r.get("text", "") for r in results), f"search_documents: {len(results)} results")

                web = await session.call_tool("web_search", {"query": "harbour ferry timetable"})
                pages = (structured(web) or {}).get("results", [])
                expect(not is_error(web) and len(pages) > 0 and pages[0].get("url"), f"web_search: {len(pages)} pages")

                ran = await session.call_tool("run_python", {"code": "print(6 * 7)"})
                output = (structured(ran) or {}).get("output", "")
                expect(not is_error(ran) and output.strip() == "42", f"run_python prints {output.strip()!r}")

                refused = await session.call_tool("forget", {"memory_id": "mem_not_theirs"})
                text = refused.content[0].text if refused.content else ""
                expect(is_error(refused) and "NOT_FOUND" in text, f"forget another's memory: tool error {text[:60]!r}")


async def wrong_key():
    headers = {"Authorization": "Bearer pv_wrong_key", "X-PV-User": USER}
    statuses = []

    async def record(response):
        statuses.append(response.status_code)

    try:
        async with create_mcp_http_client(headers=headers) as http:
            http.event_hooks = {"request": [], "response": [record]}
            async with streamable_http_client(URL, http_client=http, terminate_on_close=False) as (read, write):
                async with ClientSession(read, write) as session:
                    await asyncio.wait_for(session.initialize(), 20)
        expect(False, "a wrong key is refused")
    except BaseException as err:  # the SDK surfaces the 401 as an exception group or an McpError
        # The SDK reports an HTTP error as a JSON-RPC error without its status: the status is read off the wire.
        said = " ".join(repr(e) for e in leaves(err))
        expect(statuses == [401], f"a wrong key is refused with 401 ({statuses}; the SDK raised {said[:80]})")


def leaves(err):
    """The exceptions an exception group holds, however nested (the error itself when it is none)."""
    inner = getattr(err, "exceptions", None)
    if not inner:
        return [err]
    return [leaf for e in inner for leaf in leaves(e)]


async def main():
    for checks in (session_checks, wrong_key):
        try:
            await checks()
        except Exception:
            traceback.print_exc()
            failures.append(checks.__name__)
            print(f"FAIL {checks.__name__} raised")
    if failures:
        print(f"mcp: {len(failures)} failed")
        sys.exit(1)
    print("mcp: all passed")


asyncio.run(main())
