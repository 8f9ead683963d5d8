#!/usr/bin/env python3
"""Several programs on one persisted list, as users run them: nothing acknowledged is lost,
undone or renumbered, and no id is given to two tasks.

Every writer's replies are recorded and checked against the final file:
  lost        a create acknowledged as "Created #N: S" whose subject S is not in the file
  renumbered  S is in the file, under another id than N
  twice       two acknowledged creates name the same id
  undone      the last acknowledged update of a task (only its creator changes it) is not
              the task's status in the file
  claimed     a call refused in-band ("Error: ...") whose change is in the file anyway

Cases (each a subcommand; `all` runs them in turn):
  interleave  two processes paused at chosen points by the core's test-only hook
              (RPIV_TODO_TEST_PAUSE): between read and write (lock held) and between write
              and reply, for create, update and delete
  mcp-pair    two MCP servers, 200 creates each (and updates of their own tasks), 10 runs
  mcp-nvim    the MCP server and a headless Neovim (creates, updates, :Todos done)
  nvim-pair   two headless Neovims
  kill9       one writer killed with SIGKILL 50 times during another's burst
  odd         a read-only state directory, a lock held by a hung process, a same-size
              change with its mtime restored
  notes       two MCP servers (clients claude-code and codex) and the user in a Neovim
              (:Todos add, :Todos done, the checklist buffer) on one list: the note at the
              end of each reply names exactly the others' changes since that writer's last
              call, once, never its own
  hostile     what a stranger or a mishap puts beside the list: the list reached through a
              symbolic link by one writer and directly by another, the lock file removed
              while a writer holds it, a symbolic link (live or dangling) planted at the lock
              path, the open-file limit reached in the middle of a call

Usage: writers.py CASE --root REPO --lua INTERPRETER --cpath DIR --pause-cpath DIR
                      --mcp BINARY --nvim NVIM
(--pause-cpath: a build with the `test-pause` feature, for interleave and hostile)
"""

import argparse
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

CREATED = re.compile(r"^Created #(\d+): (.*) \((pending|in_progress|completed)\)$")
UPDATED = re.compile(r"^Updated #(\d+) \((\w+) → (\w+)\)")
ARGS = None
FAILURES = []


NOTE = re.compile(r"\n(\((?:Changed by others since your last call: |The list was changed by another program).*\))$",
                  re.S)


def split_note(text):
    """A reply's own text and the note about other writers' changes that ends it (or None)."""
    m = NOTE.search(text)
    if m is None:
        return text, None
    return text[:m.start()], m.group(1)


def fail(message):
    FAILURES.append(message)
    print("FAIL: " + message, flush=True)


def check(cond, message):
    if not cond:
        fail(message)
    return cond


def list_file(state_dir, project):
    """The list file of session "default" for `project`, as rpiv_todo.persist names it."""
    part = re.sub(rb"[^A-Za-z0-9._-]", lambda m: b"%%%02X" % m.group(0)[0], project.encode())
    return os.path.join(state_dir, part.decode() + "@default.json")


def read_list(path):
    with open(path, "rb") as f:
        return json.loads(f.read())


class Worker:
    """A plain-Lua host (tests/shared/worker.lua): one call per line, one result per line."""

    def __init__(self, state_dir, project, wait_ms=5000, env=None, user=None, cpath=None):
        path = f"{ARGS.root}/lua/?.lua;{ARGS.root}/lua/?/init.lua;;"
        cpath = f"{cpath or ARGS.cpath}/?.so;;"
        e = dict(os.environ, LUA_PATH=path, LUA_PATH_5_4=path, LUA_CPATH=cpath,
                 LUA_CPATH_5_4=cpath, W_DIR=state_dir, W_KEY=project, W_WAIT=str(wait_ms))
        e.pop("RPIV_TODO_TEST_PAUSE", None)
        e.update(env or {})
        cmd = [ARGS.lua, f"{ARGS.root}/tests/shared/worker.lua"]
        if user is not None:
            cmd = ["setpriv", f"--reuid={user}", f"--regid={user}", "--clear-groups"] + cmd
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, env=e, cwd=project)

    def send(self, params):
        self.proc.stdin.write((json.dumps(params) + "\n").encode())
        self.proc.stdin.flush()

    def receive(self):
        line = self.proc.stdout.readline()
        if not line:
            raise EOFError(self.proc.stderr.read().decode(errors="replace"))
        result = json.loads(line)
        text, self.note = split_note(result["content"][0]["text"])
        return text, result["details"].get("error") is not None

    def call(self, params):
        self.send(params)
        return self.receive()

    def close(self):
        if self.proc.poll() is None:
            self.proc.stdin.close()
            self.proc.wait(10)
        err = self.proc.stderr.read().decode(errors="replace")
        check(err == "", "a worker wrote to stderr: " + err)


class Server:
    """The MCP server over stdio, spoken to by hand (one JSON-RPC message per line)."""

    def __init__(self, state_dir, project, name="writers.py"):
        self.proc = subprocess.Popen([ARGS.mcp, "--state-dir", state_dir], cwd=project,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE)
        self.next = 0
        self.rpc("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                "clientInfo": {"name": name, "version": "1"}})
        self.notify("notifications/initialized")

    def notify(self, method):
        self.proc.stdin.write((json.dumps({"jsonrpc": "2.0", "method": method}) + "\n").encode())
        self.proc.stdin.flush()

    def rpc(self, method, params):
        self.next += 1
        msg = {"jsonrpc": "2.0", "id": self.next, "method": method, "params": params}
        self.proc.stdin.write((json.dumps(msg) + "\n").encode())
        self.proc.stdin.flush()
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise EOFError(self.proc.stderr.read().decode(errors="replace"))
            reply = json.loads(line)
            if reply.get("id") == self.next:
                return reply

    def call(self, params):
        result = self.rpc("tools/call", {"name": "todo", "arguments": params})["result"]
        text, self.note = split_note(result["content"][0]["text"])
        return text, bool(result.get("isError"))

    def close(self):
        self.proc.stdin.close()
        self.proc.wait(10)


class Ledger:
    """What the writers were told, to hold against the final file."""

    def __init__(self):
        self.lock = threading.Lock()
        self.created = []  # (writer, id, subject)
        self.status = {}  # subject -> last acknowledged status
        self.refused = []  # (writer, params, text)
        self.owner = {}  # id -> subject, as acknowledged

    def record(self, writer, params, text, error, subject_of=None):
        with self.lock:
            if error:
                self.refused.append((writer, params, text))
                return
            m = CREATED.match(text)
            if m:
                self.created.append((writer, int(m.group(1)), m.group(2)))
                self.status[m.group(2)] = m.group(3)
                return
            m = UPDATED.match(text)
            if m and subject_of is not None:
                self.status[subject_of] = m.group(3)

    def verify(self, path, label):
        tasks = read_list(path)["tasks"]
        by_subject = {t["subject"]: t for t in tasks}
        by_id = {t["id"]: t for t in tasks}
        lost = renumbered = twice = undone = claimed = 0
        ids = {}
        for writer, tid, subject in self.created:
            ids.setdefault(tid, []).append(subject)
            t = by_subject.get(subject)
            if t is None:
                lost += 1
            elif t["id"] != tid:
                renumbered += 1
        twice = sum(1 for v in ids.values() if len(v) > 1)
        for subject, status in self.status.items():
            t = by_subject.get(subject)
            if t is not None and t["status"] != status:
                undone += 1
        for writer, params, text in self.refused:
            if params.get("action") == "create" and params.get("subject") in by_subject:
                claimed += 1
        print(f"  {label}: {len(self.created)} creates acknowledged, {len(self.refused)} refused "
              f"in-band; lost {lost}, renumbered {renumbered}, ids twice {twice}, undone {undone}, "
              f"claimed {claimed}; file holds {len(tasks)} tasks", flush=True)
        for writer, params, text in self.refused[:3]:
            print(f"    refused ({writer}, {params.get('action')}): {text}", flush=True)
        check(lost == renumbered == twice == undone == claimed == 0, f"{label}: losses")
        check(len(by_id) == len(tasks), f"{label}: an id twice in the file")
        return tasks


def burst(writer, name, n, ledger, updates=True, pause=0.0):
    """n creates from one writer, each third followed by an update of its own task."""
    mine = []
    for i in range(1, n + 1):
        subject = f"{name}-{i}"
        params = {"action": "create", "subject": subject}
        text, error = writer.call(params)
        ledger.record(name, params, text, error)
        m = CREATED.match(text)
        if m:
            mine.append((int(m.group(1)), subject))
        if updates and i % 3 == 0 and len(mine) >= 2:
            tid, subj = mine[-2]
            params = {"action": "update", "id": tid, "status": "in_progress"}
            text, error = writer.call(params)
            check(error or text == f"Updated #{tid} (pending → in_progress)",
                  f"{name}: update of its own #{tid} answered {text!r}")
            ledger.record(name, params, text, error, subj)
        if pause:
            time.sleep(random.uniform(0, pause))


def fresh():
    base = tempfile.mkdtemp(prefix="rpiv-shared-")
    state = os.path.join(base, "state", "nvim", "rpiv_todo")
    project = os.path.join(base, "project")
    os.makedirs(state)
    os.makedirs(project)
    return base, state, project


def case_mcp_pair():
    for run in range(1, 11):
        base, state, project = fresh()
        ledger = Ledger()
        a, b = Server(state, project), Server(state, project)
        threads = [threading.Thread(target=burst, args=(w, n, 200, ledger))
                   for w, n in ((a, "A"), (b, "B"))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        a.close()
        b.close()
        ledger.verify(list_file(state, project), f"two MCP servers, run {run}")
        shutil.rmtree(base)


def nvim_proc(base, project, tag, n):
    out = os.path.join(base, f"{tag}.json")
    home = os.path.join(base, "state")
    env = dict(os.environ, XDG_STATE_HOME=home, XDG_DATA_HOME=os.path.join(base, f"data-{tag}"),
               XDG_CACHE_HOME=os.path.join(base, f"cache-{tag}"), W_ROOT=ARGS.root, W_TAG=tag,
               W_N=str(n), W_OUT=out)
    for k in ("VIMINIT", "MYVIMRC", "LUA_PATH", "LUA_CPATH"):
        env.pop(k, None)
    proc = subprocess.Popen([ARGS.nvim, "--headless", "-u", "NONE", "-i", "NONE", "--noplugin",
                             "-c", f"luafile {ARGS.root}/tests/shared/nvim_worker.lua"],
                            cwd=project, env=env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    return proc, out


def nvim_replies(proc, out, tag, ledger):
    try:
        proc.wait(300)
    except subprocess.TimeoutExpired:
        proc.kill()
        fail(f"Neovim {tag} did not finish")
        return
    if not check(os.path.exists(out), f"Neovim {tag} wrote no replies: "
                 + proc.stderr.read().decode(errors="replace")):
        return
    with open(out) as f:
        replies = json.load(f)
    subjects = {}
    dones = 0
    for r in replies:
        text, _ = split_note(r["text"])
        error = not (CREATED.match(text) or UPDATED.match(text))
        m = CREATED.match(text)
        if m:
            subjects[int(m.group(1))] = m.group(2)
        params = {"action": r["kind"]}
        if r["kind"] == "create":
            params["subject"] = r["subject"]
        m = UPDATED.match(text)
        if r["kind"] == "done":
            dones += 1
            check(m is not None and m.group(3) == "completed", f"Neovim {tag}: :Todos done answered {text!r}")
        ledger.record(tag, params, text, error, subjects.get(int(m.group(1))) if m else None)
    print(f"  Neovim {tag}: {len(replies)} replies, {dones} :Todos done", flush=True)


def case_mcp_nvim():
    base, state, project = fresh()
    ledger = Ledger()
    proc, out = nvim_proc(base, project, "N", 150)
    server = Server(state, project)
    burst(server, "S", 150, ledger, pause=0.004)
    server.close()
    nvim_replies(proc, out, "N", ledger)
    ledger.verify(list_file(state, project), "the MCP server and a Neovim")
    shutil.rmtree(base)


def case_nvim_pair():
    base, state, project = fresh()
    ledger = Ledger()
    runs = [nvim_proc(base, project, tag, 150) for tag in ("P", "Q")]
    for (proc, out), tag in zip(runs, ("P", "Q")):
        nvim_replies(proc, out, tag, ledger)
    ledger.verify(list_file(state, project), "two Neovims")
    shutil.rmtree(base)


def case_kill9():
    base, state, project = fresh()
    ledger = Ledger()
    path = list_file(state, project)
    stop = threading.Event()

    def steady():
        server = Server(state, project)
        i = 0
        while not stop.is_set():
            i += 1
            params = {"action": "create", "subject": f"B-{i}"}
            text, error = server.call(params)
            ledger.record("B", params, text, error)
        server.close()

    t = threading.Thread(target=steady)
    t.start()
    kills, k = 0, 0
    while kills < 50:
        w = Worker(state, project)
        deadline = time.monotonic() + random.uniform(0.005, 0.08)
        while time.monotonic() < deadline:
            k += 1
            params = {"action": "create", "subject": f"K-{k}"}
            w.send(params)
            # A reply is an acknowledgement only once it was read whole.
            try:
                text, error = w.receive()
            except EOFError:
                break
            ledger.record("K", params, text, error)
        k += 1
        w.send({"action": "create", "subject": f"K-{k}"})  # in flight when it dies
        time.sleep(random.uniform(0, 0.004))
        w.proc.send_signal(signal.SIGKILL)
        w.proc.wait()
        kills += 1
    stop.set()
    t.join()
    # The next save after the last kill cleans up what a killed save left.
    final = Worker(state, project)
    text, error = final.call({"action": "create", "subject": "after"})
    ledger.record("F", {"action": "create", "subject": "after"}, text, error)
    final.close()
    ledger.verify(path, f"SIGKILL of one writer {kills} times during another's burst")
    left = [n for n in os.listdir(state) if n.endswith(".tmp")]
    check(left == [], f"temporary files left: {left}")
    shutil.rmtree(base)


def case_interleave():
    for action in ("create", "update", "delete"):
        for point in ("after_read", "after_write"):
            base, state, project = fresh()
            gates = os.path.join(base, "gates")
            os.makedirs(gates)
            a = Worker(state, project, env={"RPIV_TODO_TEST_PAUSE": gates},
                       cpath=ARGS.pause_cpath)
            b = Worker(state, project, wait_ms=20000)
            for i in range(1, 4):
                b.call({"action": "create", "subject": f"seed-{i}"})
            a.call({"action": "list"})
            calls = {
                "create": ({"action": "create", "subject": "from A"},
                           {"action": "create", "subject": "from B"}),
                "update": ({"action": "update", "id": 1, "status": "in_progress"},
                           {"action": "update", "id": 2, "status": "in_progress"}),
                "delete": ({"action": "delete", "id": 1}, {"action": "delete", "id": 3}),
            }[action]
            open(os.path.join(gates, point), "w").close()
            a.send(calls[0])
            reached = os.path.join(gates, point + ".reached")
            deadline = time.monotonic() + 10
            while not os.path.exists(reached) and time.monotonic() < deadline:
                time.sleep(0.001)
            label = f"{action}, A paused {point.replace('_', ' ')}"
            if not check(os.path.exists(reached), f"{label}: A never reached the pause"):
                continue
            b.send(calls[1])
            time.sleep(0.1)
            os.remove(os.path.join(gates, point))
            ta, ea = a.receive()
            tb, eb = b.receive()
            check(not ea and not eb, f"{label}: replies {ta!r}, {tb!r}")
            tasks = {t["id"]: t for t in read_list(list_file(state, project))["tasks"]}
            if action == "create":
                want = {4: "from A", 5: "from B"}
                got = {i: tasks[i]["subject"] for i in (4, 5) if i in tasks}
                check(got == want, f"{label}: file holds {got}")
                check(ta == "Created #4: from A (pending)" and tb == "Created #5: from B (pending)",
                      f"{label}: replies {ta!r}, {tb!r}")
                # B, which waited for A, is told of A's task; A of nothing yet.
                check(b.note == '(Changed by others since your last call: #4 "from A" added by '
                      'another program.)' and a.note is None, f"{label}: notes {a.note!r}, {b.note!r}")
            elif action == "update":
                check(tasks[1]["status"] == "in_progress" and tasks[2]["status"] == "in_progress",
                      f"{label}: statuses {tasks[1]['status']}, {tasks[2]['status']}")
            else:
                check(tasks[1]["status"] == "deleted" and tasks[3]["status"] == "deleted",
                      f"{label}: statuses {tasks[1]['status']}, {tasks[3]['status']}")
            la, _ = a.call({"action": "list"})
            a_note = a.note
            lb, _ = b.call({"action": "list"})
            check(la == lb, f"{label}: the two processes' next list differ:\n{la}\n{lb}")
            # A's next call names B's change, once; B has nothing new.
            check(a_note is not None and b.note is None, f"{label}: next notes {a_note!r}, {b.note!r}")
            print(f"  {label}: both changes in the file and in both lists", flush=True)
            a.close()
            b.close()
            shutil.rmtree(base)


def case_odd():
    # A read-only state directory: an error reply, nothing claimed.
    base, state, project = fresh()
    os.chmod(base, 0o755)
    for d in (os.path.join(base, "state"), os.path.join(base, "state", "nvim"), state, project):
        os.chmod(d, 0o555 if d == state else 0o755)
    w = Worker(state, project, user=65534)
    text, error = w.call({"action": "create", "subject": "x"})
    check(error and text.startswith("Error: ") and text.endswith("nothing was changed"),
          f"read-only directory: {text!r}")
    text, error = w.call({"action": "list"})
    check(text == "No tasks", f"read-only directory: nothing held ({text!r})")
    w.close()
    check(os.listdir(state) == [], "read-only directory: nothing written")
    print("  a read-only state directory: " + "refused in-band, nothing claimed", flush=True)
    os.chmod(state, 0o755)
    shutil.rmtree(base)

    # A lock held by a hung process: a bounded wait, then an in-band error.
    base, state, project = fresh()
    w = Worker(state, project, wait_ms=200)
    w.call({"action": "create", "subject": "before"})
    lock = os.path.join(state, "." + os.path.basename(list_file(state, project)) + ".lock")
    hung = subprocess.Popen(["flock", lock, "sleep", "30"], start_new_session=True)
    time.sleep(0.2)
    start = time.monotonic()
    text, error = w.call({"action": "create", "subject": "during"})
    waited = time.monotonic() - start
    check(error and "is being changed by another program; nothing was changed; try again" in text,
          f"held lock: {text!r}")
    check(0.19 <= waited < 2.0, f"held lock: answered after {waited:.3f} s")
    os.killpg(hung.pid, signal.SIGKILL)  # flock and the sleep that inherited the lock
    hung.wait()
    text, error = w.call({"action": "create", "subject": "after"})
    check(text == "Created #2: after (pending)", f"after the lock is free: {text!r}")
    w.close()
    print(f"  a lock held by a hung process: refused in-band after {waited * 1000:.0f} ms", flush=True)
    shutil.rmtree(base)

    # A same-size change with its mtime restored is seen: another program rewrites the file
    # in place (same inode), the subject and the generation changed, the size the same.
    base, state, project = fresh()
    a = Worker(state, project)
    a.call({"action": "create", "subject": "aaaa"})
    path = list_file(state, project)
    before = os.stat(path)
    with open(path, "rb") as f:
        text = f.read()
    gen = re.search(rb'"generation":(\d+)', text).group(1)
    nxt = str(int(gen) + 1).encode()
    if len(nxt) != len(gen):
        nxt = str(int(gen) - 1).encode()
    text = text.replace(b'"aaaa"', b'"bbbb"').replace(b'"generation":' + gen, b'"generation":' + nxt, 1)
    with open(path, "r+b") as f:
        f.write(text)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = os.stat(path)
    check(after.st_size == before.st_size and after.st_mtime_ns == before.st_mtime_ns
          and after.st_ino == before.st_ino, "same size, mtime and inode")
    text, _ = a.call({"action": "get", "id": 1})
    check("bbbb" in text, f"same-size change: a reads {text!r}")
    a.close()
    print("  a same-size change with its mtime restored: seen", flush=True)
    shutil.rmtree(base)


def case_notes():
    """Two MCP servers with different clients and the user in a Neovim, on one list: each
    reply's note names exactly the others' changes since that writer's last call, once."""
    base, state, project = fresh()
    claude = Server(state, project, "claude-code")
    codex = Server(state, project, "codex")
    check(claude.call({"action": "create", "subject": "Parse"}) == ("Created #1: Parse (pending)", False)
          and claude.note is None, f"claude's first call: {claude.note!r}")
    codex.call({"action": "list"})
    check(codex.note is None, f"codex's first call tells of nothing: {codex.note!r}")
    # The user, in Neovim: :Todos add, :Todos done 1, then the checklist starts #2.
    out = os.path.join(base, "user.json")
    env = dict(os.environ, XDG_STATE_HOME=os.path.join(base, "state"),
               XDG_DATA_HOME=os.path.join(base, "data"), XDG_CACHE_HOME=os.path.join(base, "cache"),
               W_ROOT=ARGS.root, W_OUT=out)
    for k in ("VIMINIT", "MYVIMRC", "LUA_PATH", "LUA_CPATH"):
        env.pop(k, None)
    subprocess.run([ARGS.nvim, "--headless", "-u", "NONE", "-i", "NONE", "--noplugin",
                    "-c", f"luafile {ARGS.root}/tests/shared/nvim_user.lua"],
                   cwd=project, env=env, stdin=subprocess.DEVNULL, capture_output=True, timeout=120)
    with open(out) as f:
        user_notes = json.load(f)
    check(any("Created #2: Write the changelog (pending)" in n for n in user_notes)
          and any("Updated #2 (pending → in_progress)" in n for n in user_notes),
          f"the user's edits: {user_notes}")
    check(not any("Changed by others" in n for n in user_notes[:1]),
          f"the user's first edit names nothing: {user_notes[:1]}")
    users = ('#2 "Write the changelog" added by the user; #1 completed by the user; '
             '#2 started by the user')
    text, _ = claude.call({"action": "get", "id": 2})
    check(claude.note == f"(Changed by others since your last call: {users}.)",
          f"claude is told of the user's three changes: {claude.note!r}")
    claude.call({"action": "get", "id": 2})
    check(claude.note is None, f"once: {claude.note!r}")
    codex.call({"action": "delete", "id": 2})
    check(codex.note == f"(Changed by others since your last call: {users}.)",
          f"codex is told of the same, not of claude's create before its first call: {codex.note!r}")
    codex.call({"action": "list"})
    check(codex.note is None, f"codex is never told of its own delete: {codex.note!r}")
    claude.call({"action": "list"})
    check(claude.note == "(Changed by others since your last call: #2 deleted by codex.)",
          f"claude hears of codex's delete, by its client's name: {claude.note!r}")
    claude.close()
    codex.close()
    print("  two MCP servers (claude-code, codex) and a Neovim user: each told exactly the "
          "others' changes, once", flush=True)
    shutil.rmtree(base)


def pause_at(worker, gates, point, params):
    """Send `params` to a worker of the pause build and wait until it stops at `point`."""
    open(os.path.join(gates, point), "w").close()
    worker.send(params)
    reached = os.path.join(gates, point + ".reached")
    deadline = time.monotonic() + 10
    while not os.path.exists(reached) and time.monotonic() < deadline:
        time.sleep(0.001)
    return os.path.exists(reached)


def case_hostile():
    # One writer through a symbolic link, one through the file itself: one lock.
    base, state, project = fresh()
    linked = os.path.join(base, "linked")
    os.makedirs(linked)
    real = list_file(state, project)
    os.symlink(real, list_file(linked, project))
    via_link, direct = Worker(linked, project), Worker(state, project)
    ledger = Ledger()
    threads = [threading.Thread(target=burst, args=(w, n, 100, ledger))
               for w, n in ((via_link, "via-link"), (direct, "direct"))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    via_link.close()
    direct.close()
    check(os.path.islink(list_file(linked, project)), "the link is still a link")
    check(sorted(os.listdir(linked)) == [os.path.basename(real)], f"nothing beside the link: {os.listdir(linked)}")
    ledger.verify(real, "a symbolic link and its target, 100 creates each")
    shutil.rmtree(base)

    # The lock file removed while a writer holds it: that writer's save is refused.
    base, state, project = fresh()
    gates = os.path.join(base, "gates")
    os.makedirs(gates)
    a = Worker(state, project, env={"RPIV_TODO_TEST_PAUSE": gates}, cpath=ARGS.pause_cpath)
    b = Worker(state, project)
    check(a.call({"action": "create", "subject": "one"})[0] == "Created #1: one (pending)", "seed")
    lock = os.path.join(state, "." + os.path.basename(list_file(state, project)) + ".lock")
    if check(pause_at(a, gates, "after_read", {"action": "create", "subject": "from-A"}),
             "removed lock: A never reached the pause"):
        os.remove(lock)
        tb, eb = b.call({"action": "create", "subject": "from-B"})
        os.remove(os.path.join(gates, "after_read"))
        ta, ea = a.receive()
        check(tb == "Created #2: from-B (pending)" and not eb, f"removed lock: B was told {tb!r}")
        check(ea and ta.endswith("nothing was changed") and "removed or replaced" in ta,
              f"removed lock: A was told {ta!r}")
        tasks = [(t["id"], t["subject"]) for t in read_list(list_file(state, project))["tasks"]]
        check(tasks == [(1, "one"), (2, "from-B")], f"removed lock: the file holds {tasks}")
        ta, _ = a.call({"action": "create", "subject": "from-A"})
        check(ta == "Created #3: from-A (pending)", f"removed lock: A's next create: {ta!r}")
        print("  the lock file removed while held: the holder's save refused, the other kept",
              flush=True)
    a.close()
    b.close()
    shutil.rmtree(base)

    # A symbolic link planted at the lock path, live then dangling: refused, followed nowhere.
    base, state, project = fresh()
    lock = os.path.join(state, "." + os.path.basename(list_file(state, project)) + ".lock")
    victim = os.path.join(base, "victim.txt")
    with open(victim, "w") as f:
        f.write("precious")
    os.symlink(victim, lock)
    w = Worker(state, project)
    text, error = w.call({"action": "create", "subject": "x"})
    check(error and "symbolic link" in text and text.endswith("nothing was changed"),
          f"planted lock link: {text!r}")
    with open(victim) as f:
        check(f.read() == "precious", "planted lock link: the victim is untouched")
    os.remove(lock)
    elsewhere = os.path.join(base, "elsewhere")
    os.makedirs(elsewhere)
    os.symlink(os.path.join(elsewhere, "made"), lock)
    text, error = w.call({"action": "create", "subject": "x"})
    check(error, f"dangling lock link: {text!r}")
    check(os.listdir(elsewhere) == [], "dangling lock link: nothing made where it points")
    check(not os.path.exists(list_file(state, project)), "planted lock link: no list written")
    w.close()
    print("  a symbolic link at the lock path: refused, its target untouched", flush=True)
    shutil.rmtree(base)

    # The open-file limit reached in the middle of a call (RLIMIT_NOFILE lowered to what
    # the writer holds and one more): refused in-band, and the next call numbers from
    # what was saved.
    for existing in (False, True):
        base, state, project = fresh()
        w = Worker(state, project)
        if existing:
            w.call({"action": "create", "subject": "one"})
        else:
            w.call({"action": "list"})
        held = len(os.listdir(f"/proc/{w.proc.pid}/fd"))
        # The soft limit only: raising a hard limit again needs a privilege.
        subprocess.run(["prlimit", f"--pid={w.proc.pid}", f"--nofile={held + 1}:"], check=True)
        text, error = w.call({"action": "create", "subject": "refused"})
        subprocess.run(["prlimit", f"--pid={w.proc.pid}", "--nofile=1024:"], check=True)
        label = "EMFILE " + ("with a list saved" if existing else "before the first save")
        check(error and text.endswith("nothing was changed"), f"{label}: {text!r}")
        want = 2 if existing else 1
        text, error = w.call({"action": "create", "subject": "next"})
        check(text == f"Created #{want}: next (pending)", f"{label}: the next create: {text!r}")
        tasks = [t["subject"] for t in read_list(list_file(state, project))["tasks"]]
        check(tasks == (["one", "next"] if existing else ["next"]), f"{label}: file holds {tasks}")
        w.close()
        print(f"  {label}: refused in-band, the next id is #{want}", flush=True)
        shutil.rmtree(base)


CASES = {
    "interleave": case_interleave,
    "mcp-pair": case_mcp_pair,
    "mcp-nvim": case_mcp_nvim,
    "nvim-pair": case_nvim_pair,
    "kill9": case_kill9,
    "odd": case_odd,
    "hostile": case_hostile,
    "notes": case_notes,
}


def main():
    global ARGS
    p = argparse.ArgumentParser()
    p.add_argument("case", choices=list(CASES) + ["all"])
    p.add_argument("--root", required=True)
    p.add_argument("--lua", default="luajit")
    p.add_argument("--cpath", required=True)
    p.add_argument("--pause-cpath")
    p.add_argument("--mcp")
    p.add_argument("--nvim")
    ARGS = p.parse_args()
    random.seed(27)
    for name in (CASES if ARGS.case == "all" else [ARGS.case]):
        print(f"{name}:", flush=True)
        CASES[name]()
    if FAILURES:
        print(f"{len(FAILURES)} failures", flush=True)
        sys.exit(1)


if __name__ == "__main__":
    main()
