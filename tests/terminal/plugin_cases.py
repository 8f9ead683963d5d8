"""tests/terminal/plugin_cases.py: the agents' plugins (issue 37), run by tests/terminal/run.py.

    python3 tests/terminal/run.py claude-plugin [--server binary|script|npx ...]

The README's blocks tagged readme-test=claude-plugin are applied as a user would: the
settings file written, then `claude plugin marketplace add` and `claude plugin install`.
The marketplace the commands name (the GitHub repository) is replaced by this checkout,
or, with --server binary|script, by a copy of its marketplace whose `npx -y rpiv-todo-mcp`
is replaced by that command. Then, against the scripted model, one session:

  1. a new session (--session-id): the seven calls of run.py; the tool is offered as
     mcp__plugin_rpiv-todo_rpiv_todo__todo and each reply reaches the model; the list
     starts empty, so no request carries it, and no task is in progress at the end, so
     no reminder;
  2. resumed (--resume), one more call that leaves #2 in_progress: the first request
     carries the open list once; the turn's end is blocked once with the reminder, which
     the next request carries once, and the turn then ends;
  3. resumed, `/compact`, then a prompt: the prompt's request carries the list once;
  4. `/clear`, then a prompt: the prompt's request carries the list once;
  5. the model completes #2 and #3; `/clear`, then a prompt: no request carries the
     list or a reminder.
"""

import json
import re
import shutil
import subprocess
import uuid
from pathlib import Path

import model_server as ms

PLUGIN_TOOL = "mcp__plugin_rpiv-todo_rpiv_todo__todo"
MARKETPLACE = "rpiv-todo/rpiv_todo"
LIST_HEAD = "The todo list as it stands (the conversation before this point was summarized): "
# The list after step 2, as the hooks put it back (hand-written).
OPEN_LIST = (
    LIST_HEAD + "3 tasks (1 completed, 1 in progress, 1 pending).\n"
    "Open tasks:\n"
    "[in_progress] #2 Write the tests\n"
    "[pending] #3 Ship it ⛓ #1,#2\n"
    "Keep using these ids with the todo tool; `list` shows every task."
)
# The list when step 2 resumes the session (hand-written).
RESUMED_LIST = (
    LIST_HEAD + "3 tasks (1 completed, 2 pending).\n"
    "Open tasks:\n"
    "[pending] #2 Write the tests\n"
    "[pending] #3 Ship it ⛓ #1,#2\n"
    "Keep using these ids with the todo tool; `list` shows every task."
)
REMINDER = (
    "Reminder from the todo tool: 1 task is still in_progress: #2 Write the tests. Mark a task"
    " completed as soon as it is fully done, set it back to pending if you stopped working on"
    " it, and keep exactly one task in_progress while you work."
)


def marketplace_copy(R, scratch, server_command):
    """The marketplace the test installs: this checkout, or a copy of its marketplace files
    with `npx -y rpiv-todo-mcp` replaced by `server_command`."""
    if not server_command:
        return R.ROOT
    copy = Path(scratch, "marketplace")
    shutil.copytree(R.ROOT / ".claude-plugin", copy / ".claude-plugin")
    shutil.copytree(R.ROOT / "plugins", copy / "plugins")
    for f in copy.rglob("*.json"):
        text = f.read_text()
        text = R.NPX_FORMS["json"].sub(lambda _: R.server_form("json", server_command), text)
        text = R.NPX_FORMS["sh"].sub(lambda _: server_command, text)
        f.write_text(text)
    return copy


def body_text(req):
    """Every string in the request's body, one after another: what the model reads."""
    out = []

    def walk(v):
        if isinstance(v, str):
            out.append(v)
        elif isinstance(v, dict):
            for x in v.values():
                walk(x)
        elif isinstance(v, list):
            for x in v:
                walk(x)

    walk(req["body"])
    return "\n".join(out)


def model_requests(model):
    return [r for r in model.requests if ms.api_of(r["path"]) and isinstance(r["body"], dict)]


def last_user_text(req):
    """The text of the request's last user message."""
    for message in reversed(req["body"].get("messages") or []):
        if message.get("role") == "user":
            content = message.get("content")
            if isinstance(content, str):
                return content
            return "".join(b.get("text", "") for b in content if b.get("type") == "text")
    return ""


def run_claude(R, env, project, calls, prompt_args, stdin_messages=None):
    """One claude process against a scripted model: (exit code, stdout, stderr, model)."""
    model = ms.ScriptedModel(calls)
    server = ms.ModelServer(model)
    e, args = R.agent_env(env, "claude", server.url)
    command = ["claude", *args, *prompt_args]
    given = None
    if stdin_messages is not None:
        command += ["-p", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose"]
        given = "".join(
            json.dumps({"type": "user", "message": {"role": "user", "content": m}}) + "\n" for m in stdin_messages
        )
    try:
        proc = subprocess.run(
            command, cwd=project, env=e, input=given, capture_output=True, text=True, timeout=R.RUN_TIMEOUT
        )
        rc, out, err = proc.returncode, proc.stdout, proc.stderr
    except subprocess.TimeoutExpired as x:
        rc, out, err = -9, x.stdout or "", f"(killed after {R.RUN_TIMEOUT}s)"
    server.close()
    # Kept with --keep, as run.py keeps each agent's.
    Path(project).parent.joinpath(f"requests-{server.port}.json").write_text(
        json.dumps(model.requests, indent=1, ensure_ascii=False)
    )
    return rc, out, err, model


def run_claude_plugin(R, args, cache, scratch):
    pin = R.pins()["claude"]
    bindir, why = R.cli_bin(cache, pin)
    if bindir is None:
        print(f"skipped: {why}")
        return R.SKIP
    readme = R.readme_path(args.readme)
    blocks = R.readme_blocks(readme, "claude-plugin")
    if not R.check(blocks, f"claude-plugin: {readme.name} has blocks tagged readme-test=claude-plugin"):
        return 1
    setup = R.server_setup(args, scratch)
    if setup is None:
        return 1
    server_command, registry = setup
    try:
        claude_plugin(R, pin, bindir, blocks, args, scratch, server_command, registry)
    finally:
        if registry:
            registry.close()
    return 0


def claude_plugin(R, pin, bindir, blocks, args, scratch, server_command, registry):
    name = "claude-plugin"
    home, project = Path(scratch, "home"), Path(scratch, "project")
    home.mkdir()
    project.mkdir()
    env = R.base_env(home, bindir)
    R.check_version(name, pin, bindir, blocks, env)
    if registry:
        registry.npmrc(home, scratch)
    market = marketplace_copy(R, scratch, server_command)
    replaced = []
    for lang, attrs, text in blocks:
        if lang == "sh":
            if MARKETPLACE not in text:
                replaced.append(f"no `{MARKETPLACE}` in {text!r}")
            text = text.replace(f"marketplace add {MARKETPLACE}", f"marketplace add {market}")
        replaced.append((lang, attrs, text))
    bad = [r for r in replaced if isinstance(r, str)]
    errors = bad + R.apply_blocks([r for r in replaced if not isinstance(r, str)], home, project, env, None)
    R.check(not errors, f"{name}: the README's blocks ran (settings, marketplace add, plugin install)", errors)
    installed = json.loads(Path(home, ".claude", "settings.json").read_text()).get("enabledPlugins", {})
    R.eq(installed, {"rpiv-todo@rpiv-todo": True}, f"{name}: the plugin is enabled in ~/.claude/settings.json")

    session = str(uuid.uuid4())
    # 1. A new session: the seven calls.
    rc, out, err, model = run_claude(R, env, project, R.CALLS, ["--session-id", session, "-p", R.PROMPT])
    R.check_npx(name, registry)
    R.check_run(name, model, rc, out, err)
    main = R.main_requests(model)
    R.eq(main[0][2] if main else None, PLUGIN_TOOL, f"{name}: the tool is offered as {PLUGIN_TOOL}")
    R.check_saved(name, env, project, args.nvim, scratch)
    offered = R.all_offered(model)
    R.eq([b for b in R.BUILTIN["claude"] if b in offered], [], f"{name}: Claude Code's own task tools are not offered")
    bodies = [body_text(r) for r in model_requests(model)]
    R.eq(sum(b.count(LIST_HEAD) for b in bodies), 0, f"{name}: 1: no request carries the list (it started empty)")
    R.eq(sum(b.count("Reminder from the todo tool") for b in bodies), 0, f"{name}: 1: no reminder (none in progress)")

    # 2. Resumed: #2 set in progress; the list once at the start, the reminder once at the end.
    more = R.CALLS + [{"action": "update", "id": 2, "status": "in_progress"}]
    rc, out, err, model = run_claude(R, env, project, more, ["--resume", session, "-p", "Go on."])
    R.eq(rc, 0, f"{name}: 2: the resumed session exited 0")
    reqs = model_requests(model)
    bodies = [body_text(r) for r in reqs]
    R.eq(bodies[0].count(RESUMED_LIST) if bodies else None, 1, f"{name}: 2: after the resume the first request carries the open list once")
    R.eq(max((b.count(LIST_HEAD) for b in bodies), default=0), 1, f"{name}: 2: no request carries it twice")
    reminded = [b.count(REMINDER) for b in bodies]
    R.eq(
        [n for n in reminded if n],
        [1],
        f"{name}: 2: the turn's end is blocked once: one request carries the reminder, once",
        )
    R.check(reminded and reminded[-1] == 1, f"{name}: 2: the reminder is in the last request", reminded)
    feedback = last_user_text(reqs[-1]) if reqs else ""
    R.eq(feedback, "Stop hook feedback:\n" + REMINDER, f"{name}: 2: as Stop hook feedback, the last request's last message")
    R.check(ms.FINAL_TEXT in out, f"{name}: 2: the turn then ended", out[-300:])

    # 3. Resumed, compacted, then a prompt.
    rc, out, err, model = run_claude(R, env, project, [], ["--resume", session], ["/compact", "Next step."])
    R.eq(rc, 0, f"{name}: 3: /compact and a prompt exited 0")
    after = [r for r in model_requests(model) if "Next step." in last_user_text(r)]
    if R.check(after, f"{name}: 3: the prompt after /compact reached the model", len(model.requests)):
        R.eq(body_text(after[0]).count(LIST_HEAD), 1, f"{name}: 3: after /compact the prompt's request carries the list once")
        R.check(OPEN_LIST in body_text(after[0]), f"{name}: 3: in the compact form")

    # 4. /clear, then a prompt.
    rc, out, err, model = run_claude(R, env, project, [], ["--resume", session], ["/clear", "Next step."])
    R.eq(rc, 0, f"{name}: 4: /clear and a prompt exited 0")
    after = [r for r in model_requests(model) if "Next step." in last_user_text(r)]
    if R.check(after, f"{name}: 4: the prompt after /clear reached the model", len(model.requests)):
        R.eq(body_text(after[0]).count(OPEN_LIST), 1, f"{name}: 4: after /clear the prompt's request carries the list once")

    # 5. Every task done: nothing after /clear.
    finish = [{"action": "update", "id": 2, "status": "completed"}, {"action": "update", "id": 3, "status": "completed"}]
    rc, out, err, model = run_claude(R, env, project, finish, ["--resume", session, "-p", "Finish the list."])
    R.eq(rc, 0, f"{name}: 5: the turn that completes #2 and #3 exited 0")
    fed = [r for r in model_requests(model) if last_user_text(r).startswith("Stop hook feedback")]
    R.eq(len(fed), 0, f"{name}: 5: its end is not blocked (no reminder)")
    rc, out, err, model = run_claude(R, env, project, [], ["--resume", session], ["/clear", "Next step."])
    R.eq(rc, 0, f"{name}: 5: /clear and a prompt exited 0")
    saved = next(iter(Path(home, ".local", "state", "nvim", "rpiv_todo").glob("*.json")), None)
    tasks = json.loads(saved.read_text())["tasks"] if saved else []
    R.eq([t["status"] for t in tasks], ["completed"] * 3, f"{name}: 5: every task completed")
    after = [r for r in model_requests(model) if "Next step." in last_user_text(r)]
    if R.check(after, f"{name}: 5: the prompt after /clear reached the model", len(model.requests)):
        R.eq(body_text(after[0]).count(LIST_HEAD), 0, f"{name}: 5: with no open task the request carries no list")
    R.eq(
        sum(body_text(r).count("Reminder from the todo tool") for r in model_requests(model)),
        0,
        f"{name}: 5: and no reminder",
    )
    if re.search(r"rpiv_todo_mcp hook[^\n]*(error|panicked)", err):
        R.check(False, f"{name}: the hooks wrote no error", err[-500:])
