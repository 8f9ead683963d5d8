#!/usr/bin/env python3
"""Each system call of a save failed in turn, by strace's fault injection: the reply always
tells what the file holds, nothing panics, and the next call numbers from what was saved.

A plain-Lua host (tests/shared/worker.lua) keeps a persisted list that already holds #1. It
gets three calls: `list` (it reads the file), `create B` (the process's first save: the
lock, the read, the temporary file, its sync, the check of the lock, the rename, the
directory's sync and the sweep of leftovers), then `create C`. A first run under strace
records the calls `create B` makes; then one run per recorded call fails exactly that one
(its nth occurrence, `-e inject=NAME:error=ERRNO:when=N`) with an error the system really
gives there (EIO, ENOSPC, EMFILE, ENOLCK...). Each run must:
  * exit 0 and write nothing to stderr (no panic, no abort);
  * answer `create B` with "Created #2: B (pending)" exactly when the file holds B, and
    otherwise with an in-band "Error: ... nothing was changed";
  * answer `create C` with the next id after what was saved (#3 after B, #2 without it),
    and leave the file holding exactly the tasks acknowledged.

Usage: faults.py --root REPO --lua INTERPRETER --cpath DIR
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

# What each call may fail with, in the save path: errors the system gives there.
ERRNO = {
    "openat": "EMFILE",
    "open": "EMFILE",
    "write": "ENOSPC",
    "pwrite64": "ENOSPC",
    "fsync": "EIO",
    "fdatasync": "EIO",
    "renameat": "EIO",
    "renameat2": "EIO",
    "rename": "EIO",
    "close": "EIO",
    "getdents64": "EIO",
    "flock": "ENOLCK",
    "statx": "EIO",
    "newfstatat": "EIO",
    "fstat": "EIO",
    "lstat": "EIO",
    "unlinkat": "EIO",
    "unlink": "EIO",
    "ftruncate": "EIO",
    "fcntl": "EBADF",
    "read": "EIO",
    "pread64": "EIO",
    "lseek": "EIO",
    "getrandom": "ENOSYS",  # an older kernel: std reads /dev/urandom instead
}
LINE = re.compile(r"^(?:\d+ +)?(\w+)\(")
FAILURES = []


def check(cond, message):
    if not cond:
        FAILURES.append(message)
        print("FAIL: " + message, flush=True)
    return cond


def run(args, state, project, inject=None, trace=None):
    path = f"{args.root}/lua/?.lua;{args.root}/lua/?/init.lua;;"
    cpath = f"{args.cpath}/?.so;;"
    env = dict(os.environ, LUA_PATH=path, LUA_PATH_5_4=path, LUA_CPATH=cpath, LUA_CPATH_5_4=cpath,
               W_DIR=state, W_KEY=project, W_WAIT="2000")
    env.pop("RPIV_TODO_TEST_PAUSE", None)
    cmd = [args.lua, f"{args.root}/tests/shared/worker.lua"]
    if trace is not None or inject is not None:
        strace = ["strace", "-qq", "-o", trace or os.devnull]
        if inject is not None:
            name, errno, n = inject
            strace += ["-e", f"inject={name}:error={errno}:when={n}"]
        cmd = strace + ["--"] + cmd
    calls = [{"action": "list"}, {"action": "create", "subject": "B"},
             {"action": "create", "subject": "C"}]
    # One line at a time, each after the last reply, so that each call starts with a read
    # of stdin of its own in the trace.
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=env, cwd=project)
    replies = []
    for call in calls:
        proc.stdin.write((json.dumps(call) + "\n").encode())
        proc.stdin.flush()
        line = proc.stdout.readline()
        if not line:
            break
        replies.append(json.loads(line)["content"][0]["text"])
    proc.stdin.close()
    try:
        proc.wait(60)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    return proc.returncode, proc.stderr.read().decode(errors="replace"), replies


def window(trace):
    """The calls `create B` made: (name, its occurrence number in the whole run)."""
    seen = {}
    out = []
    reads = 0
    for line in open(trace, encoding="utf-8", errors="replace"):
        m = LINE.match(line)
        if not m:
            continue
        name = m.group(1)
        seen[name] = seen.get(name, 0) + 1
        stdio = re.match(r"^(?:\d+ +)?(read|write)\(([01]),", line)
        if stdio and stdio.group(1) == "read" and stdio.group(2) == "0":
            reads += 1
            continue
        if stdio and stdio.group(1) == "write" and stdio.group(2) == "1":
            if reads == 2:
                break
            continue
        if reads == 2 and name in ERRNO:
            out.append((name, seen[name], line.strip()[:110]))
    return out


def tasks_in(path):
    if not os.path.exists(path):
        return None
    with open(path, "rb") as f:
        return [(t["id"], t["subject"]) for t in json.loads(f.read())["tasks"]]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--root", required=True)
    p.add_argument("--lua", default="luajit")
    p.add_argument("--cpath", required=True)
    args = p.parse_args()
    if shutil.which("strace") is None:
        print("strace is not installed (scripts/setup-dev.sh installs it)")
        sys.exit(1)
    base = tempfile.mkdtemp(prefix="rpiv-faults-")
    project = os.path.join(base, "project")
    template = os.path.join(base, "template")
    os.makedirs(project)
    os.makedirs(template)
    # The list as it is before each run: #1 saved by an earlier process.
    path = f"{args.root}/lua/?.lua;{args.root}/lua/?/init.lua;;"
    cpath = f"{args.cpath}/?.so;;"
    env = dict(os.environ, LUA_PATH=path, LUA_PATH_5_4=path, LUA_CPATH=cpath, LUA_CPATH_5_4=cpath,
               W_DIR=template, W_KEY=project)
    subprocess.run([args.lua, f"{args.root}/tests/shared/worker.lua"], env=env, cwd=project,
                   input=b'{"action":"create","subject":"A"}\n', capture_output=True, check=True)
    (name,) = [n for n in os.listdir(template) if n.endswith(".json")]

    def fresh():
        state = os.path.join(base, "state")
        shutil.rmtree(state, ignore_errors=True)
        shutil.copytree(template, state)
        return state, os.path.join(state, name)

    state, _ = fresh()
    trace = os.path.join(base, "trace")
    code, err, replies = run(args, state, project, trace=trace)
    if not check(code == 0 and err == "" and replies[1:] == ["Created #2: B (pending)",
                                                              "Created #3: C (pending)"],
                 f"the run without a fault: exit {code}, stderr {err!r}, replies {replies}"):
        sys.exit(1)
    calls = window(trace)
    names = sorted({c[0] for c in calls})
    print(f"create B makes {len(calls)} calls that can fail: {', '.join(names)}", flush=True)
    check({"openat", "write", "fsync", "close", "flock", "getdents64"} <= set(names) and
          any(n.startswith("rename") for n in names),
          f"the save path's calls are all in the window: {names}")
    saved = refused = 0
    for sc, n, shown in calls:
        state, listed = fresh()
        code, err, replies = run(args, state, project, inject=(sc, ERRNO[sc], n))
        label = f"{sc} #{n} fails with {ERRNO[sc]} ({shown})"
        if not check(code == 0 and err == "", f"{label}: exit {code}, stderr {err!r}"):
            continue
        if not check(len(replies) == 3, f"{label}: replies {replies}"):
            continue
        held = tasks_in(listed)
        b = replies[1]
        if b == "Created #2: B (pending)":
            saved += 1
            check(held == [(1, "A"), (2, "B"), (3, "C")] and replies[2] == "Created #3: C (pending)",
                  f"{label}: B acknowledged; then {replies[2]!r}, the file holds {held}")
        else:
            refused += 1
            check(b.startswith("Error: ") and ("nothing was changed" in b),
                  f"{label}: B neither saved nor refused in-band: {b!r}")
            check(held == [(1, "A"), (2, "C")] and replies[2] == "Created #2: C (pending)",
                  f"{label}: B refused; then {replies[2]!r}, the file holds {held}")
    print(f"{len(calls)} faults: B saved and acknowledged in {saved}, refused in-band in "
          f"{refused}; {len(FAILURES)} failures", flush=True)
    shutil.rmtree(base)
    sys.exit(1 if FAILURES else 0)


if __name__ == "__main__":
    main()
