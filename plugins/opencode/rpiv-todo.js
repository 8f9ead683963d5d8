// rpiv_todo for opencode: the open list in the model's view at a session's start, at a
// resume, and through a compaction.
//
// - A session's first prompt in this opencode process (a new session, or one resumed with
//   --continue / --session) gets the open list as a synthetic part of the user's message
//   (`chat.message`, which runs before opencode saves the message): the server's own hook
//   answer (`rpiv-todo-mcp hook session-start`, source "resume"), the same compact list,
//   with the note of the user's changes, that the Claude Code and Codex plugins put in.
//   opencode saves the part with the message, so the resumed history keeps it: a resume
//   adds it again only when the list changed since it was last put in.
// - opencode has no hook that adds text to the conversation after it compacts. Its
//   `experimental.session.compacting` hook adds text to the prompt the summary is written
//   from, so the summary itself carries the list.
// - Each prompt counts as activity (`hook prompt`), so two compactions within one turn carry
//   it once; an empty or finished list puts nothing in.
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

// The hook's text for a session start, compaction or resume, or undefined.
function listText(sessionID, directory, source) {
  const answer = hook("session-start", {
    session_id: sessionID,
    cwd: directory,
    source,
    hook_event_name: "SessionStart",
  })
  const text = answer?.hookSpecificOutput?.additionalContext
  return typeof text === "string" && text !== "" ? text : undefined
}

export const RpivTodo = async ({ directory }) => {
  // Sessions that have had a prompt in this process.
  const started = new Set()
  return {
    "chat.message": async (input, output) => {
      const sessionID = input.sessionID
      hook("prompt", { session_id: sessionID, cwd: directory, hook_event_name: "UserPromptSubmit" })
      if (started.has(sessionID)) return
      started.add(sessionID)
      const text = listText(sessionID, directory, "resume")
      const last = output.parts[output.parts.length - 1]
      if (text === undefined || !last) return
      // After the user's parts: part ids sort by their text, and this one sorts right
      // after the last of them.
      output.parts.push({
        id: `${last.id}0`,
        sessionID,
        messageID: output.message.id,
        type: "text",
        synthetic: true,
        text,
      })
    },
    "experimental.session.compacting": async (input, output) => {
      const text = listText(input.sessionID, directory, "compact")
      if (text !== undefined) output.context.push(text)
    },
  }
}
