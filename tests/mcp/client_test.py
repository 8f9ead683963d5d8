"""tests/mcp/client_test.py: the MCP server (scripts/mcp.sh) against a real client, the
official Python SDK (`mcp` on PyPI).

The SDK spawns the server over stdio through a `tee`, so every line the server writes is
also kept raw; the test lists the tools, creates three tasks with a dependency, updates
one, lists, and sends a bad call. The reply texts are hand-written literals of what the
reducer answers; the tool and each result are validated against the published schema of
MCP 2025-11-25, and so is every message the server sent (JSON-RPC message, and each
result against the result type of the request it answers). It also checks that the list
was saved in the state directory given with --state-dir, in the one file
rpiv_todo.persist names after the working directory and the session.

It does all that twice, in two projects: as the server starts by default (each result is
the reply text as content and nothing else: no structuredContent, no outputSchema), and
with --structured (the tool declares an outputSchema; each result also has
structuredContent, the reply text as its first field, then the call echoed and the list,
validated against that outputSchema by the SDK and by this test). The structured run
turns it on from the config file (`return { structured = true }`) and the default run
checks that a config returning nothing leaves it off. Last, scripts/mcp.sh is started five
times (tests/install/mcp_probe.py) and must answer initialize in under 100 ms.

    python3 tests/mcp/client_test.py [SCHEMA_DIR]

SCHEMA_DIR holds schema-2025-11-25.json (default: $RPIV_DEPS/model-context-protocol, then
../shared/deps/model-context-protocol). Exit status 0 when everything passed; prints
"N passed, N failed".
"""

import asyncio
import json
import os
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

import jsonschema
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

ROOT = Path(__file__).resolve().parents[2]
PASSED = 0
FAILED = 0


def check(cond, what, got=None):
    global PASSED, FAILED
    if cond:
        PASSED += 1
        print(f"ok - {what}")
    else:
        FAILED += 1
        print(f"not ok - {what}" + (f"\n         got: {got!r}" if got is not None else ""))


def eq(got, want, what):
    check(got == want, what if got == want else f"{what}\n    expected: {want!r}", got if got != want else None)


def schema_dir():
    if len(sys.argv) > 1:
        return Path(sys.argv[1])
    deps = os.environ.get("RPIV_DEPS") or str(ROOT.parent / "shared" / "deps")
    return Path(deps) / "model-context-protocol"


def validator_for(schema, name):
    """A validator of one definition of the published schema (draft 2020-12)."""
    sub = {"$schema": schema["$schema"], "$defs": schema["$defs"], "$ref": f"#/$defs/{name}"}
    return jsonschema.Draft202012Validator(sub)


def wire(model):
    """An SDK object as it travels on the wire: camelCase keys, no unset fields."""
    return model.model_dump(by_alias=True, exclude_none=True, mode="json")


def errors_of(validator, value):
    return [f"{'/'.join(map(str, e.path))}: {e.message}" for e in validator.iter_errors(value)]


async def run(schema, workdir, state_dir, raw_log, structured):
    tool_validator = validator_for(schema, "Tool")
    call_validator = validator_for(schema, "CallToolResult")
    mcp_sh = str(ROOT / "scripts" / "mcp.sh")
    mode = "--structured" if structured else "default"
    config_dir = workdir / "config" / "rpiv_todo"
    config_dir.mkdir(parents=True)
    # The structured run turns it on from the config file; the default run has a config
    # that returns nothing.
    (config_dir / "mcp.lua").write_text("return { structured = true }\n" if structured else "local unused = 1\n")
    # tee keeps every byte each side writes; the other side reads the same bytes.
    command = (
        f"set -o pipefail; tee -a {shlex.quote(str(raw_log))}.in"
        f" | {shlex.quote(mcp_sh)} --state-dir {shlex.quote(str(state_dir))}"
        f" | tee -a {shlex.quote(str(raw_log))}"
    )
    params = StdioServerParameters(
        command="bash",
        args=["-c", command],
        cwd=str(workdir),
        env={**os.environ, "XDG_CONFIG_HOME": str(workdir / "config")},
    )
    texts = []
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            init = wire(await session.initialize())
            eq(init["protocolVersion"], "2025-11-25", f"{mode}: the revision agreed on")
            eq(init["serverInfo"]["name"], "rpiv_todo", "server name")

            tools = await session.list_tools()
            eq([t.name for t in tools.tools], ["todo"], "one tool, todo")
            tool = wire(tools.tools[0])
            errs = errors_of(tool_validator, tool)
            eq(errs, [], f"{mode}: the tool validates against the schema's Tool")
            output_validator = None
            if structured:
                output = tool.get("outputSchema")
                check(output is not None, "--structured: the tool declares an outputSchema", tool)
                if output is not None:
                    jsonschema.Draft202012Validator.check_schema(output)
                    eq(output.get("type"), "object", "--structured: outputSchema is an object schema")
                    eq(output.get("required"), ["text", "tasks", "nextId"], "--structured: outputSchema.required")
                    output_validator = jsonschema.Draft202012Validator(output)
            else:
                eq(tool.get("outputSchema"), None, "default: no outputSchema")
            eq(tool["inputSchema"]["required"], ["action"], "inputSchema.required")
            eq(
                tool["inputSchema"]["properties"]["action"]["enum"],
                ["create", "update", "list", "get", "delete", "clear"],
                "the six actions",
            )
            check(
                '{"action":"update","id":3,"status":"completed"}' in tool["description"],
                "the guidance is in the description",
            )
            jsonschema.Draft202012Validator.check_schema(tool["inputSchema"])
            check(True, "inputSchema is a valid draft 2020-12 schema")

            calls = [
                ({"action": "create", "subject": "Write the parser"}, "Created #1: Write the parser (pending)", False),
                ({"action": "create", "subject": "Write the tests"}, "Created #2: Write the tests (pending)", False),
                (
                    {"action": "create", "subject": "Ship it", "blockedBy": [1, 2]},
                    "Created #3: Ship it (pending)",
                    False,
                ),
                (
                    {"action": "update", "id": 1, "status": "in_progress", "activeForm": "Writing the parser"},
                    "Updated #1 (pending → in_progress)",
                    False,
                ),
                (
                    {"action": "list"},
                    "[in_progress] #1 Write the parser (Writing the parser)\n"
                    "[pending] #2 Write the tests\n"
                    "[pending] #3 Ship it ⛓ #1,#2",
                    False,
                ),
                ({"action": "update", "id": 9, "status": "completed"}, "Error: #9 not found", True),
            ]
            for args, want_text, want_error in calls:
                result = wire(await session.call_tool("todo", args))
                what = f"{mode} {json.dumps(args)}"
                eq(errors_of(call_validator, result), [], f"{what}: validates as CallToolResult")
                eq([c["type"] for c in result["content"]], ["text"], f"{what}: one text block")
                eq(result["content"][0]["text"], want_text, f"{what}: reply text")
                eq(result.get("isError", False), want_error, f"{what}: isError")
                texts.append(result["content"][0]["text"])
                if not structured:
                    eq(result.get("structuredContent"), None, f"{what}: no structuredContent")
                    continue
                details = result.get("structuredContent") or {}
                eq(list(details)[:1], ["text"], f"{what}: structuredContent starts with text")
                eq(details.get("text"), want_text, f"{what}: structuredContent.text is the reply text")
                eq(details.get("action"), args["action"], f"{what}: structuredContent.action")
                eq(details.get("params"), args, f"{what}: structuredContent.params")
                if output_validator is not None:
                    eq(errors_of(output_validator, details), [], f"{what}: structuredContent validates against outputSchema")
                if want_error:
                    eq(details.get("error"), "#9 not found", f"{what}: structuredContent.error")
                else:
                    check("error" not in details, f"{what}: no structuredContent.error", details)
            if structured:
                final = result["structuredContent"]
                eq(final["nextId"], 4, "--structured: nextId after three creates")
                eq(
                    [(t["id"], t["status"], t.get("blockedBy")) for t in final["tasks"]],
                    [(1, "in_progress", None), (2, "pending", None), (3, "pending", [1, 2])],
                    "--structured: the tasks after the bad call are unchanged",
                )
            else:
                listed = wire(await session.call_tool("todo", {"action": "list"}))
                eq(
                    listed["content"][0]["text"],
                    calls[4][1],
                    "default: the list after the bad call is unchanged",
                )
    return texts


def validate_raw(schema, raw_log, structured):
    """Every line the server wrote is a JSON-RPC message of the schema, and each result
    validates as the result type of the request it answers (found by id among the lines
    the client wrote)."""
    message = validator_for(schema, "JSONRPCMessage")
    by_method = {
        "initialize": validator_for(schema, "InitializeResult"),
        "tools/list": validator_for(schema, "ListToolsResult"),
        "tools/call": validator_for(schema, "CallToolResult"),
    }
    asked = {}
    for line in Path(str(raw_log) + ".in").read_text().splitlines():
        if line.strip():
            msg = json.loads(line)
            if "method" in msg and "id" in msg:
                asked[msg["id"]] = msg["method"]
    eq(sorted(set(asked.values())), ["initialize", "tools/call", "tools/list"], "what the client asked")
    lines = [line for line in raw_log.read_text().splitlines() if line.strip()]
    eq(len(lines), len(asked), "one answer per request, nothing else")
    bad = []
    for i, line in enumerate(lines):
        try:
            msg = json.loads(line)
        except ValueError as e:
            bad.append(f"line {i + 1} is not JSON: {e}")
            continue
        bad += [f"line {i + 1}: {e}" for e in errors_of(message, msg)]
        method = asked.get(msg.get("id"))
        if "result" in msg:
            if method not in by_method:
                bad.append(f"line {i + 1}: answers no request the client sent ({msg.get('id')!r})")
            else:
                bad += [f"line {i + 1} ({method}): {e}" for e in errors_of(by_method[method], msg["result"])]
        if "error" in msg:
            bad.append(f"line {i + 1}: a protocol error: {msg['error']}")
        if method == "tools/call" and "result" in msg:
            result = msg["result"]
            if structured:
                # The order on the wire: the reply text is the first field.
                if list(result.get("structuredContent") or {})[:1] != ["text"]:
                    bad.append(f"line {i + 1}: structuredContent does not start with text")
            elif "structuredContent" in result:
                bad.append(f"line {i + 1}: structuredContent sent without --structured")
    mode = "--structured" if structured else "default"
    eq(bad, [], f"{mode}: every message the server sent ({len(lines)}) validates against the schema")


def check_2026(schema_2026, workdir, state_dir):
    """MCP 2026-07-28 has no `initialize`: each request names its revision in `_meta`. The
    Python SDK does not speak it yet, so this talks to the server directly: `server/discover`,
    `tools/list` and a call, each answer validated as the schema's result type, and the call
    runs in the same list as the 2025-11-25 session before it."""
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "client_test", "version": "1"},
    }
    requests = [
        ("server/discover", {"_meta": meta}, "DiscoverResult"),
        ("tools/list", {"_meta": meta}, "ListToolsResult"),
        ("tools/call", {"_meta": meta, "name": "todo", "arguments": {"action": "get", "id": 3}}, "CallToolResult"),
    ]
    lines = "".join(
        json.dumps({"jsonrpc": "2.0", "id": i + 1, "method": method, "params": params}) + "\n"
        for i, (method, params, _) in enumerate(requests)
    )
    proc = subprocess.run(
        [str(ROOT / "scripts" / "mcp.sh"), "--state-dir", str(state_dir)],
        input=lines,
        capture_output=True,
        text=True,
        cwd=workdir,
        timeout=600,
        env={**os.environ, "XDG_CONFIG_HOME": str(workdir / "no-config")},
    )
    replies = {}
    message = validator_for(schema_2026, "JSONRPCMessage")
    for line in proc.stdout.splitlines():
        if line.strip():
            msg = json.loads(line)
            eq(errors_of(message, msg), [], f"2026-07-28: a {list(msg)} message validates")
            replies[msg.get("id")] = msg
    for i, (method, _, kind) in enumerate(requests):
        reply = replies.get(i + 1, {})
        check("result" in reply, f"2026-07-28 {method}: a result", reply)
        if "result" in reply:
            eq(errors_of(validator_for(schema_2026, kind), reply["result"]), [], f"2026-07-28 {method}: a valid {kind}")
    discover = replies.get(1, {}).get("result", {})
    check("2026-07-28" in discover.get("supportedVersions", []), "discover names 2026-07-28", discover)
    call = replies.get(3, {}).get("result", {})
    eq(
        (call.get("content") or [{}])[0].get("text"),
        "#3 [pending] Ship it\n  blockedBy: #1, #2",
        "2026-07-28 tools/call: the saved list, read by a new server",
    )


def start_time(workdir, state_dir):
    """scripts/mcp.sh answers initialize in under 100 ms (the best of five starts: the
    machine may be busy), and says nothing on stderr."""
    sys.path.insert(0, str(ROOT / "tests" / "install"))
    sys.dont_write_bytecode = True  # no __pycache__ left in tests/install
    import mcp_probe

    times = []
    command = [str(ROOT / "scripts" / "mcp.sh"), "--state-dir", str(state_dir)]
    for _ in range(5):
        proc, _, _, reply, ms = mcp_probe.initialize(command, str(workdir), 30)
        code, stderr = mcp_probe.finish(proc, 30)
        times.append(round(ms, 1))
        eq((reply.get("result") or {}).get("serverInfo", {}).get("name"), "rpiv_todo", "scripts/mcp.sh: initialize answered")
        eq((code, stderr), (0, ""), "scripts/mcp.sh: exit 0 on EOF, nothing on stderr")
    print(f"# scripts/mcp.sh initialize, ms: {times}")
    check(min(times) < 100, f"scripts/mcp.sh answers initialize in under 100 ms (best {min(times)} ms)")


def saved_list(state_dir, mode):
    """One file in the state directory: the project's list, named by rpiv_todo.persist (as
    the editor names it), holding the three tasks."""
    saved = sorted(state_dir.glob("*.json"))
    eq(len(saved), 1, f"{mode}: one list file in the state directory")
    if saved:
        check(saved[0].name.endswith("@default.json"), f"{mode}: the directory's default list: {saved[0].name}")
        state = json.loads(saved[0].read_text())
        eq(
            [(t["id"], t["subject"], t["status"]) for t in state["tasks"]],
            [(1, "Write the parser", "in_progress"), (2, "Write the tests", "pending"), (3, "Ship it", "pending")],
            f"{mode}: the saved list",
        )


def main():
    schema_path = schema_dir() / "schema-2025-11-25.json"
    if not schema_path.is_file():
        print(f"skipped: {schema_path} not found (set RPIV_DEPS to the folder of the pinned deps)")
        return 1
    schema = json.loads(schema_path.read_text())
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        for structured in (False, True):
            mode = "--structured" if structured else "default"
            name = "structured" if structured else "default"
            workdir = tmp / f"project-{name}"
            workdir.mkdir()
            state_dir = tmp / f"state-{name}"
            raw_log = tmp / f"server-{name}.jsonl"
            texts = asyncio.run(run(schema, workdir, state_dir, raw_log, structured))
            eq(len(texts), 6, f"{mode}: six calls answered")
            validate_raw(schema, raw_log, structured)
            if not structured:
                schema_2026_path = schema_path.parent / "schema-2026-07-28.json"
                if schema_2026_path.is_file():
                    check_2026(json.loads(schema_2026_path.read_text()), workdir, state_dir)
                else:
                    check(False, f"{schema_2026_path} not found")
            saved_list(state_dir, mode)
        start_time(tmp / "project-default", tmp / "state-default")
    print(f"{PASSED} passed, {FAILED} failed")
    return 0 if FAILED == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
