"""bench/hook.py: the terminal agents' hooks (`rpiv_todo_mcp hook EVENT`), wall time per run
as an agent sees it (start, read the event on stdin, read the list, answer, exit). Prints
figures; asserts nothing. The goal is under 50 ms an event.

    python3 bench/hook.py [BINARY] [runs]     (default: $CARGO_TARGET_DIR or target,
                                               release/rpiv_todo_mcp; 50 runs a row)

Rows: SessionStart with no list file, with an open list of 3 and of 200 tasks (Lua runs
once for the text), the same start again (the record says it was put in: no Lua), Stop
with a task in progress (the reminder, Lua once), Stop with none, and a malformed event.
With npx on PATH and RPIV_BENCH_NPX=1, the same SessionStart through `npx -y rpiv-todo-mcp`
(the command the plugin's hooks run when the package is not installed globally).
"""

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def tasks(n, in_progress):
    out = []
    for i in range(1, n + 1):
        status = "in_progress" if in_progress and i == 1 else ("completed" if i % 3 == 0 else "pending")
        out.append({"id": i, "subject": f"Task number {i} of the plan", "status": status})
    return out


def time_runs(command, stdin, runs, env):
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(command, input=stdin, capture_output=True, env=env, check=False)
        times.append((time.perf_counter() - start) * 1000)
    return times


def main():
    target = Path(os.environ.get("CARGO_TARGET_DIR") or ROOT / "target")
    binary = sys.argv[1] if len(sys.argv) > 1 else str(target / "release" / "rpiv_todo_mcp")
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 50
    if not Path(binary).exists():
        print(f"no {binary}: cargo build --release -p rpiv_todo_mcp")
        return 1
    scratch = Path(tempfile.mkdtemp(prefix="rpiv-bench-hook."))
    try:
        state = scratch / "state"
        state.mkdir()
        project = scratch / "project"
        project.mkdir()
        env = dict(os.environ, XDG_STATE_HOME=str(scratch / "xdg"))
        def write_list(items):
            # The list file's format is plain JSON (docs/design.md), named as src/naming.rs does.
            path = state / naming(str(project))
            path.write_text(json.dumps({"version": 1, "generation": 1, "tasks": items, "nextId": len(items) + 1}))

        def event(source, session="s", **extra):
            return json.dumps({"session_id": session, "cwd": str(project), "hook_event_name": "X", "source": source, **extra}).encode()

        base = [binary, "hook"]
        rows = []
        print(f"# {binary}, {runs} runs a row; milliseconds: median, p90, max")
        report("SessionStart, no list file", time_runs([*base, "session-start", "--state-dir", str(state)], event("compact"), runs, env))
        write_list(tasks(3, True))
        rows.append(("SessionStart, 3 tasks open (new session each run: Lua renders)", None, "new-session"))
        rows.append(("SessionStart again, same session (record: already in)", [*base, "session-start", "--state-dir", str(state)], event("compact", "same")))
        rows.append(("Stop, a task in progress (reminder, Lua)", None, "stop-new"))
        rows.append(("Stop, stop_hook_active", [*base, "stop", "--state-dir", str(state)], event("x", "t", stop_hook_active=True)))
        rows.append(("malformed event", [*base, "stop", "--state-dir", str(state)], b"{not json"))
        for label, command, stdin in rows:
            if command is None:
                what = "session-start" if stdin == "new-session" else "stop"
                times = []
                for i in range(runs):
                    data = event("compact", f"n{i}") if what == "session-start" else event("x", f"r{i}", stop_hook_active=False)
                    times += time_runs([*base, what, "--state-dir", str(state)], data, 1, env)
            else:
                times = time_runs(command, stdin, runs, env)
            report(label, times)
        write_list(tasks(200, True))
        times = []
        for i in range(runs):
            times += time_runs([*base, "session-start", "--state-dir", str(state)], event("compact", f"big{i}"), 1, env)
        report("SessionStart, 200 tasks open (Lua renders)", times)
        if os.environ.get("RPIV_BENCH_NPX") and shutil.which("npx"):
            times = time_runs(["npx", "-y", "rpiv-todo-mcp", "hook", "session-start", "--state-dir", str(state)], event("compact", "same"), max(5, runs // 5), env)
            report("the same start through npx -y rpiv-todo-mcp (installed globally)", times)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return 0


def report(label, times):
    times = sorted(times)
    p90 = times[max(0, int(len(times) * 0.9) - 1)]
    print(f"{label:70s} {statistics.median(times):6.1f} {p90:6.1f} {times[-1]:6.1f}")


def naming(cwd):
    """The list file's name for `cwd` and session "default" (src/naming.rs: the key and the
    session escaped, or a digest when long; these paths are short)."""
    def escape(s):
        out = []
        for b in s.encode():
            c = chr(b)
            if c.isalnum() or c in "-_.":
                out.append(c)
            else:
                out.append("%%%02X" % b)
        return "".join(out)

    return f"{escape(cwd)}@{escape('default')}.json"


if __name__ == "__main__":
    sys.exit(main())
