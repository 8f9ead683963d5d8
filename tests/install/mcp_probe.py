#!/usr/bin/env python3
"""Start an MCP server the way an agent does and report what it answered, as JSON.

    mcp_probe.py [--cwd DIR] [--starts N] [--timeout S] -- COMMAND [ARG...]

Spawns COMMAND with pipes for stdin and stdout (stderr kept), sends `initialize`
(revision 2025-11-25) and times the answer, then `notifications/initialized`,
`tools/list`, and three `tools/call`s of the todo tool: create "Write the parser", list,
and an update of a task that does not exist. Then it closes stdin and waits for the
server to exit. With --starts N the server is started N times (a new process each time,
in the same directory) and every start's initialize time is reported; the calls run in
the first start only. Prints one JSON object:

    {"initialize_ms": [..], "server": {...}, "tools": [...], "output_schema": bool,
     "texts": [...], "is_error": [...], "structured": [...], "exit": N, "stderr": "..."}

`structured` says, for each call, whether the result carried structuredContent. Exits 0
when it could talk to the server at all; the caller checks the values.
"""

import argparse
import json
import os
import selectors
import subprocess
import sys
import time


def request(proc, msg):
    proc.stdin.write((json.dumps(msg) + "\n").encode())
    proc.stdin.flush()


def read_reply(proc, sel, want_id, deadline, buf):
    """The next message with id want_id (other lines, if any, are skipped)."""
    while True:
        while b"\n" in buf[0]:
            line, buf[0] = buf[0].split(b"\n", 1)
            if line.strip():
                msg = json.loads(line)
                if msg.get("id") == want_id:
                    return msg
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError(f"no answer to request {want_id}")
        if not sel.select(timeout=left):
            continue
        chunk = os.read(proc.stdout.fileno(), 65536)
        if not chunk:
            raise EOFError(f"the server closed stdout before answering request {want_id}")
        buf[0] += chunk


def start(command, cwd):
    return subprocess.Popen(
        command,
        cwd=cwd,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "mcp_probe", "version": "1"},
    },
}


def initialize(command, cwd, timeout):
    """One start: the process, the initialize answer, and how long it took (ms)."""
    t0 = time.monotonic()
    proc = start(command, cwd)
    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ)
    buf = [b""]
    request(proc, INIT)
    reply = read_reply(proc, sel, 1, t0 + timeout, buf)
    return proc, sel, buf, reply, (time.monotonic() - t0) * 1000


def finish(proc, timeout):
    proc.stdin.close()
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    return proc.returncode, proc.stderr.read().decode(errors="replace")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--cwd", default=os.getcwd())
    parser.add_argument("--starts", type=int, default=1)
    parser.add_argument("--timeout", type=float, default=20)
    parser.add_argument("command", nargs="+")
    args = parser.parse_args()
    report = {"initialize_ms": [], "texts": [], "is_error": [], "structured": []}
    try:
        proc, sel, buf, reply, ms = initialize(args.command, args.cwd, args.timeout)
        report["initialize_ms"].append(round(ms, 1))
        report["server"] = reply.get("result", {}).get("serverInfo")
        report["protocol"] = reply.get("result", {}).get("protocolVersion")
        request(proc, {"jsonrpc": "2.0", "method": "notifications/initialized"})
        deadline = time.monotonic() + args.timeout
        request(proc, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
        tools = read_reply(proc, sel, 2, deadline, buf).get("result", {}).get("tools", [])
        report["tools"] = [t.get("name") for t in tools]
        report["output_schema"] = any("outputSchema" in t for t in tools)
        calls = [
            {"action": "create", "subject": "Write the parser"},
            {"action": "list"},
            {"action": "update", "id": 9, "status": "completed"},
        ]
        for i, arguments in enumerate(calls):
            request(
                proc,
                {
                    "jsonrpc": "2.0",
                    "id": 10 + i,
                    "method": "tools/call",
                    "params": {"name": "todo", "arguments": arguments},
                },
            )
            result = read_reply(proc, sel, 10 + i, deadline, buf).get("result", {})
            content = result.get("content") or [{}]
            report["texts"].append(content[0].get("text"))
            report["is_error"].append(bool(result.get("isError")))
            report["structured"].append("structuredContent" in result)
        report["exit"], report["stderr"] = finish(proc, args.timeout)
        for _ in range(args.starts - 1):
            proc, _, _, _, ms = initialize(args.command, args.cwd, args.timeout)
            report["initialize_ms"].append(round(ms, 1))
            finish(proc, args.timeout)
    except (OSError, ValueError, TimeoutError, EOFError) as e:
        report["failure"] = f"{type(e).__name__}: {e}"
        print(json.dumps(report))
        return 1
    print(json.dumps(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
