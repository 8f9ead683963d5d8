-- rpiv_todo.command: the `/todos` slash command, the list grouped by status for a person.
--
-- Header `D/T completed · N in progress · N pending` (each part only when non-zero), then
-- `── Pending ──`, `── In Progress ──`, `── Completed ──` sections (only non-empty) with
-- rows `  <glyph> #<id> <subject>[ (<activeForm>)][    ⛓ #1,#2]`. Tombstones are never
-- listed. The words come from i18n (UI chrome); task text is sanitized model text.

local common = require("rpiv_todo.common")

local M = {}
local H = {}

-- Row glyph per status; sections in the order they are printed.
M.glyphs = common.glyphs()
M.sections = {
  { status = "pending", id = "todos-section-pending" },
  { status = "in_progress", id = "todos-section-in-progress" },
  { status = "completed", id = "todos-section-completed" },
}

---@param id string
---@param args? table
---@return string
function H.t(id, args)
  return require("rpiv_todo.i18n").t(id, args)
end

H.num = common.num

---@param text string
---@return string
function H.sanitize(text)
  return require("rpiv_todo.native").sanitize_display(text)
end

---A task's text field, sanitized; with `width`, only what a row that wide can show is
---looked at (`common.clip`), so a 100 KB subject costs what a line shows.
---@param text string
---@param width integer|nil
---@return string
function H.field(text, width)
  return H.sanitize(common.clip(text, width))
end

---A task's row: `  ○ #4 Subject (activeForm)    ⛓ #1,#2`. With `width`, the row is cut
---to that many columns (ending in `…`).
---@param task rpiv_todo.Task
---@param width? integer
---@return string
function M.row(task, width)
  local parts = { "  ", M.glyphs[task.status] or "?", " #", H.num(task.id), " ", H.field(task.subject or "", width) }
  -- activeForm shows only while the task runs; an empty one is left out (the reference
  -- tests the raw value, so a form that sanitizes to nothing still prints "()").
  local active = task.activeForm
  if task.status == "in_progress" and type(active) == "string" and active ~= "" then
    parts[#parts + 1] = " (" .. H.field(active, width) .. ")"
  end
  local blocked = task.blockedBy
  if type(blocked) == "table" and #blocked > 0 then
    local ids = {}
    for i = 1, #blocked do
      ids[i] = "#" .. H.num(blocked[i])
    end
    parts[#parts + 1] = "    ⛓ " .. table.concat(ids, ",")
  end
  local row = table.concat(parts)
  if width ~= nil then
    row = require("rpiv_todo.native").truncate(row, width, "…")
  end
  return row
end

---The header counts, each part only when non-zero, joined by ` · `.
---@param counts { pending: integer, in_progress: integer, completed: integer, total: integer }
---@return string
function M.header(counts)
  local parts = {}
  if counts.completed > 0 then
    parts[#parts + 1] = H.t("todos-completed", { done = counts.completed, total = counts.total })
  end
  if counts.in_progress > 0 then
    parts[#parts + 1] = H.t("todos-in-progress", { count = counts.in_progress })
  end
  if counts.pending > 0 then
    parts[#parts + 1] = H.t("todos-pending", { count = counts.pending })
  end
  return table.concat(parts, " · ")
end

---Live tasks grouped by status, and their counts.
---@param state rpiv_todo.State
---@return table<string, rpiv_todo.Task[]> groups, table counts
function M.group(state)
  local groups = { pending = {}, in_progress = {}, completed = {} }
  local counts = { pending = 0, in_progress = 0, completed = 0, total = 0 }
  local tasks = state.tasks or {}
  for i = 1, #tasks do
    local task = tasks[i]
    local group = groups[task.status]
    if group then
      group[#group + 1] = task
      counts[task.status] = counts[task.status] + 1
      counts.total = counts.total + 1
    end
  end
  return groups, counts
end

---`/todos`: the text to show and its level ("info" or "error").
---@param source rpiv_todo.State|rpiv_todo.Session|nil state, session, or nil for the foreground session
---@param opts? { interactive?: boolean, width?: integer } interactive defaults to true;
---  width: cut each task's row to that many columns (a screen's width), so the text costs
---  what fits on the screen however long the tasks' texts are
---@return string text, "info"|"error" level
function M.todos(source, opts)
  if opts ~= nil and type(opts) ~= "table" then
    error("(rpiv_todo) todos: opts must be a table { interactive = boolean, width = integer }", 0)
  end
  local width = opts and opts.width
  if width ~= nil and (type(width) ~= "number" or width < 1 or width ~= math.floor(width)) then
    error("(rpiv_todo) todos: opts.width must be a positive integer or nil", 0)
  end
  if opts ~= nil and opts.interactive == false then
    return H.t("todos-noninteractive"), "error"
  end
  local groups, counts = M.group(require("rpiv_todo.session").state_of(source, "todos"))
  if counts.total == 0 then
    return H.t("todos-empty"), "info"
  end
  local lines = { M.header(counts) }
  for _, section in ipairs(M.sections) do
    local tasks = groups[section.status]
    if #tasks > 0 then
      lines[#lines + 1] = "── " .. H.t(section.id) .. " ──"
      for i = 1, #tasks do
        lines[#lines + 1] = M.row(tasks[i], width)
      end
    end
  end
  return table.concat(lines, "\n"), "info"
end

return M
