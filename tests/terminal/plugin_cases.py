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

qwen-plugin: docs/agents.md's blocks (the server registered by hand, then `qwen extensions
install rpiv-todo/rpiv_todo:rpiv-todo`, the marketplace always a copy), then the same five
steps with `/compress` for `/compact` (a prompt before it, the prompts sent one at a time
over stream-json), and before step 5 a resume with the list unchanged: the list again, once
(Qwen Code keeps a hook's context out of its session file, so the resumed history has no
earlier copy; the hook knows Qwen Code by QWEN_PROJECT_DIR). codex-plugin, gemini-plugin
and copilot-plugin: see their functions; opencode-plugin: tests/terminal/opencode_cases.py.
"""

import json
import re
import shutil
import subprocess
import threading
import uuid
from pathlib import Path

import model_server as ms

PLUGIN_TOOL = "mcp__plugin_rpiv-todo_rpiv_todo__todo"
MARKETPLACE = "rpiv-todo/rpiv_todo"
# How the hooks' list begins (counted to find every copy), after a compaction and where
# nothing was summarized (a start, a resume, a /clear).
LIST_HEAD = "The todo list as it stands"
SUMMARIZED_HEAD = LIST_HEAD + " (the conversation before this point was summarized): "
PLAIN_HEAD = LIST_HEAD + ": "
# The list after step 2, as the hooks put it back after a compaction, and where nothing
# was summarized (hand-written).
OPEN_BODY = (
    "3 tasks (1 completed, 1 in progress, 1 pending).\n"
    "Open tasks:\n"
    "[in_progress] #2 Write the tests\n"
    "[pending] #3 Ship it ⛓ #1,#2\n"
    "Keep using these ids with the todo tool; `list` shows every task."
)
OPEN_LIST = SUMMARIZED_HEAD + OPEN_BODY
PLAIN_OPEN_LIST = PLAIN_HEAD + OPEN_BODY
# The list when step 2 resumes the session (hand-written).
RESUMED_LIST = (
    PLAIN_HEAD + "3 tasks (1 completed, 2 pending).\n"
    "Open tasks:\n"
    "[pending] #2 Write the tests\n"
    "[pending] #3 Ship it ⛓ #1,#2\n"
    "Keep using these ids with the todo tool; `list` shows every task."
)
# What the user (not the model) is told once (examples/mcp/hook.rs, TOLD).
TOLD = "rpiv_todo keeps this agent's todo list"
REMINDER = (
    "Reminder from the todo tool: #2 Write the tests is still in_progress. Mark it completed if"
    " it is done, or pending if you stopped."
)


def marketplace_copy(R, scratch, server_command, always=False):
    """The marketplace the test installs: this checkout, or a copy of its marketplace files
    with `npx -y rpiv-todo-mcp` replaced by `server_command` (a copy `always`: Qwen Code
    writes a folder of its own into the marketplace it installs from)."""
    if not server_command and not always:
        return R.ROOT
    copy = Path(scratch, "marketplace")
    shutil.copytree(R.ROOT / ".claude-plugin", copy / ".claude-plugin")
    shutil.copytree(R.ROOT / "plugins", copy / "plugins")
    for f in copy.rglob("*.json"):
        text = f.read_text()
        if server_command:
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


def close_and_record(server, model, project):
    """Stop the scripted model's server and keep its requests beside the project, as
    run.py's finish_agent does (requests-<port>.json, kept with --keep)."""
    server.close()
    Path(project).parent.joinpath(f"requests-{server.port}.json").write_text(
        json.dumps(model.requests, indent=1, ensure_ascii=False)
    )


def check_resumed(R, name, model):
    """Step 2's checks, where a resume comes before a turn that ends with #2 in progress:
    the first request carries the open list once and no request carries it twice; one
    request carries the reminder, once. The requests and each one's count of reminders."""
    reqs = model_requests(model)
    bodies = [body_text(r) for r in reqs]
    R.eq(bodies[0].count(RESUMED_LIST) if bodies else None, 1, f"{name}: 2: after the resume the first request carries the open list once")
    R.eq(max((b.count(LIST_HEAD) for b in bodies), default=0), 1, f"{name}: 2: no request carries it twice")
    reminded = [b.count(REMINDER) for b in bodies]
    R.eq([n for n in reminded if n], [1], f"{name}: 2: the turn's end is blocked once: one request carries the reminder, once")
    return reqs, reminded


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
    close_and_record(server, model, project)
    return rc, out, err, model


def run_case(case, R, args, cache, scratch):
    """claude-plugin, codex-plugin or gemini-plugin: run.py's exit code for the case."""
    agent = case.removesuffix("-plugin")
    pin = R.pins()[agent]
    bindir, why = R.cli_bin(cache, pin)
    if bindir is None:
        print(f"skipped: {why}")
        return R.SKIP
    readme = R.readme_path(args.readme)
    blocks = R.readme_blocks(readme, case)
    if not R.check(blocks, f"{case}: {readme.name} has blocks tagged readme-test={case}"):
        return 1
    if agent == "opencode":
        # Its plugin's blocks copy the file; the server is registered by hand, first.
        blocks = R.readme_blocks(readme, "opencode") + blocks
    crate = re.search(r'^version = "(.*)"', (R.ROOT / "Cargo.toml").read_text(), re.M).group(1)
    manifests = [".claude-plugin/marketplace.json", "plugins/rpiv-todo/.claude-plugin/plugin.json", "plugins/gemini/gemini-extension.json"]
    versions = {m: re.findall(r'"version": "([^"]*)"', (R.ROOT / m).read_text()) for m in manifests}
    R.eq(versions, {m: [crate] for m in manifests}, f"{case}: the plugins' manifests name the crate's version {crate}")
    setup = R.server_setup(args, scratch)
    if setup is None:
        return 1
    server_command, registry = setup
    try:
        home, project = Path(scratch, "home"), Path(scratch, "project")
        home.mkdir()
        project.mkdir()
        env = R.base_env(home, bindir)
        R.check_version(case, pin, bindir, blocks, env)
        if registry:
            registry.npmrc(home, scratch)
        if agent == "gemini":
            # Test-only, like the base URL: the folder trusted (a user answers Gemini's prompt).
            env["GEMINI_CLI_TRUST_WORKSPACE"] = "true"
            R.agent_env(env, "gemini", "http://127.0.0.1:9")  # its first-start settings
            Path(home, ".local", "share").mkdir(parents=True)  # what git clone would make
        if agent == "opencode":
            Path(home, ".local", "share").mkdir(parents=True, exist_ok=True)  # what git clone would make
            if server_command:
                # A user with the binary sets this; the plugin's hooks then run it.
                env["RPIV_TODO_MCP_BINARY"] = server_command
        if agent == "copilot":
            # Test-only: no GitHub sign-in or update check while the blocks run.
            env.update(COPILOT_OFFLINE="true", COPILOT_AUTO_UPDATE="false")
        market = marketplace_copy(R, scratch, server_command, always=agent == "qwen")
        # Qwen Code's and opencode's blocks register the server by hand: the npx command
        # replaced as run.py does.
        by_hand = agent in ("qwen", "opencode")
        install(R, case, blocks, home, project, env, market, server_command if by_hand else None)
        import opencode_cases
        plugins = {
            "claude": claude_plugin,
            "codex": codex_plugin,
            "gemini": gemini_plugin,
            "qwen": qwen_plugin,
            "copilot": copilot_plugin,
            "opencode": opencode_cases.opencode_plugin,
        }
        plugins[agent](
            R, args, scratch, home, project, env, registry
        )
    finally:
        if registry:
            registry.close()
    return 0


def install(R, case, blocks, home, project, env, market, server_command=None):
    """The README's blocks, with the GitHub marketplace replaced by `market` (and with
    `server_command`, the npx command by it)."""
    replaced, errors = [], []
    for lang, attrs, text in blocks:
        if lang == "sh":
            if MARKETPLACE not in text:
                errors.append(f"no `{MARKETPLACE}` in {text!r}")
            text = text.replace(f"marketplace add {MARKETPLACE}", f"marketplace add {market}")
            text = text.replace(f"extensions install {MARKETPLACE}:", f"extensions install {market}:")
            text = text.replace(f"git clone --depth 1 https://github.com/{MARKETPLACE}", f"cp -R {market}")
        replaced.append((lang, attrs, text))
    errors += R.apply_blocks(replaced, home, project, env, server_command)
    R.check(not errors, f"{case}: the README's blocks ran (marketplace add, plugin install)", errors)


def check_first_session(R, name, agent, own, ran, args, env, project, scratch, registry):
    """Step 1's checks, a new session making the seven calls (`ran`: the run's exit code,
    stdout, stderr and model): the server came as the blocks say, every reply reached the
    model, the list is where Neovim reads it, the agent's own list (`own`) is not offered,
    and no request carries the list or a reminder. The requests' texts."""
    rc, out, err, model = ran
    R.check_npx(name, registry)
    R.check_run(name, model, rc, out, err)
    R.check_saved(name, env, project, args.nvim, scratch)
    offered = R.all_offered(model)
    R.eq([b for b in R.BUILTIN[agent] if b in offered], [], f"{name}: {own} is not offered")
    bodies = [body_text(r) for r in model_requests(model)]
    R.eq(sum(b.count(LIST_HEAD) for b in bodies), 0, f"{name}: 1: no request carries the list (it started empty)")
    R.eq(sum(b.count("Reminder from the todo tool") for b in bodies), 0, f"{name}: 1: no reminder (none in progress)")
    return bodies


def claude_plugin(R, args, scratch, home, project, env, registry):
    name = "claude-plugin"
    installed = json.loads(Path(home, ".claude", "settings.json").read_text()).get("enabledPlugins", {})
    R.eq(installed, {"rpiv-todo@rpiv-todo": True}, f"{name}: the plugin is enabled in ~/.claude/settings.json")

    session = str(uuid.uuid4())
    # 1. A new session: the seven calls.
    ran = run_claude(R, env, project, R.CALLS, ["--session-id", session, "-p", R.PROMPT])
    main = R.main_requests(ran[3])
    R.eq(main[0][2] if main else None, PLUGIN_TOOL, f"{name}: the tool is offered as {PLUGIN_TOOL}")
    own = "Claude Code's own task tools"
    bodies = check_first_session(R, name, "claude", own, ran, args, env, project, scratch, registry)
    R.eq(sum(b.count(TOLD) for b in bodies), 0, f"{name}: 1: the model is not told what the user is told")

    # 2. Resumed: #2 set in progress; the list once at the start, the reminder once at the end.
    more = R.CALLS + [{"action": "update", "id": 2, "status": "in_progress"}]
    rc, out, err, model = run_claude(R, env, project, more, ["--resume", session, "-p", "Go on."])
    R.eq(rc, 0, f"{name}: 2: the resumed session exited 0")
    reqs, reminded = check_resumed(R, name, model)
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
        # The resume's copy: Claude Code writes it to the transcript after the compaction,
        # and the compaction's hook, right after the resume, puts in no second one.
        R.check(PLAIN_OPEN_LIST in body_text(after[0]), f"{name}: 3: in the compact form")

    # 4. /clear, then a prompt.
    rc, out, err, model = run_claude(R, env, project, [], ["--resume", session], ["/clear", "Next step."])
    R.eq(rc, 0, f"{name}: 4: /clear and a prompt exited 0")
    after = [r for r in model_requests(model) if "Next step." in last_user_text(r)]
    if R.check(after, f"{name}: 4: the prompt after /clear reached the model", len(model.requests)):
        R.eq(body_text(after[0]).count(PLAIN_OPEN_LIST), 1, f"{name}: 4: after /clear the prompt's request carries the list once")

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


class Budget(ms.ScriptedModel):
    """The scripted model, making at most `budget` todo calls in all: after a compaction
    the conversation no longer shows the calls it made, and it must not make them again."""

    def __init__(self, calls, budget, **kw):
        super().__init__(calls, **kw)
        self.budget = budget

    def decide(self, api, body):
        name, what = super().decide(api, body)
        if name and ms.TODO_NAME.search(name):
            with self.lock:
                if self.budget <= 0:
                    return None, self.final_text
                self.budget -= 1
        return name, what


class Sequence(ms.ScriptedModel):
    """The scripted model making `calls` one after another, whatever the conversation
    already holds (a resumed, compacted one)."""

    def decide(self, api, body):
        tool = ms.todo_tool(api, body)
        if tool is None:
            return super().decide(api, body)
        with self.lock:
            if not self.calls:
                return None, self.final_text
            return tool[0], self.calls.pop(0)


def run_codex(R, env, project, calls, extra, big_first=0, budget=None):
    """One `codex exec` against a scripted model, its hooks trusted for this run only
    (a user trusts them once in Codex's /hooks): (exit code, stdout, stderr, model)."""
    if budget == "sequence":
        model = Sequence(calls)
    elif budget is None:
        model = ms.ScriptedModel(calls, big_first=big_first)
    else:
        model = Budget(calls, budget, big_first=big_first)
    server = ms.ModelServer(model)
    e, args = R.agent_env(env, "codex", server.url)
    command = ["codex", "exec", "--skip-git-repo-check", "--dangerously-bypass-hook-trust", *args, *extra]
    try:
        proc = subprocess.run(command, cwd=project, env=e, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=R.RUN_TIMEOUT)
        rc, out, err = proc.returncode, proc.stdout, proc.stderr
    except subprocess.TimeoutExpired as x:
        rc, out, err = -9, str(x.stdout or ""), f"(killed after {R.RUN_TIMEOUT}s)"
    close_and_record(server, model, project)
    return rc, out, err, model


def codex_last_user_text(req):
    """The text of the last user message in a Responses request."""
    for item in reversed(req["body"].get("input") or []):
        if item.get("type") == "message" and item.get("role") == "user":
            content = item.get("content")
            if isinstance(content, str):
                return content
            return "".join(p.get("text", "") for p in content or [] if isinstance(p, dict))
    return ""


def codex_plugin(R, args, scratch, home, project, env, registry):
    name = "codex-plugin"
    config = Path(home, ".codex", "config.toml").read_text() if Path(home, ".codex", "config.toml").exists() else ""
    R.check('[plugins."rpiv-todo@rpiv-todo"]\nenabled = true' in config, f"{name}: the plugin is enabled in ~/.codex/config.toml", config)

    # 1. A new session: the seven calls.
    ran = run_codex(R, env, project, R.CALLS, [R.PROMPT])
    check_first_session(R, name, "codex", "Codex's own plan tool", ran, args, env, project, scratch, registry)
    err = ran[2]
    m = re.search(r"session id: (\S+)", err)
    if not R.check(m, f"{name}: 1: codex exec names its session", err[-500:]):
        return
    session = m.group(1)

    # 2. Resumed: #2 set in progress; the list once at the start, the reminder once at the end.
    more = R.CALLS + [{"action": "update", "id": 2, "status": "in_progress"}]
    rc, out, err, model = run_codex(R, env, project, more, ["resume", session, "Go on."])
    R.eq(rc, 0, f"{name}: 2: the resumed session exited 0")
    reqs, reminded = check_resumed(R, name, model)
    R.check(reminded and reminded[-1] == 1, f"{name}: 2: the reminder is in the last request", reminded)
    R.check(ms.FINAL_TEXT in out, f"{name}: 2: the turn then ended", out[-300:])

    # 3. Resumed, and compacted at once (the first answer reports more tokens than the limit).
    limit = ["-c", "model_auto_compact_token_limit=2000"]
    listed = more + [{"action": "list"}]
    args3 = [*limit, "resume", session, "Next step."]
    rc, out, err, model = run_codex(R, env, project, listed, args3, big_first=50000, budget=1)
    R.eq(rc, 0, f"{name}: 3: the resumed, compacted session exited 0")
    reqs = model_requests(model)
    compacted = [i for i, r in enumerate(reqs) if "CONTEXT CHECKPOINT COMPACTION" in codex_last_user_text(r)]
    if R.check(len(compacted) == 1 and compacted[0] + 1 < len(reqs), f"{name}: 3: Codex compacted once, mid-turn", len(compacted)):
        after = body_text(reqs[compacted[0] + 1])
        R.eq(after.count(OPEN_LIST), 1, f"{name}: 3: the request after the compaction carries the open list once")
        R.eq(after.count(LIST_HEAD), 1, f"{name}: 3: and no other copy")

    # 4. Every task done: nothing on the next resume.
    finish = [{"action": "update", "id": 2, "status": "completed"}, {"action": "update", "id": 3, "status": "completed"}]
    rc, out, err, model = run_codex(R, env, project, finish, ["resume", session, "Finish the list."], budget="sequence")
    R.eq(rc, 0, f"{name}: 4: the turn that completes #2 and #3 exited 0")
    saved = next(iter(Path(env["HOME"], ".local", "state", "nvim", "rpiv_todo").glob("*.json")), None)
    tasks = json.loads(saved.read_text())["tasks"] if saved else []
    R.eq([t["status"] for t in tasks], ["completed"] * 3, f"{name}: 4: every task completed")
    before = body_text(model_requests(model)[-1]).count(LIST_HEAD) if model_requests(model) else None
    rc, out, err, model = run_codex(R, env, project, [], ["resume", session, "Next step."])
    R.eq(rc, 0, f"{name}: 4: resumed again, exited 0")
    reqs = model_requests(model)
    R.check(reqs, f"{name}: 4: the prompt reached the model")
    # The resumed history keeps what earlier hooks put in; nothing is added to it.
    got = body_text(reqs[0]).count(LIST_HEAD) if reqs else None
    R.eq(got, before, f"{name}: 4: with no open task no list is put back (the history's copies only)")
    R.eq([codex_last_user_text(r) for r in reqs if REMINDER in codex_last_user_text(r)], [], f"{name}: 4: and no reminder")


def run_gemini(R, env, project, model, prompt):
    """One `gemini -p` against `model`: (exit code, stdout, stderr, model)."""
    server = ms.ModelServer(model)
    e, args = R.agent_env(env, "gemini", server.url)
    try:
        proc = subprocess.run(
            ["gemini", *args, "-p", prompt], cwd=project, env=e, stdin=subprocess.DEVNULL,
            capture_output=True, text=True, timeout=R.RUN_TIMEOUT,
        )
        rc, out, err = proc.returncode, proc.stdout, proc.stderr
    except subprocess.TimeoutExpired as x:
        rc, out, err = -9, str(x.stdout or ""), f"(killed after {R.RUN_TIMEOUT}s)"
    close_and_record(server, model, project)
    return rc, out, err, model


def gemini_plugin(R, args, scratch, home, project, env, registry):
    name = "gemini-plugin"
    # 1. The seven calls.
    rc, out, err, model = run_gemini(R, env, project, ms.ScriptedModel(R.CALLS), R.PROMPT)
    R.check_npx(name, registry)
    R.check_run(name, model, rc, out, err)
    R.check_saved(name, env, project, args.nvim, scratch)
    bodies = [body_text(r) for r in model_requests(model)]
    R.eq(sum(b.count(LIST_HEAD) for b in bodies), 0, f"{name}: 1: no request carries the list (it started empty)")
    R.eq(sum(b.count("Reminder from the todo tool") for b in bodies), 0, f"{name}: 1: no reminder (none in progress)")

    # 2. A new session: the open list once in its first request (BeforeAgent); #2 set in
    # progress, and the turn's end (AfterAgent) answered once with the reminder.
    model = Sequence([{"action": "update", "id": 2, "status": "in_progress"}])
    rc, out, err, model = run_gemini(R, env, project, model, "Go on.")
    R.eq(rc, 0, f"{name}: 2: the second session exited 0")
    bodies = [body_text(r) for r in model_requests(model)]
    R.eq(bodies[0].count(RESUMED_LIST) if bodies else None, 1, f"{name}: 2: its first request carries the open list once")
    R.eq(max((b.count(LIST_HEAD) for b in bodies), default=0), 1, f"{name}: 2: no request carries it twice")
    reminded = [b.count(REMINDER) for b in bodies]
    R.eq([n for n in reminded if n][:1], [1], f"{name}: 2: the reminder reaches the model, once a request")

    # 3. Every task done: a new session gets no list.
    finish = [{"action": "update", "id": 2, "status": "completed"}, {"action": "update", "id": 3, "status": "completed"}]
    rc, out, err, model = run_gemini(R, env, project, Sequence(finish), "Finish the list.")
    R.eq(rc, 0, f"{name}: 3: the session that completes #2 and #3 exited 0")
    rc, out, err, model = run_gemini(R, env, project, Sequence([]), "Next step.")
    bodies = [body_text(r) for r in model_requests(model)]
    R.eq(sum(b.count(LIST_HEAD) for b in bodies), 0, f"{name}: 3: with no open task no request carries the list")


# Qwen Code's request for a compaction summary ends with this; a summary without a
# <state_snapshot> is dropped as truncated.
COMPRESS_ASK = "Then, produce the <state_snapshot> XML."
SUMMARY = "<analysis>The user plans the parser work.</analysis>\n<state_snapshot>The parser work is planned.</state_snapshot>"


class Summarizing(Sequence):
    """Sequence, answering Qwen Code's compaction request with a summary."""

    def decide(self, api, body):
        if last_user_text({"body": body}).endswith(COMPRESS_ASK):
            return None, SUMMARY
        return super().decide(api, body)


def run_qwen(R, env, project, model, prompt_args, stdin_messages=None):
    """One `qwen` against `model` (a list of calls for a new one): (exit code, stdout,
    stderr, model). With `stdin_messages`, they are the session's prompts (stream-json),
    each sent once the one before has its result: given at once, Qwen Code runs a slash
    command after the prompt that follows it."""
    if isinstance(model, list):
        model = ms.ScriptedModel(model)
    server = ms.ModelServer(model)
    e, args = R.agent_env(env, "qwen", server.url)
    command = ["qwen", *args, *prompt_args]
    if stdin_messages is None:
        try:
            proc = subprocess.run(
                command, cwd=project, env=e, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                timeout=R.RUN_TIMEOUT,
            )
            rc, out, err = proc.returncode, proc.stdout, proc.stderr
        except subprocess.TimeoutExpired as x:
            rc, out, err = -9, str(x.stdout or ""), f"(killed after {R.RUN_TIMEOUT}s)"
    else:
        command += ["--input-format", "stream-json", "--output-format", "stream-json"]
        proc = subprocess.Popen(
            command, cwd=project, env=e, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True,
        )
        timer = threading.Timer(R.RUN_TIMEOUT, proc.kill)
        timer.start()
        lines = []
        try:
            for message in stdin_messages:
                proc.stdin.write(json.dumps({"type": "user", "message": {"role": "user", "content": message}}) + "\n")
                proc.stdin.flush()
                for line in proc.stdout:
                    lines.append(line)
                    if line.startswith('{"type":"result"'):
                        break
            proc.stdin.close()
        except BrokenPipeError:
            pass
        out = "".join(lines) + proc.stdout.read()
        err = proc.stderr.read()
        rc = proc.wait()
        timer.cancel()
    close_and_record(server, model, project)
    return rc, out, err, model


def qwen_plugin(R, args, scratch, home, project, env, registry):
    name = "qwen-plugin"
    extension = Path(home, ".qwen", "extensions", "rpiv-todo")
    manifest = json.loads(Path(extension, "qwen-extension.json").read_text()) if extension.is_dir() else {}
    R.eq(manifest.get("name"), "rpiv-todo", f"{name}: the plugin is installed as the extension rpiv-todo")
    R.check(Path(extension, "hooks", "hooks.json").exists(), f"{name}: with its hooks")

    session = str(uuid.uuid4())
    # 1. A new session: the seven calls.
    ran = run_qwen(R, env, project, R.CALLS, ["--session-id", session, R.PROMPT])
    check_first_session(R, name, "qwen", "Qwen Code's own todo_write", ran, args, env, project, scratch, registry)

    # 2. Resumed: #2 set in progress; the list once at the start, the reminder once at the end.
    more = R.CALLS + [{"action": "update", "id": 2, "status": "in_progress"}]
    rc, out, err, model = run_qwen(R, env, project, more, ["--resume", session, "Go on."])
    R.eq(rc, 0, f"{name}: 2: the resumed session exited 0")
    reqs, reminded = check_resumed(R, name, model)
    R.eq(last_user_text(reqs[-1]) if reqs else None, REMINDER, f"{name}: 2: as the last request's last message")
    R.check(ms.FINAL_TEXT in out, f"{name}: 2: the turn then ended", out[-300:])

    # 3. Resumed: a prompt, `/compress`, then a prompt: that one's request carries the list once.
    steps = ["Next step.", "/compress", "After the compaction."]
    rc, out, err, model = run_qwen(R, env, project, Summarizing([]), ["--resume", session], steps)
    R.eq(rc, 0, f"{name}: 3: a prompt, /compress and a prompt exited 0")
    R.check("Context compressed" in out, f"{name}: 3: Qwen Code compressed the history", out[-500:])
    after = [r for r in model_requests(model) if "After the compaction." in last_user_text(r)]
    if R.check(after, f"{name}: 3: the prompt after /compress reached the model", len(model.requests)):
        R.eq(body_text(after[0]).count(LIST_HEAD), 1, f"{name}: 3: after /compress the prompt's request carries the list once")
        R.check(OPEN_LIST in body_text(after[0]), f"{name}: 3: in the compact form")

    # 4. /clear, then a prompt.
    rc, out, err, model = run_qwen(R, env, project, Summarizing([]), ["--resume", session], ["/clear", "Next step."])
    R.eq(rc, 0, f"{name}: 4: /clear and a prompt exited 0")
    after = [r for r in model_requests(model) if "Next step." in last_user_text(r)]
    if R.check(after, f"{name}: 4: the prompt after /clear reached the model", len(model.requests)):
        R.eq(body_text(after[0]).count(LIST_HEAD), 1, f"{name}: 4: after /clear the prompt's request carries the list once")
        R.check(PLAIN_OPEN_LIST in body_text(after[0]), f"{name}: 4: in the compact form")

    # A resume with the list unchanged: Qwen Code's session file holds no earlier copy (the
    # hook's context is kept in memory), so the hook puts it in again, once.
    rc, out, err, model = run_qwen(R, env, project, [], ["--resume", session, "Next step."])
    R.eq(rc, 0, f"{name}: 4: resumed again, exited 0")
    reqs = model_requests(model)
    R.eq(body_text(reqs[0]).count(LIST_HEAD) if reqs else None, 1, f"{name}: 4: resumed with the list unchanged, the first request carries the list once")
    chats = sorted(Path(home, ".qwen", "projects").glob(f"*/chats/{session}.jsonl"))
    R.check(chats, f"{name}: 4: Qwen Code's session file is there", chats)
    R.eq(sum(f.read_text().count(LIST_HEAD) for f in chats), 0, f"{name}: 4: and holds no copy of the list")

    # 5. Every task done: nothing after /clear.
    finish = [{"action": "update", "id": 2, "status": "completed"}, {"action": "update", "id": 3, "status": "completed"}]
    rc, out, err, model = run_qwen(R, env, project, Sequence(finish), ["--resume", session, "Finish the list."])
    R.eq(rc, 0, f"{name}: 5: the turn that completes #2 and #3 exited 0")
    bodies = [body_text(r) for r in model_requests(model)]
    R.eq(sum(b.count(REMINDER) for b in bodies), 0, f"{name}: 5: its end is not blocked (no reminder)")
    saved = next(iter(Path(home, ".local", "state", "nvim", "rpiv_todo").glob("*.json")), None)
    tasks = json.loads(saved.read_text())["tasks"] if saved else []
    R.eq([t["status"] for t in tasks], ["completed"] * 3, f"{name}: 5: every task completed")
    rc, out, err, model = run_qwen(R, env, project, Summarizing([]), ["--resume", session], ["/clear", "Next step."])
    R.eq(rc, 0, f"{name}: 5: /clear and a prompt exited 0")
    after = [r for r in model_requests(model) if "Next step." in last_user_text(r)]
    if R.check(after, f"{name}: 5: the prompt after /clear reached the model", len(model.requests)):
        R.eq(body_text(after[0]).count(LIST_HEAD), 0, f"{name}: 5: with no open task the request carries no list")
    R.eq(sum(body_text(r).count("Reminder from the todo tool") for r in model_requests(model)), 0, f"{name}: 5: and no reminder")
    if re.search(r"rpiv_todo_mcp hook[^\n]*(error|panicked)", err):
        R.check(False, f"{name}: the hooks wrote no error", err[-500:])


def copilot_plugin(R, args, scratch, home, project, env, registry):
    """Copilot CLI installs the Claude marketplace's plugin and starts its server; it runs
    none of its hooks' answers into the conversation (docs/agents.md)."""
    name = "copilot-plugin"
    listed = subprocess.run(
        ["copilot", "plugin", "list"], env=env, cwd=project, capture_output=True, text=True, timeout=60
    )
    R.check("rpiv-todo@rpiv-todo" in listed.stdout and "(enabled)" in listed.stdout,
            f"{name}: copilot plugin list shows rpiv-todo@rpiv-todo enabled", listed.stdout[-500:])
    # The seven calls, through the server the plugin starts; the session ends with #2 in
    # progress (one more call), and no request carries a reminder or the list.
    more = R.CALLS + [{"action": "update", "id": 2, "status": "in_progress"}]
    proc, model, server = R.start_agent("copilot", more, env, project)
    rc, out, err = R.finish_agent(proc, server)
    R.check_npx(name, registry)
    main = R.main_requests(model)
    R.eq(main[0][2] if main else None, "rpiv_todo-todo", f"{name}: the plugin's server offers the tool as rpiv_todo-todo")
    R.eq(rc, 0, f"{name}: the agent exited 0")
    R.eq(len(main), len(more) + 1, f"{name}: one request per call and a last one")
    bodies = [body_text(r) for r in model_requests(model)]
    R.eq(sum(b.count("Reminder from the todo tool") for b in bodies), 0,
         f"{name}: a turn that ends with #2 in progress gets no reminder (Copilot CLI does not act on the Stop hook)")
