// rpiv_todo for opencode: the open list carried through a compaction.
//
// opencode has no hook that adds text to the conversation after it compacts. Its
// `experimental.session.compacting` hook adds text to the prompt the summary is written
// from, so the summary itself carries the list. The text is the server's own hook answer
// (`rpiv-todo-mcp hook session-start`, source "compact"): the same compact list, with the
// note of the user's changes, that the Claude Code and Codex plugins put back. Each prompt
// counts as activity (`hook prompt`), so two compactions within one turn carry it once, and
// an empty or finished list carries nothing.
//
// Install: copy this file into ~/.config/opencode/plugin/ (or a project's .opencode/plugin/),
// and register the server in opencode.json (docs/agents.md). The hooks run
// $RPIV_TODO_MCP_BINARY when it is set, else `npx -y rpiv-todo-mcp`.
import { spawnSync } from "node:child_process"

const TIMEOUT_MS = 30000

// `rpiv-todo-mcp hook <event>` with `input` as JSON on stdin: its JSON answer, or undefined.
function hook(event, input) {
  const binary = process.env.RPIV_TODO_MCP_BINARY
  const [command, ...args] = binary ? [binary] : ["npx", "-y", "rpiv-todo-mcp"]
  const run = spawnSync(command, [...args, "hook", event, "--agent", "opencode"], {
    input: JSON.stringify(input),
    encoding: "utf8",
    timeout: TIMEOUT_MS,
  })
  if (run.status !== 0 || !run.stdout || !run.stdout.trim()) return undefined
  try {
    return JSON.parse(run.stdout)
  } catch {
    return undefined
  }
}

export const RpivTodo = async ({ directory }) => ({
  "chat.message": async (input) => {
    hook("prompt", { session_id: input.sessionID, cwd: directory, hook_event_name: "UserPromptSubmit" })
  },
  "experimental.session.compacting": async (input, output) => {
    const answer = hook("session-start", {
      session_id: input.sessionID,
      cwd: directory,
      source: "compact",
      hook_event_name: "SessionStart",
    })
    const text = answer?.hookSpecificOutput?.additionalContext
    if (typeof text === "string" && text !== "") output.context.push(text)
  },
})
