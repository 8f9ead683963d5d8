"""tests/terminal/opencode_cases.py: opencode's plugin (issue 37), run by tests/terminal/run.py.

    python3 tests/terminal/run.py opencode-plugin [--server binary|script|npx ...]

(run by plugin_cases.run_case, which installs as the other plugins are installed)

The blocks of docs/agents.md tagged readme-test=opencode (the server in opencode.json) and
readme-test=opencode-plugin (the plugin file copied into ~/.config/opencode/plugin/) are
applied as a user would, the GitHub clone replaced by this checkout. The plugin puts the
open list into a session's first prompt in the process (a synthetic part of the user's
message, saved with it) and into the prompt a compaction's summary is written from
(`experimental.session.compacting`). Against the scripted model, whose answer to a chosen
call can report a prompt past the provider's 20,000-token context, so that opencode
compacts before its next request:

  1. a new session, the list empty: two creates and #1 set in progress, the third answer
     too large: opencode compacts; the compaction request carries the open list exactly
     once, and no other request does;
  2. a new session in the same project: its first request carries the open list once, in
     the user's message; the model completes #1;
  3. resumed (--continue): the list changed since it was put in, so the first request's
     user message carries it again, once (#2 alone open);
  4. resumed again, nothing changed: no new copy;
  5. a new session (the list in its first prompt): #2 completed, the answer too large:
     opencode compacts, and the compaction adds no copy (none is open); resumed, no copy
     either.

opencode cannot hold a turn's end, so there is no end-of-turn reminder here.
"""

import json
import shutil
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


# The list as step 2 and step 3 start (hand-written).
STARTED_LIST = (
    pc.PLAIN_HEAD + "2 tasks (1 in progress, 1 pending).\n"
    "Open tasks:\n"
    "[in_progress] #1 Write the parser\n"
    "[pending] #2 Write the tests\n"
    "Keep using these ids with the todo tool; `list` shows every task."
)
RESUMED_LIST = (
    pc.PLAIN_HEAD + "2 tasks (1 completed, 1 pending).\n"
    "Open tasks:\n"
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


def run(R, env, project, model, extra=()):
    # opencode 1.18.33 installs @opencode-ai/plugin into its config folder at each start
    # until it has it; offline that fails, and the failed install leaves its lock behind
    # (~/.local/state/opencode/locks), which the next start waits 60 s to find stale. The
    # process that held it has exited: take it away, as the stale check would.
    shutil.rmtree(Path(env["HOME"], ".local", "state", "opencode", "locks"), ignore_errors=True)
    proc, model, server = R.start_agent("opencode", model, env, project, extra)
    rc, out, err = R.finish_agent(proc, server)
    if rc != 0:
        print("    stderr: " + err[-2000:].replace("\n", "\n            "))
    return rc, model


def first_user_text(model):
    """The last user message of the run's first request (the prompt and what came with
    it), or None."""
    reqs = [r for r in pc.model_requests(model) if ms.offered_tools(ms.api_of(r["path"]), r["body"])]
    return pc.last_user_text(reqs[0]) if reqs else None


def most_copies(model):
    return max((pc.body_text(r).count(pc.LIST_HEAD) for r in pc.model_requests(model)), default=0)


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

    # 2. A new session: the open list in its first prompt; #1 completed.
    rc, model = run(R, env, project, pc.Sequence([{"action": "update", "id": 1, "status": "completed"}]))
    R.eq(rc, 0, f"{case}: 2: opencode exited 0")
    first = first_user_text(model) or ""
    R.eq(first.count(STARTED_LIST), 1, f"{case}: 2: a new session's first prompt carries the open list once")
    R.eq(most_copies(model), 1, f"{case}: 2: no request carries it twice")

    # 3. Resumed: the list changed since, so it is put in again.
    rc, model = run(R, env, project, pc.Sequence([]), ["--continue"])
    R.eq(rc, 0, f"{case}: 3: the resumed session exited 0")
    first = first_user_text(model) or ""
    R.eq(first.count(pc.LIST_HEAD), 1, f"{case}: 3: the resumed session's prompt carries the list once")
    R.check(RESUMED_LIST in first, f"{case}: 3: ... as it is now", first[-800:])
    bodies = [pc.body_text(r) for r in pc.model_requests(model)]
    R.check(bodies and STARTED_LIST in bodies[0], f"{case}: 3: the history kept step 2's copy")

    # 4. Resumed again, the list unchanged: no new copy.
    rc, model = run(R, env, project, pc.Sequence([]), ["--continue"])
    R.eq(rc, 0, f"{case}: 4: the resumed session exited 0")
    first = first_user_text(model)
    R.eq(first is not None and pc.LIST_HEAD not in first, True, f"{case}: 4: the prompt carries no new copy")

    # 5. A new session (the open list in its first prompt): #2 completed, the answer too
    # large. The compaction adds no copy: the summary's request holds only the one in the
    # history. Resumed, with nothing open, nothing either.
    rc, model = run(R, env, project, Compacting([{"action": "update", "id": 2, "status": "completed"}], at=1))
    R.eq(rc, 0, f"{case}: 5: opencode exited 0")
    summaries = compaction_requests(model)
    if R.eq(len(summaries), 1, f"{case}: 5: opencode compacted once"):
        R.eq(pc.body_text(summaries[0]).count(pc.LIST_HEAD), 1, f"{case}: 5: the compaction adds no copy (none open)")
    rc, model = run(R, env, project, pc.Sequence([]), ["--continue"])
    R.eq(rc, 0, f"{case}: 5: the resumed session exited 0")
    first = first_user_text(model)
    R.eq(first is not None and pc.LIST_HEAD not in first, True, f"{case}: 5: resumed, the prompt carries none")
    state = Path(env["HOME"], ".local", "state", "nvim", "rpiv_todo")
    files = sorted(state.glob("*.json"))
    saved = json.loads(files[0].read_text()).get("tasks", []) if len(files) == 1 else None
    got = [(t["id"], t["status"]) for t in saved or []]
    R.eq(got, [(1, "completed"), (2, "completed")], f"{case}: the saved list")
