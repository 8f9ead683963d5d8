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

-- The statuses the tool's state machine reaches from each status (pending ⇄ in_progress,
-- either → completed, any → deleted; completed only → deleted; deleted is final). Sending
-- the status a task has is allowed.
H.REACHES = {
  pending = { pending = true, in_progress = true, completed = true, deleted = true },
  in_progress = { pending = true, in_progress = true, completed = true, deleted = true },
  completed = { completed = true, deleted = true },
  deleted = { deleted = true },
}

---Could tool calls turn list `a` into list `b` without a `clear`? Every task of `a` is in `b`
---(a task leaves a list only through clear: a deleted one stays, as a tombstone) with a
---status the state machine reaches from its own, and `b`'s next id is not smaller.
---@param a rpiv_todo.State
---@param b rpiv_todo.State
---@return boolean
function H.reaches(a, b)
  if b.nextId < a.nextId then
    return false
  end
  local status = {}
  for _, t in ipairs(b.tasks) do
    status[t.id] = t.status
  end
  for _, t in ipairs(a.tasks) do
    local to = status[t.id]
    local allowed = H.REACHES[t.status]
    if to == nil or allowed == nil or not allowed[to] then
      return false
    end
  end
  return true
end

---Is the branch's snapshot a reason to replace the list the session holds? Yes when it is
---the same list (the replay changes nothing), or when it is provably newer: calls can turn
---the held list into it, and none can turn it back (more tasks or a larger next id, or a
---task further along: completed or deleted where the held list has it open). A branch
---with no todo result (an empty snapshot), an older snapshot, or one that could be either
---(only pending ⇄ in_progress and texts differ) leaves the held list alone: the session has
---run every call the branch holds, so its list is the newest one it knows. An empty held
---list (a session just created) takes any snapshot.
---@param held rpiv_todo.State
---@param branch rpiv_todo.State
---@param held_json string the held list as `list:state_json()` writes it
---@return boolean
function M.newer(held, branch, held_json)
  if H.core().list(branch):state_json() == held_json then
    return true
  end
  return H.reaches(held, branch) and not H.reaches(branch, held)
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
---everything the model reads.
---@param state rpiv_todo.State
---@return string
function M.compact_text(state)
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
  local lines = {
    "The todo list as it stands (the conversation before this point was summarized): "
      .. shown
      .. (shown == 1 and " task" or " tasks")
      .. " ("
      .. table.concat(parts, ", ")
      .. ").",
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
