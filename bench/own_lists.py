"""bench/own_lists.py: issue 39's scripted session done by a real agent twice, once with its
own list and once with rpiv_todo, against the scripted model (tests/terminal/model_server.py),
the request bodies kept for bench/tokens_agents.mjs to count. Asserts nothing.

    python3 bench/own_lists.py OUT_DIR [--clis DIR] [--agents claude,codex,gemini]

The session (bench/tokens.lua's): six tasks, #3 waiting on #2 and #6 on #5, each started and
completed in turn, the list read after #3 starts and at the end.
  - Claude Code 2.1.197 with its Task tools (its default in -p): TaskCreate x6, TaskUpdate
    addBlockedBy x2, TaskUpdate per status change x12, TaskList x2: 22 calls;
  - Claude Code with TodoWrite (CLAUDE_CODE_ENABLE_TASKS=0): the whole list written at
    each of the 12 changes and once at the start: 13 calls;
  - Claude Code with rpiv_todo (docs/agents.md's block, the release binary): one create of
    six, one update per "complete one, start the next", two lists: 10 calls.
  - Codex 0.171.0 with update_plan (tools.update_plan.enabled) and Gemini CLI 0.61.0 with
    write_todos (yolo mode, where it is offered): the whole list at each change, 13 calls;
    each with rpiv_todo as above.
Writes OUT_DIR/<label>.json (the recorded requests) and prints LABEL=PATH for each.
"""

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT / "tests" / "terminal"))

import model_server as ms  # noqa: E402
import run as R  # noqa: E402

SUBJECTS = [
    ("Read the config loader", "Reading the config loader"),
    ("Write the parser", "Writing the parser"),
    ("Test the parser", "Testing the parser"),
    ("Wire the parser into the loader", "Wiring the parser into the loader"),
    ("Update the docs", "Updating the docs"),
    ("Run the whole test suite", "Running the whole test suite"),
]
WAITS = {3: [2], 6: [5]}


def ours():
    """The session as rpiv_todo calls, batched (bench/tokens.lua's `H.script(true)`)."""
    items = []
    for i, (subject, active) in enumerate(SUBJECTS, 1):
        item = {"subject": subject, "activeForm": active}
        if i in WAITS:
            item["blockedBy"] = WAITS[i]
        items.append(item)
    calls = [("todo", {"action": "create", "tasks": items})]
    n = len(SUBJECTS)
    for i in range(1, n + 1):
        if i == 1:
            calls.append(("todo", {"action": "update", "id": 1, "status": "in_progress"}))
        else:
            pair = [{"id": i - 1, "status": "completed"}, {"id": i, "status": "in_progress"}]
            calls.append(("todo", {"action": "update", "tasks": pair}))
        if i == 3:
            calls.append(("todo", {"action": "list"}))
    calls.append(("todo", {"action": "update", "id": n, "status": "completed"}))
    calls.append(("todo", {"action": "list"}))
    return calls


def task_tools():
    """The session as Claude Code's Task tool calls."""
    calls = [
        ("TaskCreate", {"subject": s, "description": s, "activeForm": a}) for s, a in SUBJECTS
    ]
    for task, deps in WAITS.items():
        calls.append(("TaskUpdate", {"taskId": str(task), "addBlockedBy": [str(d) for d in deps]}))
    n = len(SUBJECTS)
    for i in range(1, n + 1):
        if i > 1:
            calls.append(("TaskUpdate", {"taskId": str(i - 1), "status": "completed"}))
        calls.append(("TaskUpdate", {"taskId": str(i), "status": "in_progress"}))
        if i == 3:
            calls.append(("TaskList", {}))
    calls.append(("TaskUpdate", {"taskId": str(n), "status": "completed"}))
    calls.append(("TaskList", {}))
    return calls


def whole_list(tool, item):
    """The session as calls of a whole-list tool: the list written once at the start and
    again at each of the 12 changes (no call reads it). `item(subject, active, status)`."""
    status = ["pending"] * len(SUBJECTS)

    def write():
        return (tool, item(status))

    calls = [write()]
    for i in range(len(SUBJECTS)):
        status[i] = "in_progress"
        calls.append(write())
        status[i] = "completed"
        calls.append(write())
    return calls


def todo_write():
    return whole_list("TodoWrite", lambda st: {"todos": [
        {"content": s, "status": x, "activeForm": a} for (s, a), x in zip(SUBJECTS, st)]})


def update_plan():
    return whole_list("update_plan", lambda st: {"plan": [
        {"step": s, "status": x} for (s, _), x in zip(SUBJECTS, st)]})


def write_todos():
    return whole_list("write_todos", lambda st: {"todos": [
        {"description": s, "status": x} for (s, _), x in zip(SUBJECTS, st)]})


class Session(ms.ScriptedModel):
    """The scripted model making `calls` ((tool, arguments), the tool named by the end of its
    offered name) one per turn, in order, then the closing text. A request offering none of
    the tools (a title, a side request) gets the short text."""

    def __init__(self, calls):
        super().__init__([])
        self.script = list(calls)

    def decide(self, api, body):
        offered = [name for name, _ in ms.offered_tools(api, body)] if isinstance(body, dict) else []
        with self.lock:
            if not self.script:
                return (None, self.final_text) if offered else (None, ms.SIDE_TEXT)
            tool, args = self.script[0]
            if tool == "todo":
                match = next((n for n in offered if ms.TODO_NAME.search(n)), None)
            else:
                match = next((n for n in offered if n == tool), None)
            if match is None:
                if api == "anthropic" and ms._may_wait(body):
                    return ms.WAIT_TOOL, {"servers": ["rpiv_todo"]}
                if api == "openai" and tool == "todo" and ms._needs_tool_search(body):
                    return "tool_search", {"query": "todo task list", "limit": 8}
                return None, ms.SIDE_TEXT
            self.script.pop(0)
            return match, args


def run_agent(agent, label, calls, blocks, out, clis, server_command, extra_env=None, extra_args=()):
    pin = R.pins()[agent]
    bindir, why = R.cli_bin(clis, pin)
    if bindir is None:
        print(f"{label}: {why}", file=sys.stderr)
        return None
    scratch = Path(tempfile.mkdtemp(prefix=f"rpiv-own-{label}."))
    home, project = scratch / "home", scratch / "project"
    home.mkdir()
    project.mkdir()
    env = R.base_env(home, bindir)
    env.update(extra_env or {})
    errors = R.apply_blocks(blocks, home, project, env, server_command) if blocks else []
    if errors:
        print(f"{label}: {errors}", file=sys.stderr)
        return None
    model = Session(calls)
    proc, model, server = R.start_agent(agent, model, env, project, list(extra_args))
    rc, _, err = R.finish_agent(proc, server)
    left = len(model.script)
    if rc != 0 or left:
        print(f"{label}: exit {rc}, {left} calls not made: {err[-800:]}", file=sys.stderr)
    path = Path(out, f"{label}.json")
    path.write_text(json.dumps(model.requests, indent=1, ensure_ascii=False))
    return path


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out")
    parser.add_argument("--clis")
    parser.add_argument("--agents", help="claude,codex,gemini (default: all three)")
    args = parser.parse_args()
    Path(args.out).mkdir(parents=True, exist_ok=True)
    clis = R.cache_dir(args.clis)
    binary = Path(os.environ.get("CARGO_TARGET_DIR") or ROOT / "target") / "release" / "rpiv_todo_mcp"
    runs = [
        ("claude", "task-tools", task_tools(), False, None, ()),
        # Claude Code's TodoWrite, its list when the Task tools are off.
        ("claude", "todowrite", todo_write(), False, {"CLAUDE_CODE_ENABLE_TASKS": "0"}, ()),
        ("claude", "rpiv-todo", ours(), True, None, ()),
        ("codex", "update-plan", update_plan(), False, None, ("-c", "tools.update_plan.enabled=true")),
        ("codex", "rpiv-todo", ours(), True, None, ()),
        ("gemini", "write-todos", write_todos(), False, None, ("--approval-mode", "yolo")),
        ("gemini", "rpiv-todo", ours(), True, None, ()),
    ]
    only = set(args.agents.split(",")) if args.agents else None
    for agent, what, calls, with_blocks, env, extra in runs:
        if only and agent not in only:
            continue
        blocks = R.readme_blocks(R.DOCS[0], agent) if with_blocks else None
        label = f"{agent}-{what}"
        path = run_agent(agent, label, calls, blocks, args.out, clis, str(binary), env, extra)
        if path:
            print(f"{label}={path}")


if __name__ == "__main__":
    main()
