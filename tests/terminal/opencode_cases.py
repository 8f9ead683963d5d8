"""tests/terminal/opencode_cases.py: opencode's plugin (issue 37), run by tests/terminal/run.py.

    python3 tests/terminal/run.py opencode-plugin [--server binary|script|npx ...]

(run by plugin_cases.run_case, which installs as the other plugins are installed)

The blocks of docs/agents.md tagged readme-test=opencode (the server in opencode.json) and
readme-test=opencode-plugin (the plugin file copied into ~/.config/opencode/plugin/) are
applied as a user would, the GitHub clone replaced by this checkout. opencode has no hook
that adds to the conversation after a compaction; the plugin puts the open list into the
prompt the summary is written from (`experimental.session.compacting`). Against the
scripted model, whose answer to a chosen call reports a prompt past the provider's
20,000-token context, so that opencode compacts before its next request:

  1. two creates and #1 set in progress, the third answer too large: opencode compacts;
     the compaction request carries the open list exactly once, and no other request does;
  2. in the same project, #1 and #2 completed, the second answer too large: opencode
     compacts again, and no request carries the list (none is open).

opencode cannot hold a turn's end, so there is no end-of-turn reminder here.
"""

import json
from pathlib import Path

import model_server as ms
import plugin_cases as pc

PLUGIN = "plugins/opencode/rpiv-todo.js"
# The list after step 1, as the hook writes it (hand-written).
OPEN_LIST = (
    pc.SUMMARIZED_HEAD + "2 tasks (1 in progress, 1 pending).\n"
    "Open tasks:\n"
    "[in_progress] #1 Write the parser\n"
    "[pending] #2 Write the tests\n"
    "Keep using these ids with the todo tool; `list` shows every task."
)


class Compacting(pc.Sequence):
    """The scripted model making `calls` in order, whose answer with call number `at`
    reports a prompt of `big` tokens; after that call it makes no more (the summary that
    follows the compaction is not the conversation the calls were counted in)."""

    def __init__(self, calls, at, big=100_000):
        super().__init__(calls)
        self.at = at
        self.big = big
        self.made = 0

    def prompt_tokens(self, n, call):
        if not call:
            return 100
        with self.lock:
            self.made += 1
            return self.big if self.made == self.at else 100

    def decide(self, api, body):
        tool = ms.todo_tool(api, body)
        with self.lock:
            done = self.made >= self.at
        if tool is not None and done:
            return None, self.final_text
        return super().decide(api, body)


def opencode_plugin(R, args, scratch, home, project, env, registry):
    """The plugin file in place, then the two compactions (see the module's text)."""
    case = "opencode-plugin"
    installed = Path(home, ".config", "opencode", "plugin", Path(PLUGIN).name)
    same = installed.exists() and installed.read_text() == (R.ROOT / PLUGIN).read_text()
    R.check(same, f"{case}: the plugin is in ~/.config/opencode/plugin/", str(installed))
    steps(R, case, env, project)


def run(R, env, project, model):
    proc, model, server = R.start_agent("opencode", model, env, project)
    rc, out, err = R.finish_agent(proc, server)
    if rc != 0:
        print("    stderr: " + err[-2000:].replace("\n", "\n            "))
    return rc, model


# opencode 1.18's compaction agent, in the system prompt of the request that writes the
# summary (a title request also offers no tool).
SUMMARIZER = "You are a context summarization agent."


def compaction_requests(model):
    """The requests that write a summary."""
    out = []
    for req in pc.model_requests(model):
        api = ms.api_of(req["path"])
        if not ms.offered_tools(api, req["body"]) and SUMMARIZER in pc.body_text(req):
            out.append(req)
    return out


def steps(R, case, env, project):
    # 1. Two creates and #1 in progress; the third answer reports a prompt too large.
    calls = [
        {"action": "create", "subject": "Write the parser"},
        {"action": "create", "subject": "Write the tests"},
        {"action": "update", "id": 1, "status": "in_progress"},
    ]
    rc, model = run(R, env, project, Compacting(calls, at=3))
    R.eq(rc, 0, f"{case}: 1: opencode exited 0")
    R.eq(model.made, 3, f"{case}: 1: the model made its three calls")
    summaries = compaction_requests(model)
    if R.eq(len(summaries), 1, f"{case}: 1: opencode compacted once"):
        text = pc.body_text(summaries[0])
        R.eq(text.count(pc.LIST_HEAD), 1, f"{case}: 1: the compaction request carries the list once")
        R.check(OPEN_LIST in text, f"{case}: 1: ... as the open list", text[-1500:])
    bodies = [pc.body_text(r) for r in pc.model_requests(model)]
    R.eq(sum(b.count(pc.LIST_HEAD) for b in bodies), 1, f"{case}: 1: no other request carries it")

    # 2. Both completed; the second answer reports a prompt too large.
    calls = [
        {"action": "update", "id": 1, "status": "completed"},
        {"action": "update", "id": 2, "status": "completed"},
    ]
    rc, model = run(R, env, project, Compacting(calls, at=2))
    R.eq(rc, 0, f"{case}: 2: opencode exited 0")
    R.eq(len(compaction_requests(model)), 1, f"{case}: 2: opencode compacted once")
    bodies = [pc.body_text(r) for r in pc.model_requests(model)]
    R.eq(sum(b.count(pc.LIST_HEAD) for b in bodies), 0, f"{case}: 2: no request carries the list (none open)")
    state = Path(env["HOME"], ".local", "state", "nvim", "rpiv_todo")
    files = sorted(state.glob("*.json"))
    saved = json.loads(files[0].read_text()).get("tasks", []) if len(files) == 1 else None
    got = [(t["id"], t["status"]) for t in saved or []]
    R.eq(got, [(1, "completed"), (2, "completed")], f"{case}: the saved list")
