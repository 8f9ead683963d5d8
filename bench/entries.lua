-- bench/entries.lua -- the conversations the replay rows walk (bench.lua, instructions.lua):
-- 2,000 todo tool results each holding the same snapshot, and one todo result under 1,999
-- other entries (user and assistant turns, another tool's results).
local M = {}

---A todo tool result holding `snapshot`.
---@param i integer
---@param snapshot { tasks: table[], nextId: integer }
---@return table
function M.todo_entry(i, snapshot)
  return {
    type = "message",
    id = "t" .. i,
    message = {
      role = "toolResult",
      toolName = "todo",
      toolCallId = "call_" .. i,
      content = { { type = "text", text = "ok" } },
      details = {
        action = "list",
        params = { action = "list" },
        tasks = snapshot.tasks,
        nextId = snapshot.nextId,
      },
    },
  }
end

---One of the entries between todo results: a user turn, an assistant turn, another tool.
---@param i integer
---@return table
function M.other_entry(i)
  local k = i % 3
  if k == 0 then
    return { type = "message", id = "u" .. i, message = { role = "user", content = "turn " .. i } }
  elseif k == 1 then
    return {
      type = "message",
      id = "a" .. i,
      message = { role = "assistant", content = { { type = "text", text = "working on " .. i } } },
    }
  end
  return {
    type = "message",
    id = "b" .. i,
    message = {
      role = "toolResult",
      toolName = "bash",
      toolCallId = "call_b" .. i,
      content = { { type = "text", text = "exit 0" } },
      details = { exitCode = 0, stdout = "done " .. i },
    },
  }
end

---The replay row's entries (2,000 todo results) and the walk row's (the oldest entry is
---the only todo result).
---@param snapshot { tasks: table[], nextId: integer }
---@return table[] replay, table[] walk
function M.conversations(snapshot)
  local replay, walk = {}, { M.todo_entry(1, snapshot) }
  for i = 1, 2000 do
    replay[i] = M.todo_entry(i, snapshot)
  end
  for i = 1, 1999 do
    walk[#walk + 1] = M.other_entry(i)
  end
  return replay, walk
end

return M
