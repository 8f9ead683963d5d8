-- rpiv_todo.session.compaction: what a compaction decides (rpiv_todo.session's
-- on_compaction runs it): whether the branch's list replaces the one a session holds,
-- and the list in compact form for the model.

local M = {}
local H = {}

---@return table
function H.core()
  return require("rpiv_todo.native")
end

-- Compaction: the host shortened what the model sees. The list the session holds is what
-- the tool acknowledged; a branch replaces it only when its last todo snapshot is the same
-- list or one that tool calls made after it (see M.newer). What comes back is the list in
-- compact form, for the model's context.

---Is the branch's snapshot a reason to replace the list the session holds? The core says
---(`core.newer`): when it is the same list, or provably newer by the tool's state machine.
---@param held userdata|rpiv_todo.State the session's list (its handle, read in place)
---@param branch rpiv_todo.State
---@return boolean
function M.newer(held, branch)
  return H.core().newer(held, branch)
end

-- How the compact form names each status in its counts.
H.COUNTED = {
  { "completed", "completed" },
  { "in_progress", "in progress" },
  { "pending", "pending" },
  { "deleted", "deleted" },
}

---The list in compact form, for the model after a compaction: the counts, then each open
---task (in_progress first, then pending) as the tool's `list` shows it: status, id,
---subject, activeForm while in progress, and blockers (`⛓ #1,#2`). English, like
---everything the model reads. With `opts.summarized = false` (a resumed or cleared
---conversation, a session's start) the first line does not say it was summarized.
---@param state rpiv_todo.State
---@param opts? { summarized?: boolean }
---@return string
function M.compact_text(state, opts)
  local counts = { pending = 0, in_progress = 0, completed = 0, deleted = 0 }
  for _, t in ipairs(state.tasks) do
    counts[t.status] = (counts[t.status] or 0) + 1
  end
  local shown = #state.tasks - counts.deleted
  local parts = {}
  for _, c in ipairs(H.COUNTED) do
    if counts[c[1]] > 0 then
      parts[#parts + 1] = counts[c[1]] .. " " .. c[2]
    end
  end
  local head = (opts and opts.summarized == false) and "The todo list as it stands: "
    or "The todo list as it stands (the conversation before this point was summarized): "
  local lines = {
    head .. shown .. (shown == 1 and " task" or " tasks") .. " (" .. table.concat(parts, ", ") .. ").",
  }
  local list = H.core().list(state)
  if counts.in_progress + counts.pending == 0 then
    lines[#lines + 1] = "No open tasks."
  else
    lines[#lines + 1] = "Open tasks:"
    for _, status in ipairs({ "in_progress", "pending" }) do
      if counts[status] > 0 then
        lines[#lines + 1] = list:apply({ action = "list", status = status }).content[1].text
      end
    end
  end
  lines[#lines + 1] = "Keep using these ids with the todo tool; `list` shows every task."
  return table.concat(lines, "\n")
end

return M
