#!/usr/bin/env python3
"""The list as an MCP resource (`--resources`), and `rpiv-todo-mcp export`, over raw stdio
against the built server: the resources capability with subscribe; resources/list names one text/markdown
resource; resources/read gives the Markdown checklist; a subscribed client is sent
notifications/resources/updated when another server changes the list file, and not for its
own calls; an unknown URI is -32002; export prints the same checklist.

Usage: resource_test.py SERVER_BINARY
"""

import json
import os
import select
import shutil
import subprocess
import sys
import tempfile
import time

FAILED = []


def check(cond, message):
    print(("ok - " if cond else "not ok - ") + message, flush=True)
    if not cond:
        FAILED.append(message)


class Client:
    def __init__(self, binary, state, project, name):
        self.proc = subprocess.Popen([binary, "--state-dir", state, "--resources"], cwd=project,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE)
        self.next = 0
        self.pending = []  # notifications read while waiting for a reply
        self.info = self.rpc("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                            "clientInfo": {"name": name, "version": "1"}})
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, msg):
        self.proc.stdin.write((json.dumps(msg) + "\n").encode())
        self.proc.stdin.flush()

    def read(self, timeout):
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        if not ready:
            return None
        line = self.proc.stdout.readline()
        return json.loads(line) if line else None

    def rpc(self, method, params):
        self.next += 1
        self.send({"jsonrpc": "2.0", "id": self.next, "method": method, "params": params})
        while True:
            msg = self.read(30)
            if msg is None:
                raise EOFError(self.proc.stderr.read().decode(errors="replace"))
            if msg.get("id") == self.next:
                return msg
            self.pending.append(msg)

    def notifications(self, seconds):
        end = time.monotonic() + seconds
        out, self.pending = self.pending, []
        while time.monotonic() < end:
            msg = self.read(max(0.0, end - time.monotonic()))
            if msg is not None:
                out.append(msg)
        return [m for m in out if m.get("method") == "notifications/resources/updated"]

    def call(self, args):
        return self.rpc("tools/call", {"name": "todo", "arguments": args})["result"]["content"][0]["text"]

    def close(self):
        self.proc.stdin.close()
        self.proc.wait(10)


def main():
    binary = sys.argv[1]
    base = tempfile.mkdtemp(prefix="rpiv-resource-")
    state, project = os.path.join(base, "state"), os.path.join(base, "project")
    os.makedirs(project)
    a = Client(binary, state, project, "claude-code")
    caps = a.info["result"]["capabilities"]
    check(caps.get("resources") == {"subscribe": True}, f"resources capability with subscribe: {caps}")
    listed = a.rpc("resources/list", {})["result"]["resources"]
    check(len(listed) == 1 and listed[0]["uri"] == "todo://list/default"
          and listed[0]["mimeType"] == "text/markdown", f"one resource: {listed}")
    uri = listed[0]["uri"]
    a.call({"action": "create", "subject": "Write the parser"})
    a.call({"action": "update", "id": 1, "status": "in_progress"})
    read = a.rpc("resources/read", {"uri": uri})["result"]["contents"]
    check(read == [{"uri": uri, "mimeType": "text/markdown", "text": "- [/] #1 Write the parser\n"}],
          f"read: the checklist {read}")
    bad = a.rpc("resources/read", {"uri": "todo://list/other"})
    check(bad.get("error", {}).get("code") == -32002, f"unknown uri: {bad}")
    check("result" in a.rpc("resources/subscribe", {"uri": uri}), "subscribed")
    a.call({"action": "create", "subject": "Own change"})
    own = a.notifications(1.5)
    check(own == [], f"no notification for its own call: {own}")
    b = Client(binary, state, project, "codex")
    b.call({"action": "create", "subject": "From codex"})
    got = a.notifications(3)
    check(len(got) >= 1 and all(m["params"]["uri"] == uri for m in got),
          f"updated after another server's write: {got}")
    text = a.rpc("resources/read", {"uri": uri})["result"]["contents"][0]["text"]
    check(text.endswith("- [ ] #3 From codex\n"), f"the read shows it: {text!r}")
    b.close()
    a.close()
    out = subprocess.run([binary, "export", "--state-dir", state], cwd=project,
                         capture_output=True, text=True, timeout=30)
    check(out.returncode == 0 and out.stdout == text and out.stderr == "",
          f"export prints the same checklist: {out.returncode} {out.stdout!r} {out.stderr!r}")
    empty = subprocess.run([binary, "export", "--state-dir", state, "--session", "none"], cwd=project,
                           capture_output=True, text=True, timeout=30)
    check(empty.returncode == 0 and empty.stdout == "", f"a session without a list: {empty.stdout!r}")
    shutil.rmtree(base)
    print(f"{len(FAILED)} failed", flush=True)
    sys.exit(1 if FAILED else 0)


if __name__ == "__main__":
    main()
