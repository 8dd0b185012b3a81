"""A second MCP client: the official MCP Python SDK (`mcp` on PyPI) against
Lore's MCP server, over stdio (`lore mcp`, launched here like an agent
does) and over streamable HTTP (the sidecar's /mcp).

Usage: mcp_client.py PHASE TRANSPORT TARGET [ENTRY_ID | FAILURE_ID]
  PHASE      full    list the tools, call each one, send bad arguments
             outage  with the server down: writes succeed, reads say so
             back FAILURE_ID  Lore back, the outage's writes still kept on
                     this machine: a fix of that failure is stored and
                     resolves it (the kept writes went first)
  TRANSPORT  stdio (TARGET: the lore binary) or http (TARGET: the URL)

Prints one JSON object of what it recorded (ids) for the Rust test to
check in the database; any expectation not met fails with a message.
"""

import asyncio
import json
import os
import sys
from contextlib import asynccontextmanager

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

TOOLS = [
    "briefing",
    "search_lessons",
    "triage",
    "get_lesson",
    "record_lesson_use",
    "log_action",
    "resume",
    "report_failure",
    "record_fix",
    "acknowledge_warning",
    "propose_lesson",
]


@asynccontextmanager
async def connect(transport, target):
    if transport == "stdio":
        params = StdioServerParameters(command=target, args=["mcp", "--project", "calc"], env=dict(os.environ))
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                yield session
    else:
        async with streamable_http_client(target) as (read, write, *_):
            async with ClientSession(read, write) as session:
                yield session


def text(result):
    return "".join(block.text for block in result.content if getattr(block, "type", "") == "text")


async def call(session, tool, arguments):
    result = await session.call_tool(tool, arguments)
    assert not result.is_error, f"{tool} {arguments} failed: {text(result)}"
    assert result.structured_content is not None, f"{tool} has no structured content"
    assert text(result), f"{tool} has no text"
    return result


async def refused(session, tool, arguments, field):
    result = await session.call_tool(tool, arguments)
    message = text(result)
    assert result.is_error, f"{tool} {arguments} was accepted: {message}"
    assert message.startswith(field), f"{tool} {arguments}: the error does not name {field}: {message}"


async def full(session):
    initialized = await session.initialize()
    assert initialized.server_info.name == "lore", initialized.server_info
    listed = await session.list_tools()
    names = [tool.name for tool in listed.tools]
    assert names == TOOLS, names
    schemas = {tool.name: tool.input_schema for tool in listed.tools}
    for name, schema in schemas.items():
        assert schema["type"] == "object", (name, schema)
        assert len(next(t for t in listed.tools if t.name == name).description) > 80, name
    assert "semantic" in json.dumps(schemas["search_lessons"]), "the search mode is an enum"
    assert "in_progress" in json.dumps(schemas["log_action"]), "the outcome is an enum"
    assert "required" in schemas["search_lessons"] and "query" in schemas["search_lessons"]["required"]

    briefing = await call(session, "briefing", {"task": "Fix the division by zero in calc.divide", "files": ["src/calc.py"]})
    assert "PAT-DIV" in text(briefing), text(briefing)
    search = await call(session, "search_lessons", {"query": "ZeroDivisionError in calc.divide", "limit": 3})
    hits = search.structured_content["hits"]
    assert hits and hits[0]["key"] == "PAT-DIV", hits
    triaged = await call(session, "triage", {"errors": ["ZeroDivisionError: division by zero in calc.divide", "ModuleNotFoundError: No module named 'numpyy'"]})
    first = triaged.structured_content["results"][0]
    assert first["hits"] and first["hits"][0]["key"] == "PAT-DIV", triaged.structured_content
    assert first["hits"][0]["expand"]["tool"] == "get_lesson", first
    assert 'get_lesson {"entry":"PAT-DIV"}' in text(triaged), text(triaged)
    lesson = await call(session, "get_lesson", {"entry": "PAT-DIV"})
    entry_id = lesson.structured_content["entry_id"]
    solution_id = lesson.structured_content["solutions"][0]["solution_id"]
    assert "solution_id" in text(lesson)
    used = await call(session, "record_lesson_use", {"entry_id": entry_id, "solution_id": solution_id, "worked": True, "minutes": 4})
    logged = await call(
        session,
        "log_action",
        {"action_type": "decision", "outcome": "success", "summary": "guard the divisor", "context": {"password": "hunter2-is-a-secret"}},
    )
    resumed = await call(session, "resume", {})
    failed = await call(session, "report_failure", {"check": "pytest", "output": "E   ZeroDivisionError: division by zero\nFAILED test_calc.py::test_divide", "exit_code": 1})
    failure_id = failed.structured_content["failure_id"]
    fixed = await call(session, "record_fix", {"failure_id": failure_id, "worked": True, "approach": "raise ValueError on zero", "files_changed": ["src/calc.py"]})
    proposed = await call(session, "propose_lesson", {"title": "Guard divisors in calc", "problem": "divide(1, 0) raised ZeroDivisionError.", "solution": "Raise ValueError first."})
    assert resumed is not None

    await refused(session, "search_lessons", {}, "query")
    await refused(session, "search_lessons", {"query": "x", "limit": 99}, "limit")
    await refused(session, "search_lessons", {"query": "x", "mode": "fuzzy"}, "mode")
    await refused(session, "search_lessons", {"query": "x", "lmit": 3}, "lmit")
    await refused(session, "triage", {"errors": []}, "errors")
    await refused(session, "log_action", {"action_type": "Bad Type!", "outcome": "success"}, "action_type")
    await refused(session, "log_action", {"action_type": "plan", "outcome": "maybe"}, "outcome")
    await refused(session, "record_fix", {"failure_id": "nope", "worked": True, "approach": "x"}, "failure_id")
    await refused(session, "record_lesson_use", {"entry_id": entry_id, "worked": "yes"}, "worked")
    await refused(session, "report_failure", {"check": "pytest", "output": "nul\u0000byte"}, "output")
    await refused(session, "get_lesson", {"entry": "  "}, "entry")
    await refused(session, "briefing", {"files": "not-a-list"}, "files")
    await refused(session, "propose_lesson", {"title": "t", "problem": "p"}, "solution")
    try:
        await session.call_tool("no_such_tool", {})
        raise AssertionError("an unknown tool was called")
    except MCPError as error:
        assert "unknown tool" in str(error), error
    return {
        "entry_id": entry_id,
        "application_id": used.structured_content["application_id"],
        "action_id": logged.structured_content["action_id"],
        "failure_id": failure_id,
        "attempt_id": fixed.structured_content["attempt_id"],
        "draft_id": proposed.structured_content["draft_id"],
        "calls": 23,
    }


async def outage(session, entry_id):
    await session.initialize()
    logged = await call(session, "log_action", {"action_type": "note", "outcome": "in_progress", "summary": "the server is away"})
    failed = await call(session, "report_failure", {"check": "cargo test", "output": "error[E0308]: mismatched types"})
    assert failed.structured_content["queued"] is True, failed.structured_content
    fixed = await call(session, "record_fix", {"failure_id": failed.structured_content["failure_id"], "worked": False, "approach": "cast"})
    used = await call(session, "record_lesson_use", {"entry_id": entry_id, "worked": False})
    proposed = await call(session, "propose_lesson", {"title": "Offline lesson", "problem": "p", "solution": "s"})
    for tool, arguments in [("search_lessons", {"query": "divide"}), ("briefing", {"task": "anything"})]:
        result = await session.call_tool(tool, arguments)
        assert result.is_error and "unreachable" in text(result), f"{tool}: {text(result)}"
    return {
        "action_id": logged.structured_content["action_id"],
        "failure_id": failed.structured_content["failure_id"],
        "attempt_id": fixed.structured_content["attempt_id"],
        "application_id": used.structured_content["application_id"],
        "draft_id": proposed.structured_content["draft_id"],
    }


async def back(session, failure_id):
    await session.initialize()
    arguments = {"failure_id": failure_id, "worked": True, "approach": "cast the value", "attempt": 2}
    fixed = await call(session, "record_fix", arguments)
    assert fixed.structured_content["queued"] is False, fixed.structured_content
    assert fixed.structured_content["resolved"] is True, text(fixed)
    return {"attempt_id": fixed.structured_content["attempt_id"]}


async def main():
    phase, transport, target = sys.argv[1:4]
    async with connect(transport, target) as session:
        if phase == "full":
            recorded = await full(session)
        elif phase == "outage":
            recorded = await outage(session, sys.argv[4])
        else:
            recorded = await back(session, sys.argv[4])
    print(json.dumps(recorded))


asyncio.run(main())
