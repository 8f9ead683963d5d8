"""bench/own_lists.py: issue 39's scripted session done by a real agent twice, once with its
own list and once with rpiv_todo, against the scripted model (tests/terminal/model_server.py),
the request bodies kept for bench/tokens_agents.mjs to count. Asserts nothing.

    python3 bench/own_lists.py OUT_DIR [--clis DIR] [--agents claude,codex,gemini]
                               [--session short|long] [--claude-model MODEL]

The session (bench/tokens.lua's; --session short, the default): six tasks, #3 waiting on #2
and #6 on #5, each started and completed in turn, the list read after #3 starts and at the
end.
  - Claude Code 2.1.197 with its Task tools (its default in -p): TaskCreate x6, TaskUpdate
    addBlockedBy x2, TaskUpdate per status change x12, TaskList x2: 22 calls;
  - Claude Code with TodoWrite (CLAUDE_CODE_ENABLE_TASKS=0): the whole list written at
    each of the 12 changes and once at the start: 13 calls;
  - Claude Code with rpiv_todo (docs/agents.md's block, the release binary): one create of
    six, one update per "complete one, start the next", two lists: 10 calls.
  - Codex 0.171.0 with update_plan (tools.update_plan.enabled) and Gemini CLI 0.61.0 with
    write_todos (yolo mode, where it is offered): the whole list at each change, 13 calls;
    each with rpiv_todo as above; Gemini CLI's both in yolo mode, so that both offer the same
    built-in tools.

--session long: the same list work (the same calls, in eight steps) in a session of 24
prompts and a compaction: 7 prompts of list work (the first does two steps), 17 idle ones
(the model reads two of the project's files and replies: three turns, no list call), and
the compaction in the third quarter, after an idle prompt. An idle stretch is four idle
prompts (12 turns), long enough for Claude Code's "haven't been used recently" reminder
(LONG, IDLE_PROMPTS).
  - Claude Code: four processes, a new session and three `--resume`s, each sending its
    messages one at a time over stream-json, `/compact` in the third;
  - Codex and Gemini CLI, which take one prompt a process: 24 processes, each prompt after
    the first a resume (`codex exec resume ID`, `gemini --resume latest`), the compaction
    forced by a low limit in one process (cli_long says how).
Each agent with its own list (Claude Code: its Task tools and TodoWrite) and with rpiv_todo
through its plugin or extension (README.md's blocks tagged readme-test=<agent>-plugin, the
marketplace a copy of this checkout's with the release binary for `npx -y rpiv-todo-mcp`),
whose hooks put the list back after a resume or the compaction and remind the model at the
end of a turn with a task in progress. Each run's requests, all processes in order, go to
one file.

--claude-model MODEL: Claude Code's runs with `--model MODEL` (labels end in -MODEL).
Claude Code 2.1.197 gives its newest models (its default, claude-opus-4-8) a short
TodoWrite prompt and the others (claude-sonnet-4-6, say) its full one.

Writes OUT_DIR/<label>.json (the recorded requests) and prints LABEL=PATH for each.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import uuid
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT / "tests" / "terminal"))

import model_server as ms  # noqa: E402
import plugin_cases as pc  # noqa: E402
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


def ours_steps():
    """The session as rpiv_todo calls, batched (bench/tokens.lua's `H.script(true)`), step by
    step (STEPS)."""
    items = []
    for i, (subject, active) in enumerate(SUBJECTS, 1):
        item = {"subject": subject, "activeForm": active}
        if i in WAITS:
            item["blockedBy"] = WAITS[i]
        items.append(item)
    steps = [[("todo", {"action": "create", "tasks": items})]]
    n = len(SUBJECTS)
    for i in range(1, n + 1):
        if i == 1:
            steps.append([("todo", {"action": "update", "id": 1, "status": "in_progress"})])
        else:
            pair = [{"id": i - 1, "status": "completed"}, {"id": i, "status": "in_progress"}]
            steps.append([("todo", {"action": "update", "tasks": pair})])
        if i == 3:
            steps[-1].append(("todo", {"action": "list"}))
    steps.append([("todo", {"action": "update", "id": n, "status": "completed"}), ("todo", {"action": "list"})])
    return steps


def task_tools_steps():
    """The session as Claude Code's Task tool calls, step by step."""
    steps = [[("TaskCreate", {"subject": s, "description": s, "activeForm": a}) for s, a in SUBJECTS]]
    for task, deps in WAITS.items():
        steps[0].append(("TaskUpdate", {"taskId": str(task), "addBlockedBy": [str(d) for d in deps]}))
    n = len(SUBJECTS)
    for i in range(1, n + 1):
        step = []
        if i > 1:
            step.append(("TaskUpdate", {"taskId": str(i - 1), "status": "completed"}))
        step.append(("TaskUpdate", {"taskId": str(i), "status": "in_progress"}))
        if i == 3:
            step.append(("TaskList", {}))
        steps.append(step)
    steps.append([("TaskUpdate", {"taskId": str(n), "status": "completed"}), ("TaskList", {})])
    return steps


def whole_list_steps(tool, item):
    """The session as calls of a whole-list tool, step by step: the list written once at the
    start and again at each of the 12 changes (no call reads it). `item(statuses)`."""
    status = ["pending"] * len(SUBJECTS)

    def write():
        return (tool, item(list(status)))

    steps = [[write()]]
    for i in range(len(SUBJECTS)):
        step = []
        if i > 0:
            status[i - 1] = "completed"
            step.append(write())
        status[i] = "in_progress"
        step.append(write())
        steps.append(step)
    status[-1] = "completed"
    steps.append([write()])
    return steps


def todo_write_steps():
    return whole_list_steps("TodoWrite", lambda st: {"todos": [
        {"content": s, "status": x, "activeForm": a} for (s, a), x in zip(SUBJECTS, st)]})


def update_plan_steps():
    return whole_list_steps("update_plan", lambda st: {"plan": [
        {"step": s, "status": x} for (s, _), x in zip(SUBJECTS, st)]})


def write_todos_steps():
    return whole_list_steps("write_todos", lambda st: {"todos": [
        {"description": s, "status": x} for (s, _), x in zip(SUBJECTS, st)]})


def flat(steps):
    return [call for step in steps for call in step]


def ours():
    return flat(ours_steps())


def task_tools():
    return flat(task_tools_steps())


def todo_write():
    return flat(todo_write_steps())


def update_plan():
    return flat(update_plan_steps())


def write_todos():
    return flat(write_todos_steps())


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
            match = offered_name(offered, tool)
            if match is None:
                if api == "anthropic" and ms._may_wait(body):
                    return ms.WAIT_TOOL, {"servers": ["rpiv_todo"]}
                if api == "openai" and tool == "todo" and ms._needs_tool_search(body):
                    return "tool_search", {"query": "todo task list", "limit": 8}
                return None, ms.SIDE_TEXT
            self.script.pop(0)
            return match, args


def offered_name(offered, tool):
    """The name `tool` is offered under (the todo tool under any agent's prefix), or None."""
    if tool == "todo":
        return next((n for n in offered if ms.TODO_NAME.search(n)), None)
    return tool if tool in offered else None


def agent_scratch(agent, label, clis, extra_env):
    """A scratch folder with an empty HOME and project for `agent`'s run: (scratch, home,
    project, env), or None (said on stderr) when the agent is not installed."""
    bindir, why = R.cli_bin(clis, R.pins()[agent])
    if bindir is None:
        print(f"{label}: {why}", file=sys.stderr)
        return None
    scratch = Path(tempfile.mkdtemp(prefix=f"rpiv-own-{label}."))
    home, project = scratch / "home", scratch / "project"
    home.mkdir()
    project.mkdir()
    env = R.base_env(home, bindir)
    env.update(extra_env or {})
    return scratch, home, project, env


def run_agent(agent, label, calls, blocks, out, clis, server_command, extra_env=None, extra_args=()):
    made = agent_scratch(agent, label, clis, extra_env)
    if made is None:
        return None
    _, home, project, env = made
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


# ---------------------------------------------------------------------------------------
# The long session (--session long)
# ---------------------------------------------------------------------------------------

# The project the long session's idle turns read: two files a prompt, each read once (a
# file read again is answered "unchanged since your last Read").
FILES = {
    f"src/part_{i:02d}.py": f"# Part {i} of the config loader.\n\n\ndef step_{i}(table):\n    return table.get('part_{i}', {{}})\n"
    for i in range(1, 41)
}
# Claude Code's compaction request ends with this instruction; the scripted model answers
# it with a summary.
COMPACT_ASK = "create a detailed summary of the conversation"
SUMMARY = (
    "<analysis>The user plans and does the parser work with a todo list.</analysis>\n"
    "<summary>1. The user asked to plan the parser work as six tasks (#3 after #2, #6 after #5) and"
    " to work through them, reading the project's files in between. 2. Three tasks are done"
    " or in progress; the list is kept with the todo tool.</summary>"
)
STOP_FEEDBACK = "Stop hook feedback"
# The marketplace README.md's plugin blocks name, replaced by a copy of this checkout's.
MARKETPLACE = "rpiv-todo/rpiv_todo"
# Idle turns per stretch: Claude Code 2.1.197 adds its "task tools haven't been used
# recently" reminder once ten of its turns went by without a TaskCreate or TaskUpdate (or
# a TodoWrite), and again ten turns after the last reminder (`TURNS_SINCE_WRITE`,
# `TURNS_BETWEEN_REMINDERS`: seen in its binary, and in the requests: the eleventh request
# after the last list call carries it). A stretch is four prompts of three turns each
# (two reads and a reply), 12 turns, so that each stretch gets one.
IDLE_PROMPTS = 4


def work(*steps):
    """A prompt that does the list work of `steps` (indices into a flavour's steps)."""
    return ("work", steps)


def idle(n):
    return [("idle", None)] * n


COMPACT = ("compact", None)
# The long session: one process per segment, a new session and three resumes, the
# compaction in the third, after a prompt (so that the list goes back in as the
# compaction's, not the resume's). 7 list-work prompts, 17 idle ones, one /compact.
LONG = [
    ("new", [work(0, 1), *idle(IDLE_PROMPTS)]),
    ("resume", [work(2), work(3), *idle(IDLE_PROMPTS)]),
    ("resume", [*idle(1), COMPACT, work(4), *idle(IDLE_PROMPTS)]),
    ("resume", [work(5), *idle(IDLE_PROMPTS), work(6), work(7)]),
]
WORK_TEXT = {
    0: "Plan the parser work with the todo list: six tasks, #3 after #2 and #6 after #5; then start the first.",
    2: "The config loader is read. Go on with the next task.",
    4: "Go on with the next task.",
}
IDLE_REPLY = "Read them: the loader hands the parsed TOML table to the app; nothing to change there yet."


# How each agent's model reads a project file in an idle prompt: Claude Code's Read, Codex's
# exec_command (`cat`, in its read-only sandbox), Gemini CLI's read_file.
READERS = {
    "claude": lambda path, name: ("Read", {"file_path": str(path)}),
    "codex": lambda path, name: ("exec_command", {"cmd": f"cat {name}"}),
    "gemini": lambda path, name: ("read_file", {"file_path": str(path)}),
}


def long_prompts(steps, project, agent="claude"):
    """The long session as segments of (prompt, the model's actions): an action is a call
    (tool, arguments) or ("text", reply), which ends the turn; /compact has none."""
    reader = READERS[agent]
    names = list(FILES)
    reads = 0
    segments = []
    for kind, prompts in LONG:
        out = []
        for what, arg in prompts:
            if what == "compact":
                out.append(("/compact", []))
            elif what == "work":
                calls = [c for k in arg for c in steps[k]]
                text = WORK_TEXT.get(arg[0], "Next task.")
                out.append((text, calls + [("text", "Done; the list is up to date.")]))
            else:
                a, b = names[reads % len(names)], names[(reads + 1) % len(names)]
                reads += 2
                files = [reader(Path(project, f), f) for f in (a, b)]
                out.append((f"What do {a} and {b} say?", files + [("text", IDLE_REPLY)]))
        segments.append((kind, out))
    return segments


# Codex's compaction request (its last message) and Gemini CLI's (and the check of the
# summary that follows it) hold these; each gets a summary of the scripted session.
CODEX_COMPACT_ASK = "CONTEXT CHECKPOINT COMPACTION"
GEMINI_COMPACT_ASK = "<state_snapshot>"
GEMINI_SUMMARY = (
    "<state_snapshot>The user plans and does the parser work with a todo list: six tasks (#3 after #2,"
    " #6 after #5), three done or in progress, reading the project's files in between.</state_snapshot>"
)
# A turn sent back by a hook's end-of-turn reminder (Codex's Stop, Gemini CLI's AfterAgent).
REMINDER_HEAD = "Reminder from the todo tool"
# The input tokens Codex is told its first answer took in the process that compacts, above
# the auto-compaction limit that process is given (as plugin_cases.codex_plugin does).
CODEX_BIG = 50000
CODEX_LIMIT = 2000
# Gemini CLI compresses before a request when the previous answer's input tokens reached its
# threshold (a fraction of gemini-2.5-flash's 1,048,576 tokens; 0.5 by default): in the
# process that compresses, the first answer reports GEMINI_BIG, above the threshold that
# process is given and the default alike, and every other answer 100.
GEMINI_THRESHOLD = 0.02
GEMINI_BIG = 600000


def tail_text(api, body):
    """The text the request ends with: the last user message's (Claude Code), or the last
    item's when it is a message (Codex, Gemini CLI), else ""."""
    if api == "anthropic":
        return pc.last_user_text({"body": body})
    if api == "openai":
        items = body.get("input") or []
        last = items[-1] if items and isinstance(items[-1], dict) else {}
        if last.get("type") not in ("message", None) or "role" not in last:
            return ""
        content = last.get("content")
        if isinstance(content, str):
            return content
        return "".join(c.get("text", "") for c in content or [] if isinstance(c, dict))
    if api == "gemini":
        contents = body.get("contents") or []
        last = contents[-1] if contents else {}
        if last.get("role") != "user":
            return ""
        return "".join(part.get("text", "") for part in last.get("parts") or [] if isinstance(part, dict))
    return ""


class LongModel(ms.ScriptedModel):
    """The scripted model of one process of the long session: `actions` in order, one per
    request (a call, or a text that ends the turn), whatever the conversation holds (it
    may be resumed or compacted). A compaction request gets a summary, a turn continued by
    a hook's reminder a short text (both without taking an action), a side request the
    short text. Codex's MCP tools come through its tool_search: searched for when needed.
    With `big_first`, its first answer reports that many input tokens."""

    def __init__(self, actions, first_id, big_first=0):
        super().__init__([], big_first=big_first)
        self.script = list(actions)
        # The ids of its answers (tool_use ids) go on from the earlier processes': a resumed
        # history holds those, and an id given twice is not answered.
        self.counter = first_id
        self.first_id = first_id

    def prompt_tokens(self, n, call):
        return self.big_first if n == self.first_id + 1 and self.big_first else 100

    def decide(self, api, body):
        offered = [name for name, _ in ms.offered_tools(api, body)] if isinstance(body, dict) else []
        last = tail_text(api, body) if isinstance(body, dict) else ""
        if api == "anthropic" and COMPACT_ASK in last:
            return None, SUMMARY
        if api == "openai" and CODEX_COMPACT_ASK in last:
            return None, SUMMARY
        if api == "gemini" and GEMINI_COMPACT_ASK in last:
            return None, GEMINI_SUMMARY
        if not offered:
            return None, ms.SIDE_TEXT
        if last.startswith(STOP_FEEDBACK) or (api != "anthropic" and REMINDER_HEAD in last):
            return None, "Noted: the task in progress stays in progress until it is done."
        with self.lock:
            if not self.script:
                return None, self.final_text
            tool, args = self.script[0]
            if tool == "text":
                self.script.pop(0)
                return None, args
            match = offered_name(offered, tool)
            if match is None:
                if api == "anthropic" and ms._may_wait(body):
                    return ms.WAIT_TOOL, {"servers": ["rpiv_todo"]}
                if api == "openai" and tool == "todo" and ms._needs_tool_search(body):
                    return "tool_search", {"query": "todo task list", "limit": 8}
                return None, ms.SIDE_TEXT
            self.script.pop(0)
            return match, args


def claude_segment(env, project, session, kind, prompts, extra_args, first_id):
    """One claude process of the long session: its prompts sent one at a time over
    stream-json, each once the one before has its result. (requests, calls not made, exit
    code, stderr)."""
    model = LongModel([a for _, actions in prompts for a in actions], first_id)
    server = ms.ModelServer(model)
    e, args = R.agent_env(env, "claude", server.url)
    which = ["--session-id", session] if kind == "new" else ["--resume", session]
    command = ["claude", *args, *extra_args, *which, "-p", "--input-format", "stream-json",
               "--output-format", "stream-json", "--verbose"]
    proc = subprocess.Popen(command, cwd=project, env=e, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    timer = threading.Timer(R.RUN_TIMEOUT * 2, proc.kill)
    timer.start()
    try:
        for text, _ in prompts:
            proc.stdin.write(json.dumps({"type": "user", "message": {"role": "user", "content": text}}) + "\n")
            proc.stdin.flush()
            for line in proc.stdout:
                if line.startswith('{"type":"result"'):
                    break
        proc.stdin.close()
    except BrokenPipeError:
        pass
    proc.stdout.read()
    err = proc.stderr.read()
    rc = proc.wait()
    timer.cancel()
    server.close()
    return model.requests, len(model.script), rc, err


def run_long(agent, label, steps, plugin, out, clis, server_command, extra_env=None, extra_args=()):
    """The long session by `agent`: its segments one after another in one HOME and project,
    with the plugin installed as the README says when `plugin`. Writes OUT_DIR/<label>.json,
    every process's requests in order."""
    made = agent_scratch(agent, label, clis, extra_env)
    if made is None:
        return None
    scratch, home, project, env = made
    for name, text in FILES.items():
        Path(project, name).parent.mkdir(parents=True, exist_ok=True)
        Path(project, name).write_text(text)
    if agent == "gemini":
        # Test-only, as plugin_cases.run_case: the folder trusted (a user answers Gemini's
        # prompt), its first-start settings, the folder git clone would make.
        env["GEMINI_CLI_TRUST_WORKSPACE"] = "true"
        R.agent_env(env, "gemini", "http://127.0.0.1:9")
        Path(home, ".local", "share").mkdir(parents=True, exist_ok=True)
    if plugin:
        errors = install_plugin(agent, scratch, home, project, env, server_command)
        if errors:
            print(f"{label}: {errors}", file=sys.stderr)
            return None
    segments = long_prompts(steps, project, agent)
    if agent == "claude":
        requests = []
        session = str(uuid.uuid4())
        for kind, prompts in segments:
            got, left, rc, err = claude_segment(env, project, session, kind, prompts, list(extra_args), 1000 * len(requests))
            requests += got
            if rc != 0 or left:
                print(f"{label}: a {kind} segment: exit {rc}, {left} actions not taken: {err[-800:]}", file=sys.stderr)
    else:
        requests = cli_long(agent, label, scratch, env, project, segments, list(extra_args))
    errors = list_errors(requests, steps[0][0][0])
    if errors:
        print(f"{label}: {len(errors)} list calls answered with an error: {errors[:3]}", file=sys.stderr)
    path = Path(out, f"{label}.json")
    path.write_text(json.dumps(requests, indent=1, ensure_ascii=False))
    return path


def cli_long(agent, label, scratch, env, project, segments, extra_args):
    """The long session by Codex or Gemini CLI, which take one prompt a process: each prompt
    a `codex exec` / `gemini -p`, the first a new session, every later one a resume of it
    (`codex exec resume ID`, `gemini --resume latest`). The compaction where the segments
    put /compact: Codex's in the prompt before it (that process given a low
    model_auto_compact_token_limit, and its first answer reporting more, so Codex compacts
    once, mid-turn, after that prompt's first read); Gemini CLI's in the prompt after it
    (that process's first answer reporting GEMINI_BIG input tokens, so Gemini CLI compresses
    once, before the prompt's second request). The requests, in order."""
    flat = [(text, actions) for _, prompts in segments for text, actions in prompts]
    runs = []
    for i, (text, actions) in enumerate(flat):
        if text == "/compact":
            continue
        before = i > 0 and flat[i - 1][0] == "/compact"
        after = i + 1 < len(flat) and flat[i + 1][0] == "/compact"
        runs.append((text, actions, after if agent == "codex" else before))
    requests = []
    session = None
    for n, (text, actions, compact) in enumerate(runs):
        big = (CODEX_BIG if agent == "codex" else GEMINI_BIG) if compact else 0
        model = LongModel(actions, 1000 * len(requests), big)
        resume = (session if agent == "codex" else True) if n > 0 else None
        rc, out, err = cli_prompt(agent, scratch, env, project, model, extra_args, text, resume, compact)
        requests += model.requests
        if agent == "codex" and session is None:
            m = re.search(r"session id: (\S+)", err)
            session = m.group(1) if m else None
            if session is None:
                print(f"{label}: codex exec named no session: {err[-800:]}", file=sys.stderr)
                break
        if rc != 0 or model.script:
            print(f"{label}: prompt {n + 1} ({text!r}): exit {rc}, {len(model.script)} actions not taken: {err[-800:]}",
                  file=sys.stderr)
    return requests


def cli_prompt(agent, scratch, env, project, model, extra_args, text, resume, compact):
    """One `codex exec` or `gemini -p` of the long session against `model`; `resume`: the
    session to resume (True: Gemini's latest); `compact`: the process that compacts.
    (exit code, stdout, stderr)."""
    server = ms.ModelServer(model)
    e, args = R.agent_env(env, agent, server.url)
    if agent == "codex":
        # Its hooks trusted for this run only, as plugin_cases.run_codex (a user trusts them
        # once in /hooks); nothing to trust without the plugin.
        command = ["codex", "exec", "--skip-git-repo-check", "--dangerously-bypass-hook-trust", *args, *extra_args]
        if compact:
            command += ["-c", f"model_auto_compact_token_limit={CODEX_LIMIT}"]
        command += ["resume", resume, text] if resume else [text]
    else:
        if compact:
            # System settings over the user's, for this process only.
            system = Path(scratch, "gemini-compress.json")
            system.write_text(json.dumps({"model": {"compressionThreshold": GEMINI_THRESHOLD}}))
            e["GEMINI_CLI_SYSTEM_SETTINGS_PATH"] = str(system)
        command = ["gemini", *args, *extra_args, *(["--resume", "latest"] if resume else []), "-p", text]
    try:
        proc = subprocess.run(command, cwd=project, env=e, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                              timeout=R.RUN_TIMEOUT)
        rc, out, err = proc.returncode, proc.stdout, proc.stderr
    except subprocess.TimeoutExpired as x:
        rc, out, err = -9, str(x.stdout or ""), f"(killed after {R.RUN_TIMEOUT}s)"
    server.close()
    return rc, out, err


def list_errors(requests, tool):
    """The replies to `tool` (the list's tool; "todo": under any prefix) that report an
    error, each once: (arguments, reply)."""
    seen = []
    for req in requests:
        api = ms.api_of(req["path"])
        if not api or not isinstance(req["body"], dict):
            continue
        name = offered_name([n for n, _ in ms.offered_tools(api, req["body"])], tool)
        for x in ms.todo_exchanges(api, req["body"], name) if name else []:
            reply = x.get("result")
            bad = x.get("is_error") or (isinstance(x.get("raw"), dict) and "error" in x["raw"])
            if reply is not None and (bad or re.search(r"\berror\b", reply, re.I)):
                got = (x.get("args"), reply)
                if got not in seen:
                    seen.append(got)
    return seen


def install_plugin(agent, scratch, home, project, env, server_command):
    """The README's blocks tagged readme-test=<agent>-plugin, as a user runs them, with the
    GitHub marketplace (Gemini CLI: the clone) replaced by a copy of this checkout's whose
    `npx -y rpiv-todo-mcp` is `server_command` (as tests/terminal/plugin_cases.py does).
    The errors, or []."""
    market = pc.marketplace_copy(R, scratch, server_command)
    blocks = []
    for lang, attrs, text in R.readme_blocks(R.DOCS[0], f"{agent}-plugin"):
        if lang == "sh":
            text = text.replace(f"marketplace add {MARKETPLACE}", f"marketplace add {market}")
            text = text.replace(f"git clone --depth 1 https://github.com/{MARKETPLACE}", f"cp -R {market}")
        blocks.append((lang, attrs, text))
    if not blocks:
        return [f"no blocks tagged readme-test={agent}-plugin"]
    return R.apply_blocks(blocks, home, project, env, None)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out")
    parser.add_argument("--clis")
    parser.add_argument("--agents", help="claude,codex,gemini (default: all three)")
    parser.add_argument("--session", choices=["short", "long"], default="short")
    parser.add_argument("--claude-model", help="Claude Code's --model (default: its own)")
    args = parser.parse_args()
    Path(args.out).mkdir(parents=True, exist_ok=True)
    clis = R.cache_dir(args.clis)
    binary = Path(os.environ.get("CARGO_TARGET_DIR") or ROOT / "target") / "release" / "rpiv_todo_mcp"
    only = set(args.agents.split(",")) if args.agents else None
    if args.session == "long":
        yolo = ("--approval-mode", "yolo")
        runs = [
            ("claude", "task-tools", task_tools_steps(), False, None, ()),
            ("claude", "todowrite", todo_write_steps(), False, {"CLAUDE_CODE_ENABLE_TASKS": "0"}, ()),
            # Ours with each agent's plugin (README.md's blocks): its hooks put the list back.
            ("claude", "rpiv-todo", ours_steps(), True, None, ()),
            ("codex", "update-plan", update_plan_steps(), False, None, ("-c", "tools.update_plan.enabled=true")),
            ("codex", "rpiv-todo", ours_steps(), True, None, ()),
            # Both in yolo mode, so that both are offered the same built-in tools.
            ("gemini", "write-todos", write_todos_steps(), False, None, yolo),
            ("gemini", "rpiv-todo", ours_steps(), True, None, yolo),
        ]
        for agent, what, steps, plugin, env, extra in runs:
            if only and agent not in only:
                continue
            label = f"{agent}-long-{what}"
            if agent == "claude" and args.claude_model:
                extra = (*extra, "--model", args.claude_model)
                label += "-" + args.claude_model
            path = run_long(agent, label, steps, plugin, args.out, clis, str(binary), env, extra)
            if path:
                print(f"{label}={path}")
        return
    runs = [
        ("claude", "task-tools", task_tools(), False, None, ()),
        # Claude Code's TodoWrite, its list when the Task tools are off.
        ("claude", "todowrite", todo_write(), False, {"CLAUDE_CODE_ENABLE_TASKS": "0"}, ()),
        ("claude", "rpiv-todo", ours(), True, None, ()),
        ("codex", "update-plan", update_plan(), False, None, ("-c", "tools.update_plan.enabled=true")),
        ("codex", "rpiv-todo", ours(), True, None, ()),
        ("gemini", "write-todos", write_todos(), False, None, ("--approval-mode", "yolo")),
        ("gemini", "rpiv-todo", ours(), True, None, ("--approval-mode", "yolo")),
    ]
    for agent, what, calls, with_blocks, env, extra in runs:
        if only and agent not in only:
            continue
        blocks = R.readme_blocks(R.DOCS[0], agent) if with_blocks else None
        label = f"{agent}-{what}"
        if agent == "claude" and args.claude_model:
            extra = (*extra, "--model", args.claude_model)
            label += "-" + args.claude_model
        path = run_agent(agent, label, calls, blocks, args.out, clis, str(binary), env, extra)
        if path:
            print(f"{label}={path}")


if __name__ == "__main__":
    main()
