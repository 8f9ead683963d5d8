#!/usr/bin/env python3
"""The MCP server's call on a shared list, timed as an agent sees it (request written to
reply read over stdio), with a second writer changing the file between calls so that every
call reads it again. Prints median and max in ms; asserts nothing.

Usage: shared_server.py SERVER TASKS CALLS
"""
import json
import os
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "shared"))
import writers  # noqa: E402

server_bin, tasks, calls = os.path.abspath(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
writers.ARGS = type("A", (), {"mcp": server_bin})
base = tempfile.mkdtemp(prefix="rpiv-bench-")
state, project = os.path.join(base, "state"), os.path.join(base, "project")
os.makedirs(state)
os.makedirs(project)
a, b = writers.Server(state, project), writers.Server(state, project)
for i in range(tasks):
    a.call({"action": "create", "subject": f"Task number {i + 1}", "description": "A task of the bench list"})
alone, shared = [], []
for i in range(calls):
    params = {"action": "update", "id": i % tasks + 1, "status": "in_progress" if i % 2 else "pending"}
    t0 = time.perf_counter()
    a.call(params)
    alone.append(time.perf_counter() - t0)
    # The other server's change: a's next call reads the file again.
    b.call({"action": "update", "id": (i + 7) % tasks + 1, "subject": f"Changed {i}"})
    t0 = time.perf_counter()
    a.call(params)
    shared.append(time.perf_counter() - t0)
a.close()
b.close()
size = os.path.getsize(writers.list_file(state, project))
print(f"MCP server, {tasks} tasks ({size / 1e6:.1f} MB file), {calls} calls each; ms, median / max")
print(f"  file unchanged since its last call: {statistics.median(alone) * 1e3:7.2f} / {max(alone) * 1e3:7.2f}")
print(f"  after another server's write:       {statistics.median(shared) * 1e3:7.2f} / {max(shared) * 1e3:7.2f}")
