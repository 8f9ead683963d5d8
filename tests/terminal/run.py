"""tests/terminal/run.py: the README's blocks for Claude Code, Codex CLI, Gemini CLI, Qwen
Code, opencode and GitHub Copilot CLI (README.md and docs/agents.md), run as written against
the real agents (pinned in tests/terminal/pins.txt, installed from npm by scripts/test.sh
into a cache folder) and a scripted model on 127.0.0.1 (tests/terminal/model_server.py).

    python3 tests/terminal/run.py CASE [options]

CASE is claude, codex, gemini, qwen, opencode or copilot (one agent), pair (Claude Code and
Codex on one list at once), or claude-plugin / codex-plugin / gemini-plugin / qwen-plugin /
opencode-plugin / copilot-plugin (an agent's plugin: tests/terminal/plugin_cases.py and
opencode_cases.py say what each checks). Each agent runs non-interactively (claude -p, codex
exec, gemini -p, qwen PROMPT, opencode run, copilot -p) with HOME in a temporary folder, a
dummy key and its base-URL setting pointing at the scripted model; the machine's network is
not used (the whole run is in a network namespace of its own when `unshare` allows, with
only loopback up).

One agent's case:
  - its README blocks (fenced blocks tagged readme-test=<case>) are run (sh) or written
    (file=PATH), and name the pinned version;
  - the model makes one todo call per turn: create x3 (the third blockedBy the first two),
    update x2, list, and an update of an unknown id; the checks: the tool is offered with
    a valid JSON Schema that every call satisfies, and each of the seven results reaches
    the model, in the next request, as the reducer's exact reply text (inside the
    agent's own wrapping, e.g. Codex's "Wall time: ... Output:");
  - the list is saved where Neovim shows it: a headless Neovim in the project with
    persist = true reads it from its state folder and shows it in its panel;
  - the agent's own todo tool: offered when the README's setting is absent (a first,
    one-turn run: the name checked is real) and never offered with the README's setting.
The pair case: both agents' blocks in one HOME, one project; they run at once, each
creating tasks; the final list holds every task a reply acknowledged, under its id.

Options:
  --server npx|script|binary  what the agents start: the blocks as written (npx -y
                              rpiv-todo-mcp, the tarballs in --npm-dir served by a local
                              registry, tests/install/npm_registry.py, from a cold npm
                              cache), or the checkout's scripts/mcp.sh, or
                              target/release/rpiv_todo_mcp ($CARGO_TARGET_DIR/release
                              when set) put in place of the npx command (default: npx when --npm-dir is given, else script)
  --npm-dir DIR               the npm tarballs (node npm/pack.js, scripts/package.sh --npm)
  --clis DIR                  the CLI cache (default: $RPIV_CLI_CACHE, else
                              ${XDG_CACHE_HOME:-~/.cache}/rpiv_todo/terminal-clis)
  --nvim PATH                 the Neovim for the editor check (default: nvim on PATH)
  --readme FILE               where the blocks are (default: README.md)
  --keep                      keep the temporary folder (its path is printed)

Prints "ok - ..." / "not ok - ..." per check and "N passed, N failed"; exits 0 when
nothing failed, 77 when the case cannot run here (a CLI not installed: the reason is
printed).
"""

import argparse
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import jsonschema

sys.path.insert(0, str(Path(__file__).resolve().parent))
import model_server as ms  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
PASSED = 0
FAILED = 0
SKIP = 77
RUN_TIMEOUT = 240

PROMPT = "Plan the parser work with the todo tool."

# The scripted model's calls and the reducer's replies, hand-written.
CALLS = [
    {"action": "create", "subject": "Write the parser", "description": "Parse the config file"},
    {"action": "create", "subject": "Write the tests"},
    {"action": "create", "subject": "Ship it", "blockedBy": [1, 2]},
    {"action": "update", "id": 1, "status": "in_progress"},
    {"action": "update", "id": 1, "status": "completed"},
    {"action": "list"},
    {"action": "update", "id": 9, "status": "completed"},
]
REPLIES = [
    "Created #1: Write the parser (pending)",
    "Created #2: Write the tests (pending)",
    "Created #3: Ship it (pending)",
    "Updated #1 (pending → in_progress)",
    "Updated #1 (in_progress → completed)",
    "[completed] #1 Write the parser\n[pending] #2 Write the tests\n[pending] #3 Ship it ⛓ #1,#2",
    "Error: #9 not found",
]
REJECTED = {6}
SAVED = [
    {"id": 1, "subject": "Write the parser", "description": "Parse the config file", "status": "completed"},
    {"id": 2, "subject": "Write the tests", "status": "pending"},
    {"id": 3, "subject": "Ship it", "status": "pending", "blockedBy": [1, 2]},
]
PANEL = "\n".join(
    [
        " ● Todos (1/3) ",
        " ├─ ✓ #1 Write the parser ",
        " ├─ ○ #2 Write the tests ",
        " └─ ○ #3 Ship it ⛓ #1,#2 ",
    ]
)

# The npm launcher the README's blocks start, and its forms in each block language.
NPX_PACKAGE = "rpiv-todo-mcp"
NPX_FORMS = {
    "sh": re.compile(r"npx -y " + re.escape(NPX_PACKAGE) + r"\b"),
    "toml": re.compile(r'command = "npx"\s*\nargs = \["-y", "' + re.escape(NPX_PACKAGE) + r'"\]'),
    "json": re.compile(r'"command":\s*"npx",\s*"args":\s*\[\s*"-y",\s*"' + re.escape(NPX_PACKAGE) + r'"\s*\]'),
}
# opencode's form: the command and its arguments in one array.
NPX_ARRAY = re.compile(r'"command":\s*\[\s*"npx",\s*"-y",\s*"' + re.escape(NPX_PACKAGE) + r'"\s*\]')


def check(cond, what, got=None):
    global PASSED, FAILED
    if cond:
        PASSED += 1
        print(f"ok - {what}")
    else:
        FAILED += 1
        print(f"not ok - {what}" + (f"\n         got: {got!r}" if got is not None else ""))
    sys.stdout.flush()
    return bool(cond)


def eq(got, want, what):
    return check(got == want, what if got == want else f"{what}\n    expected: {want!r}", got if got != want else None)


# ---------------------------------------------------------------------------------------
# Pins, the cache, the README's blocks
# ---------------------------------------------------------------------------------------


def pins():
    """name -> {package, version, command} from tests/terminal/pins.txt."""
    out = {}
    for line in (HERE / "pins.txt").read_text().splitlines():
        line = line.split("#", 1)[0].split()
        if line:
            name, package, version, command = line
            out[name] = {"name": name, "package": package, "version": version, "command": command}
    return out


def cache_dir(arg):
    if arg:
        return Path(arg)
    if os.environ.get("RPIV_CLI_CACHE"):
        return Path(os.environ["RPIV_CLI_CACHE"])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "rpiv_todo" / "terminal-clis"


def cli_bin(cache, pin):
    """The folder with the pinned CLI's command, or None with the reason."""
    folder = cache / f"{pin['name']}@{pin['version']}"
    command = folder / "node_modules" / ".bin" / pin["command"]
    if command.exists():
        return command.parent, None
    failed = folder / "install.failed"
    if failed.exists():
        return None, failed.read_text().strip()
    return None, f"{pin['package']}@{pin['version']} is not installed in {folder} (scripts/test.sh --install-only)"


FENCE = re.compile(r"^```(\w+)([^\n]*)\n(.*?)^```[ \t]*$", re.M | re.S)


# Where the blocks for the terminal agents are, by default: the README's plugin installs,
# and the by-hand registrations in docs/agents.md.
DOCS = [ROOT / "README.md", ROOT / "docs" / "agents.md"]


def readme_blocks(path, name):
    """The fenced blocks tagged readme-test=<name>, in `path` (the default README: in it
    and in docs/agents.md): a list of (lang, attrs, text)."""
    blocks = []
    for doc in DOCS if path == DOCS[0] else [path]:
        for lang, info, text in FENCE.findall(doc.read_text()):
            attrs = dict(kv.split("=", 1) for kv in info.split() if "=" in kv)
            if attrs.get("readme-test") == name:
                blocks.append((lang, attrs, text))
    return blocks


def readme_path(arg):
    if arg:
        return Path(arg)
    return ROOT / "README.md"


def server_form(lang, command):
    """What replaces the npx command in a block of `lang`: `command` in that language."""
    if lang == "sh":
        return shlex.quote(command)
    if lang == "toml":
        return f"command = {json.dumps(command)}"
    return f'"command": {json.dumps(command)}'


def apply_blocks(blocks, home, project, env, server_command):
    """Run or write each block as a user would (files under ~ go to HOME); with
    `server_command`, the npx command is replaced by it first. The errors, or []."""
    errors = []
    replaced = 0
    for lang, attrs, text in blocks:
        form = NPX_FORMS.get(lang)
        if server_command and form:
            text, n = form.subn(lambda _: server_form(lang, server_command), text)
            replaced += n
        if server_command and lang == "json":
            text, n = NPX_ARRAY.subn(lambda _: f'"command": [{json.dumps(server_command)}]', text)
            replaced += n
        if "file" in attrs:
            target = attrs["file"]
            target = Path(home, target[2:]) if target.startswith("~/") else Path(project, target)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text)
        elif lang == "sh":
            proc = subprocess.run(
                ["bash", "-euo", "pipefail", "-c", text],
                cwd=project,
                env=env,
                capture_output=True,
                text=True,
                timeout=120,
            )
            if proc.returncode != 0:
                errors.append(f"{text.strip()!r} exited {proc.returncode}: {proc.stderr.strip()}")
        else:
            errors.append(f"a {lang} block without file=: {text[:60]!r}")
    if server_command and replaced == 0:
        errors.append(f"no `npx -y {NPX_PACKAGE}` in the blocks to replace with {server_command}")
    return errors


# ---------------------------------------------------------------------------------------
# The agents
# ---------------------------------------------------------------------------------------

BUILTIN = {
    "claude": ["TodoWrite", "TaskCreate", "TaskUpdate", "TaskGet", "TaskList"],
    "codex": ["update_plan"],
    "gemini": ["write_todos"],
    "qwen": ["todo_write"],
    "opencode": ["todowrite"],
    # Copilot CLI keeps its list in the `todos` table of its session database, through
    # its `sql` tool; no setting turns that off without the database (see KEEPS_OWN).
    "copilot": ["sql"],
}
# Agents whose own list no setting of theirs turns off: the test checks it is still offered,
# as docs/agents.md says.
KEEPS_OWN = {"copilot"}


def agent_env(base_env, name, url):
    """The environment and the extra arguments that point agent `name` at the scripted
    model (test-only: the README's blocks do not carry these)."""
    env = dict(base_env)
    args = []
    if name == "claude":
        env.update(
            ANTHROPIC_BASE_URL=url,
            ANTHROPIC_API_KEY="sk-ant-scripted",
            CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
            DISABLE_AUTOUPDATER="1",
            DISABLE_TELEMETRY="1",
            DISABLE_ERROR_REPORTING="1",
        )
    elif name == "codex":
        # gpt-5.5: a model Codex 0.171 has metadata for, offered plain function tools (MCP
        # tools behind its tool_search, which the scripted model uses). Its default model
        # reaches every tool through a JavaScript `exec` tool instead.
        env["SCRIPTED_API_KEY"] = "scripted"
        provider = f'{{name="scripted", base_url="{url}/v1", wire_api="responses", env_key="SCRIPTED_API_KEY"}}'
        for override in (
            'model="gpt-5.5"',
            'model_provider="scripted"',
            f"model_providers.scripted={provider}",
            "check_for_update_on_startup=false",
        ):
            args += ["-c", override]
    elif name == "gemini":
        # The auth type a user picks at the first interactive start (needed when a base
        # URL is given), and no usage statistics, beside what the README's block wrote.
        settings = Path(env["HOME"], ".gemini", "settings.json")
        settings.parent.mkdir(parents=True, exist_ok=True)
        current = json.loads(settings.read_text()) if settings.exists() else {}
        current.setdefault("security", {})["auth"] = {"selectedType": "gemini-api-key"}
        current.setdefault("privacy", {})["usageStatisticsEnabled"] = False
        current.setdefault("general", {}).update(enableAutoUpdate=False, enableAutoUpdateNotification=False)
        settings.write_text(json.dumps(current, indent=2))
        env.update(GEMINI_API_KEY="scripted", GOOGLE_GEMINI_BASE_URL=url)
        # A Gemini 2 model: the family Gemini CLI offers write_todos to.
        args += ["--skip-trust", "-m", "gemini-2.5-flash"]
    elif name == "qwen":
        # The OpenAI-compatible auth type (Chat Completions) with its three variables, and
        # no usage statistics, beside what the README's block wrote.
        settings = Path(env["HOME"], ".qwen", "settings.json")
        settings.parent.mkdir(parents=True, exist_ok=True)
        current = json.loads(settings.read_text()) if settings.exists() else {}
        current.setdefault("privacy", {})["usageStatisticsEnabled"] = False
        current.setdefault("general", {})["enableAutoUpdate"] = False
        settings.write_text(json.dumps(current, indent=2))
        env.update(OPENAI_API_KEY="scripted", OPENAI_BASE_URL=f"{url}/v1", OPENAI_MODEL="qwen3-coder-plus")
        args += ["--auth-type", "openai"]
    elif name == "opencode":
        # A provider of opencode's bundled OpenAI-compatible SDK (Chat Completions) with a
        # small context limit (so a reported large prompt starts its auto-compaction),
        # merged over the user's config; nothing fetched: the models list, updates, LSP
        # servers and sharing off.
        provider = {
            "npm": "@ai-sdk/openai-compatible",
            "name": "scripted",
            "options": {"baseURL": f"{url}/v1", "apiKey": "scripted"},
            "models": {"m": {"name": "m", "tool_call": True, "limit": {"context": 20000, "output": 2000}}},
        }
        env.update(
            OPENCODE_CONFIG_CONTENT=json.dumps({"provider": {"scripted": provider}, "share": "disabled"}),
            OPENCODE_DISABLE_MODELS_FETCH="1",
            OPENCODE_DISABLE_AUTOUPDATE="1",
            OPENCODE_DISABLE_LSP_DOWNLOAD="1",
            OPENCODE_DISABLE_SHARE="1",
        )
        args += ["-m", "scripted/m"]
        # opencode installs @opencode-ai/plugin into its config folder at every start until
        # it has it (online, once). Offline, npm's retries make that 70 s a run: none here.
        npmrc = Path(env["HOME"], ".npmrc")
        text = npmrc.read_text() if npmrc.exists() else ""
        if "fetch-retries=" not in text:
            npmrc.write_text(text + "fetch-retries=0\n")
    elif name == "copilot":
        # Copilot CLI's own provider (BYOK) on Chat Completions, offline: no GitHub
        # sign-in, telemetry or update; every tool allowed (needed with -p).
        env.update(
            COPILOT_PROVIDER_BASE_URL=f"{url}/v1",
            COPILOT_PROVIDER_API_KEY="scripted",
            COPILOT_MODEL="gpt-4.1",
            COPILOT_OFFLINE="true",
            COPILOT_AUTO_UPDATE="false",
        )
        args += ["--allow-all-tools", "--disable-client-telemetry"]
    return env, args


def agent_command(name, args, prompt, extra=()):
    if name == "claude":
        return ["claude", *args, *extra, "-p", prompt]
    if name == "codex":
        return ["codex", "exec", "--skip-git-repo-check", *args, *extra, prompt]
    if name == "qwen":
        # The prompt as the positional argument: one-shot (-p is deprecated in 0.24).
        return ["qwen", *args, *extra, prompt]
    if name == "opencode":
        return ["opencode", "run", *args, *extra, prompt]
    if name == "copilot":
        return ["copilot", *args, *extra, "-p", prompt]
    return ["gemini", *args, *extra, "-p", prompt]


def start_agent(name, model, env, project, extra=()):
    """Start agent `name` against scripted `model` (a list of calls for a new one):
    (process, model, server)."""
    if isinstance(model, list):
        model = ms.ScriptedModel(model)
    server = ms.ModelServer(model)
    env, args = agent_env(env, name, server.url)
    proc = subprocess.Popen(
        agent_command(name, args, PROMPT, extra),
        cwd=project,
        # PWD as a shell would set it: opencode takes its project from it.
        env=dict(env, PWD=str(project)),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    proc.args_cwd = Path(project).parent
    return proc, model, server


def finish_agent(proc, server):
    """Wait for the agent: (exit code, stdout, stderr); a hang is killed. The recorded
    requests go to requests-<port>.json in the agent's folder (kept with --keep)."""
    try:
        out, err = proc.communicate(timeout=RUN_TIMEOUT)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        err += f"\n(killed after {RUN_TIMEOUT}s)"
    server.close()
    record = Path(proc.args_cwd, f"requests-{server.port}.json")
    record.write_text(json.dumps(server.model.requests, indent=1, ensure_ascii=False))
    return proc.returncode, out, err


def main_requests(model):
    """The recorded requests that offer the todo tool: (api, body, tool name, schema)."""
    out = []
    for req in model.requests:
        api = ms.api_of(req["path"])
        body = req["body"]
        if api and isinstance(body, dict):
            tool = ms.todo_tool(api, body)
            if tool:
                out.append((api, body, tool[0], tool[1]))
    return out


def all_offered(model):
    names = set()
    for req in model.requests:
        api = ms.api_of(req["path"])
        if api and isinstance(req["body"], dict):
            names.update(n.rsplit(".", 1)[-1] for n, _ in ms.offered_tools(api, req["body"]))
    return names


# How each agent shows a tool's reply to the model, around the text itself.
# Codex: "Wall time: 0.0165 seconds\nOutput:" then the text (a newline between them when
# the result was structured content, as JSON).
CODEX_WRAP = re.compile(r"Wall time: [0-9.]+ seconds\nOutput:\n?(.*)", re.S)
GEMINI_ERROR = re.compile(r"MCP tool '[^']*' reported tool error for function call: .*? with response: (\[.*\])", re.S)


def shown_text(name, exchange, rejected):
    """The reply text inside what agent `name` passed to the model (None when the
    wrapping is not the agent's known one), and what that was."""
    name = name.removesuffix("-plugin")  # a plugin's case: the agent's own wrapping
    text = exchange.get("result")
    if not isinstance(text, str):
        return None, text
    if name == "codex":
        m = CODEX_WRAP.fullmatch(text)
        return (m.group(1) if m else text), text
    if name == "gemini":
        if rejected:
            m = GEMINI_ERROR.fullmatch(text)
            if not m:
                return None, text
            try:
                response = json.loads(m.group(1))[0]["functionResponse"]["response"]
            except (ValueError, KeyError, IndexError, TypeError):
                return None, text
            # The MCP result as Gemini got it: the reply text and isError, nothing else.
            if response.get("isError") is True and set(response) == {"content", "isError"}:
                parts = response["content"]
                if len(parts) == 1 and parts[0].get("type") == "text":
                    return parts[0]["text"], text
            return None, text
        m = re.fullmatch(r"<untrusted_context>\n(.*)\n</untrusted_context>", text, re.S)
        return (m.group(1) if m else text), text
    if name == "copilot" and rejected:
        # Copilot CLI names the server before a rejected call's text.
        m = re.fullmatch(r"MCP server '[^']*': (.*)", text, re.S)
        return (m.group(1) if m else None), text
    if name == "qwen" and rejected:
        # Qwen Code wraps a rejected call as Gemini CLI does, with the MCP result both
        # under `error` and beside it.
        m = GEMINI_ERROR.fullmatch(text)
        try:
            response = json.loads(m.group(1))[0]["functionResponse"]["response"]
        except (AttributeError, ValueError, KeyError, IndexError, TypeError):
            return None, text
        if not isinstance(response, dict) or set(response) != {"error", "content"}:
            return None, text
        if response["error"] != {"content": response["content"], "isError": True}:
            return None, text
        parts = response["content"]
        if len(parts) == 1 and parts[0].get("type") == "text":
            return parts[0]["text"], text
        return None, text
    return text, text


def check_schema(name, schema):
    if not check(isinstance(schema, dict), f"{name}: the todo tool comes with a JSON Schema", schema):
        return
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    try:
        cls.check_schema(schema)
        valid = True
        err = None
    except jsonschema.SchemaError as e:
        valid = False
        err = e.message
    check(valid, f"{name}: the offered schema is a valid {cls.__name__.replace('Validator', '')} schema", err)
    if valid:
        validator = cls(schema)
        bad = [(c, e.message) for c in CALLS for e in validator.iter_errors(c)]
        check(not bad, f"{name}: each of the model's seven calls satisfies the offered schema", bad)


def check_run(name, model, rc, out, err):
    ok = eq(rc, 0, f"{name}: the agent exited 0")
    if not ok:
        print("    stdout: " + out[-2000:].replace("\n", "\n            "))
        print("    stderr: " + err[-3000:].replace("\n", "\n            "))
    check(ms.FINAL_TEXT in out, f"{name}: the agent printed the model's closing text", out[-500:])
    main = main_requests(model)
    if not check(main, f"{name}: the todo tool is offered to the model", sorted(all_offered(model))):
        return
    api, _, tool, schema = main[0]
    print(f"    (offered as {tool!r})")
    check_schema(name, schema)
    eq(len(main), len(CALLS) + 1, f"{name}: one request per call and a last one (one call per turn)")
    exchanges = ms.todo_exchanges(api, main[-1][1], tool)
    eq([e.get("args") for e in exchanges], CALLS, f"{name}: the model's calls are in the conversation as made")
    for i, want in enumerate(REPLIES):
        if i + 1 >= len(main):
            check(False, f"{name}: result {i + 1} reaches the model (no request after call {i + 1})")
            continue
        done = ms.todo_exchanges(api, main[i + 1][1], tool)
        got = done[i] if i < len(done) else {}
        text, raw = shown_text(name, got, i in REJECTED)
        eq(text, want, f"{name}: result {i + 1} ({CALLS[i]['action']}) reaches the model as the reply text")
        if text != want and raw != text:
            print(f"    the model got: {raw!r}"[:600])
        if "is_error" in got:
            eq(got["is_error"], i in REJECTED, f"{name}: result {i + 1} is_error")


def check_saved(name, env, project, nvim, scratch):
    """The list where Neovim shows it: read from the file a Neovim with persist = true
    uses, and shown in its panel."""
    out = Path(scratch, f"nvim-{name}.json")
    proc = subprocess.run(
        [nvim, "--headless", "-u", "NONE", "-i", "NONE", "--noplugin", "-c", f"luafile {ROOT}/scripts/nvim-runner.lua"],
        cwd=project,
        env=dict(
            env,
            RPIV_ROOT=str(ROOT),
            RPIV_SPEC=str(HERE / "editor_check.lua"),
            RPIV_PROJECT=str(project),
            RPIV_OUT=str(out),
        ),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )
    opened = proc.returncode == 0 and out.exists()
    if not check(opened, f"{name}: a headless Neovim opened the project", proc.stdout + proc.stderr):
        return
    seen = json.loads(out.read_text())
    path = Path(seen["path"])
    state = Path(env["HOME"], ".local", "state", "nvim", "rpiv_todo")
    check(path.parent == state, f"{name}: Neovim reads the list from its state folder", str(path))
    saved = json.loads(path.read_text()) if path.exists() else None
    eq(saved and saved.get("tasks"), SAVED, f"{name}: the saved list (the file Neovim reads)")
    eq(seen["panel"], PANEL, f"{name}: Neovim's panel shows the agent's list")


def base_env(home, bindir, extra_path=()):
    env = {
        "HOME": str(home),
        "PATH": os.pathsep.join([str(bindir), *map(str, extra_path), os.environ.get("PATH", "/usr/bin:/bin")]),
        "LANG": "C.UTF-8",
        "TERM": "dumb",
        "TMPDIR": str(Path(home).parent / "tmp"),
        "NO_COLOR": "1",
    }
    Path(env["TMPDIR"]).mkdir(exist_ok=True)
    # scripts/mcp.sh in a checkout may run cargo, which finds its toolchain under the
    # real HOME; pass those folders on (a user who has Rust has them).
    for var, default in (("RUSTUP_HOME", ".rustup"), ("CARGO_HOME", ".cargo")):
        value = os.environ.get(var) or str(Path.home() / default)
        if Path(value).is_dir():
            env[var] = value
    return env


class Registry:
    """The npm tarballs in `npm_dir` served as a registry on 127.0.0.1 (the project's
    tests/install/npm_registry.py), so the README's `npx -y rpiv-todo-mcp` resolves,
    downloads and runs them from a cold cache as it would from the public registry."""

    def __init__(self, npm_dir, scratch):
        self.proc = None
        self.why = None
        script = ROOT / "tests" / "install" / "npm_registry.py"
        tarballs = sorted(Path(npm_dir).glob("*.tgz")) if npm_dir else []
        if not tarballs:
            self.why = f"no npm tarballs in {npm_dir} (node npm/pack.js or scripts/package.sh --npm DIR)"
            return
        if not script.exists():
            self.why = f"no {script.relative_to(ROOT)} to serve them"
            return
        port_file = Path(scratch, "npm-registry.port")
        self.log = Path(scratch, "npm-registry.log")
        self.proc = subprocess.Popen(
            [sys.executable, str(script), str(npm_dir), str(port_file), "--seconds", "900", "--log", str(self.log)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
        )
        deadline = time.time() + 30
        while time.time() < deadline and not (port_file.exists() and port_file.read_text().strip()):
            time.sleep(0.05)
        if not port_file.exists():
            self.why = "the local npm registry did not start"
            return
        self.url = f"http://127.0.0.1:{port_file.read_text().strip()}/"

    def npmrc(self, home, scratch):
        """Point npm in HOME at the registry, with a cache of its own (~/.npmrc: every
        agent passes HOME to the servers it starts, not always npm_config_*)."""
        cache = Path(scratch, f"npm-cache-{Path(home).parent.name}")
        Path(home, ".npmrc").write_text(
            f"registry={self.url}\ncache={cache}\naudit=false\nfund=false\nupdate-notifier=false\n"
        )

    def served(self):
        """The paths npm fetched."""
        return self.log.read_text().splitlines() if self.log.exists() else []

    def close(self):
        if self.proc:
            self.proc.terminate()
            self.proc.wait(timeout=10)


def server_setup(args, scratch):
    """What the agents start, for --server: (replacement for the npx command or None,
    the local registry or None), or None when that cannot be set up."""
    mode = args.server or ("npx" if args.npm_dir else "script")
    print(f"# the agents start: {mode}")
    if mode == "npx":
        registry = Registry(args.npm_dir, scratch)
        if not check(registry.why is None, "a local npm registry serves the tarballs", registry.why):
            registry.close()
            return None
        return None, registry
    if mode == "script":
        return str(ROOT / "scripts" / "mcp.sh"), None
    binary = Path(os.environ.get("CARGO_TARGET_DIR") or ROOT / "target") / "release" / "rpiv_todo_mcp"
    if not check(binary.exists(), f"{binary} is built"):
        return None
    return str(binary), None


def check_npx(name, registry):
    """With the registry: the agent's server came through npx from it."""
    if registry:
        got = [line for line in registry.served() if "rpiv-todo-mcp" in line]
        what = f"{name}: the server was started by npx -y {NPX_PACKAGE}, from the local registry"
        check(got, what, registry.served())


def check_version(name, pin, bindir, blocks, env):
    proc = subprocess.run(
        [str(bindir / pin["command"]), "--version"], env=env, capture_output=True, text=True, timeout=60
    )
    what = f"{name}: the installed CLI is {pin['package']} {pin['version']}"
    check(pin["version"] in proc.stdout, what, proc.stdout.strip())
    versions = {a["version"] for _, a, _ in blocks if "version" in a}
    eq(versions, {pin["version"]}, f"{name}: the README's block names the tested version")


def run_one(name, args, cache, scratch):
    pin = pins()[name]
    bindir, why = cli_bin(cache, pin)
    if bindir is None:
        print(f"skipped: {why}")
        return SKIP
    readme = readme_path(args.readme)
    blocks = readme_blocks(readme, name)
    if not check(blocks, f"{name}: {readme.name} has blocks tagged readme-test={name}"):
        return 1
    setup = server_setup(args, scratch)
    if setup is None:
        return 1
    server_command, registry = setup
    try:
        one_agent(name, pin, bindir, blocks, args, scratch, server_command, registry)
    finally:
        if registry:
            registry.close()
    return 0


def one_agent(name, pin, bindir, blocks, args, scratch, server_command, registry):
    # The agent's own todo tool, without the README's setting: offered, so the name the
    # later check looks for is one this version has.
    first = Path(scratch, "first")
    first.mkdir()
    home, project = Path(first, "home"), Path(first, "project")
    home.mkdir()
    project.mkdir()
    env = base_env(home, bindir)
    check_version(name, pin, bindir, blocks, env)
    extra = {"codex": ["-c", "tools.update_plan.enabled=true"], "gemini": ["--approval-mode", "yolo"]}.get(name, [])
    if name == "qwen":
        # Qwen Code 0.24's todo_write is off unless this setting turns it on.
        Path(home, ".qwen").mkdir()
        Path(home, ".qwen", "settings.json").write_text(json.dumps({"tools": {"todoWrite": {"enabled": True}}}))
    proc, model, server = start_agent(name, [], env, project, extra)
    rc, out, err = finish_agent(proc, server)
    offered = all_offered(model)
    builtin = [b for b in BUILTIN[name] if b in offered]
    how = {
        "codex": " (with tools.update_plan.enabled = true)",
        "gemini": " (in yolo mode)",
        "qwen": " (with tools.todoWrite.enabled = true)",
    }.get(name, "")
    what = f"{name}: without the README's setting{how} its own todo tool is offered"
    check(rc == 0 and builtin, what, (rc, err[-500:], sorted(offered)))

    # The README's blocks, then the scripted session.
    home, project = Path(scratch, "home"), Path(scratch, "project")
    home.mkdir()
    project.mkdir()
    env = base_env(home, bindir)
    if registry:
        registry.npmrc(home, scratch)
    errors = apply_blocks(blocks, home, project, env, server_command)
    check(not errors, f"{name}: the README's blocks ran", errors)
    proc, model, server = start_agent(name, CALLS, env, project)
    rc, out, err = finish_agent(proc, server)
    check_npx(name, registry)
    check_run(name, model, rc, out, err)
    check_saved(name, env, project, args.nvim, scratch)
    offered = all_offered(model)
    if name in KEEPS_OWN:
        what = f"{name}: its own list's tool is still offered (no setting turns it off)"
        eq([b for b in BUILTIN[name] if b in offered], BUILTIN[name], what)
    else:
        what = f"{name}: with the README's setting its own todo tool is not offered"
        eq([b for b in BUILTIN[name] if b in offered], [], what)
    if name == "gemini":
        # Gemini's headless mode leaves write_todos out anyway; yolo mode would offer it.
        proc, model, server = start_agent(name, [], env, project, ["--approval-mode", "yolo"])
        rc, out, err = finish_agent(proc, server)
        offered = all_offered(model)
        check(rc == 0 and "write_todos" not in offered, f"{name}: nor in yolo mode", (rc, sorted(offered)))


# ---------------------------------------------------------------------------------------
# Two agents on one list
# ---------------------------------------------------------------------------------------

CREATED = re.compile(r"Created #(\d+): (.*) \(pending\)")


def run_pair(args, cache, scratch):
    names = ["claude", "codex"]
    bins = {}
    for name in names:
        bindir, why = cli_bin(cache, pins()[name])
        if bindir is None:
            print(f"skipped: {why}")
            return SKIP
        bins[name] = bindir
    readme = readme_path(args.readme)
    setup = server_setup(args, scratch)
    if setup is None:
        return 1
    server_command, registry = setup
    try:
        two_agents(names, bins, readme, scratch, server_command, registry)
    finally:
        if registry:
            registry.close()
    return 0


def two_agents(names, bins, readme, scratch, server_command, registry):
    home, project = Path(scratch, "home"), Path(scratch, "project")
    home.mkdir()
    project.mkdir()
    env = base_env(home, bins["claude"], [bins["codex"]])
    if registry:
        registry.npmrc(home, scratch)
    for name in names:
        errors = apply_blocks(readme_blocks(readme, name), home, project, env, server_command)
        check(not errors, f"pair: {name}'s README blocks ran", errors)
    scripts = {
        name: [{"action": "create", "subject": f"{label} task {i}"} for i in range(1, 6)] + [{"action": "list"}]
        for name, label in (("claude", "Claude"), ("codex", "Codex"))
    }
    # The two models take turns, so the agents' calls interleave: Claude's create, Codex's
    # create, and so on, each server merging the other's saves.
    lockstep = ms.Lockstep()
    models = {name: ms.ScriptedModel(scripts[name], lockstep=lockstep, name=name) for name in names}
    started = {name: start_agent(name, models[name], env, project) for name in names}
    acknowledged = {}
    for name in names:
        proc, model, server = started[name]
        rc, out, err = finish_agent(proc, server)
        if not eq(rc, 0, f"pair: {name} exited 0"):
            print("    stderr: " + err[-2000:].replace("\n", "\n            "))
        main = main_requests(model)
        if not check(main, f"pair: {name} was offered the todo tool"):
            continue
        api, body, tool, _ = main[-1]
        texts = [shown_text(name, e, False)[0] for e in ms.todo_exchanges(api, body, tool)]
        eq(len(texts), 6, f"pair: {name}'s six calls were answered")
        for text in texts[:5]:
            # A reply may end with the note naming the other agent's changes since this
            # one's last call (by its MCP client's name), never this agent's own.
            reply, _, note = (text or "").partition("\n(Changed by others since your last call: ")
            m = CREATED.fullmatch(reply)
            if check(m, f"pair: {name}'s create was acknowledged", text):
                acknowledged[int(m.group(1))] = acknowledged.get(int(m.group(1)), []) + [m.group(2)]
            if note:
                writers = set(re.findall(r"added by ([\w.-]+)", note))
                own = "claude" if name == "claude" else "codex"
                check(writers and all(not w.startswith(own) for w in writers),
                      f"pair: {name}'s note names only the other agent", note)
    for name in names:
        check_npx(f"pair: {name}", registry)
    state = Path(home, ".local", "state", "nvim", "rpiv_todo")
    files = sorted(state.glob("*.json"))
    if not eq(len(files), 1, "pair: one list file in the state folder"):
        return
    saved = {t["id"]: t["subject"] for t in json.loads(files[0].read_text()).get("tasks", [])}
    dup = {i: s for i, s in acknowledged.items() if len(s) > 1}
    eq(dup, {}, "pair: no id was acknowledged to both agents")
    missing = {i: s[0] for i, s in acknowledged.items() if saved.get(i) != s[0]}
    eq(missing, {}, "pair: every acknowledged task is in the saved list under the id its reply gave")
    eq(len(saved), 10, "pair: the saved list holds the ten tasks")


# ---------------------------------------------------------------------------------------


def offline(argv):
    """Re-run inside a network namespace with only loopback, when `unshare` allows."""
    if os.environ.get("RPIV_TERMINAL_NETNS") or not shutil.which("unshare") or not shutil.which("ip"):
        return None
    probe = subprocess.run(["unshare", "-n", "true"], capture_output=True)
    if probe.returncode != 0:
        return None
    env = dict(os.environ, RPIV_TERMINAL_NETNS="1")
    inner = 'ip link set lo up && exec "$@"'
    return subprocess.call(["unshare", "-n", "sh", "-c", inner, "sh", sys.executable, *argv], env=env)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    cases = ["claude", "codex", "gemini", "qwen", "opencode", "copilot", "pair", "claude-plugin", "codex-plugin", "gemini-plugin",
             "qwen-plugin", "opencode-plugin", "copilot-plugin"]
    parser.add_argument("case", choices=cases)
    parser.add_argument("--server", choices=["npx", "script", "binary"])
    parser.add_argument("--npm-dir")
    parser.add_argument("--clis")
    parser.add_argument("--nvim", default=shutil.which("nvim") or "nvim")
    parser.add_argument("--readme")
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args()
    rc = offline([str(Path(__file__).resolve()), *sys.argv[1:]])
    if rc is not None:
        return rc
    print("# network: " + ("loopback only (own namespace)" if os.environ.get("RPIV_TERMINAL_NETNS") else "shared"))
    cache = cache_dir(args.clis)
    scratch = tempfile.mkdtemp(prefix=f"rpiv-terminal-{args.case}.")
    start = time.time()
    try:
        if args.case == "pair":
            rc = run_pair(args, cache, scratch)
        elif args.case.endswith("-plugin"):
            import plugin_cases

            rc = plugin_cases.run_case(args.case, sys.modules[__name__], args, cache, scratch)
        else:
            rc = run_one(args.case, args, cache, scratch)
    finally:
        if args.keep:
            print(f"# kept {scratch}")
        else:
            shutil.rmtree(scratch, ignore_errors=True)
    if rc == SKIP:
        return SKIP
    print(f"# {time.time() - start:.1f}s")
    print(f"{PASSED} passed, {FAILED} failed")
    return 0 if FAILED == 0 and rc == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
