-- rpiv_todo.tool.render: the two short lines a host's tool-call log shows, one for a call
-- before it runs (`render_call`) and one for its result (`render_result`). A person reads
-- them, so the status words go through i18n.

local M = {}
local H = {}

-- Glyphs for a person's log of calls and results. Status glyphs match the overlay's.
M.action_glyphs = { create = "+", update = "✎", list = "≡", get = "›", delete = "✗", clear = "∅" }
M.status_glyphs = require("rpiv_todo.common").glyphs(true)
M.error_glyph = "✗"

---An id as the model wrote it: `3`, or `2.5` for a non-integer (never a Lua error).
H.num = require("rpiv_todo.common").num

---@param text any
---@return string
function H.text(text)
  if type(text) ~= "string" then
    return ""
  end
  return require("rpiv_todo.native").sanitize(text)
end

---`<glyph> <localized status word>`, or nil for a value outside the enum.
---@param status any
---@return string|nil
function H.status(status)
  local glyph = type(status) == "string" and M.status_glyphs[status] or nil
  if glyph == nil then
    return nil
  end
  return glyph .. " " .. require("rpiv_todo.i18n").t("status-" .. status)
end

---The task with `id` in a state, or nil.
---@param state any
---@param id any
---@return rpiv_todo.Task|nil
function H.find(state, id)
  if type(state) ~= "table" or type(state.tasks) ~= "table" or type(id) ~= "number" then
    return nil
  end
  for _, task in ipairs(state.tasks) do
    if task.id == id then
      return task
    end
  end
  return nil
end

---One line describing a call before it runs: action glyph, action, `#id`, subject, target status
---(for a batch, `×` and the number of tasks).
---The model wrote `args`, so any shape is tolerated.
---@param args any the call's arguments (a table)
---@param state? rpiv_todo.State the list before the call, to name the task an id refers to
---@return string
function M.render_call(args, state)
  if type(args) ~= "table" then
    return "? " .. require("rpiv_todo.tool.schema").NAME
  end
  local action = type(args.action) == "string" and args.action or "?"
  local parts = { M.action_glyphs[action] or "?", " ", H.text(action) }
  if type(args.id) == "number" then
    parts[#parts + 1] = " #" .. H.num(args.id)
  end
  if type(args.tasks) == "table" and #args.tasks > 0 then
    -- A batch: how many tasks, not one task's subject.
    parts[#parts + 1] = " ×" .. #args.tasks
    return table.concat(parts)
  end
  local subject = args.subject
  if type(subject) ~= "string" then
    local task = H.find(state, args.id)
    subject = task and task.subject
  end
  if type(subject) == "string" and subject ~= "" then
    parts[#parts + 1] = " " .. H.text(subject)
  end
  local status = H.status(args.status)
  if status then
    parts[#parts + 1] = (action == "list" and " " or " → ") .. status
  end
  return table.concat(parts)
end

---One line describing a result: the task's status glyph and word with its id and subject,
---the list's counts, or the error.
---@param result rpiv_todo.Result
---@return string
function M.render_result(result)
  local details = type(result) == "table" and result.details or nil
  if type(details) ~= "table" then
    return M.error_glyph .. " ?"
  end
  if details.error ~= nil then
    return M.error_glyph .. " Error: " .. H.text(details.error)
  end
  local params = type(details.params) == "table" and details.params or {}
  local action = details.action
  local id = params.id
  if action == "create" and type(details.nextId) == "number" then
    id = details.nextId - 1
  end
  local content = result.content
  local first = type(content) == "table" and content[1] or nil
  if type(params.tasks) == "table" and type(first) == "table" and type(first.text) == "string" then
    -- A batch: its reply, one line per change, on one line.
    return H.text((first.text:gsub("\n", "; ")))
  end
  local task = H.find(details, id)
  if task then
    return (H.status(task.status) or "?") .. " #" .. H.num(task.id) .. " " .. H.text(task.subject)
  end
  if action == "list" then
    local command = require("rpiv_todo.command")
    local _, counts = command.group(details)
    if counts.total == 0 then
      return H.t_empty()
    end
    return command.header(counts)
  end
  return H.text(type(first) == "table" and first.text or "")
end

---@return string
function H.t_empty()
  return require("rpiv_todo.i18n").t("todos-empty")
end

return M
