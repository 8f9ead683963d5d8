-- rpiv_todo.overlay.live: the stateful overlay a live UI keeps (`overlay.new`).
--
-- It remembers what a person has already seen: completed tasks stay visible for the turn
-- they were first shown in and hide from renders after the next `turn_started()`; a
-- reload/replay (`reset`) or a shrinking `nextId` (clear) forgets that. It also holds the
-- collapsed and expanded modes.

local render = require("rpiv_todo.overlay.render")

local M = {}

---@class rpiv_todo.Overlay
---@field opts rpiv_todo.OverlayOptions options used by every render (width comes per call)
---@field collapsed boolean
---@field expanded boolean
local Overlay = {}
Overlay.__index = Overlay

---A stateful overlay for a live UI. Completed tasks stay visible for the turn they
---were first shown in and hide from renders after the next `turn_started()`.
---@param opts? rpiv_todo.OverlayOptions
---@return rpiv_todo.Overlay
function M.new(opts)
  local ov = setmetatable({
    opts = opts or {},
    collapsed = false,
    expanded = false,
  }, Overlay)
  ov:reset()
  return ov
end

---Forget which completed tasks were shown (the session layer calls it on replay).
function Overlay:reset()
  self.shown = {} -- completed ids displayed during the current turn
  self.hidden = {} -- completed ids displayed in an earlier turn
  self.last_next_id = nil
end

---A new agent turn began: completed tasks already shown hide from now on.
function Overlay:turn_started()
  for id in pairs(self.shown) do
    self.hidden[id] = true
  end
  self.shown = {}
end

---Flip between the full panel and the heading plus hint.
---@return boolean collapsed the new state
function Overlay:toggle_collapse()
  self.collapsed = not self.collapsed
  return self.collapsed
end

---The host's "show all" mode: every task, no summary row.
---@param on boolean
function Overlay:set_expanded(on)
  self.expanded = on and true or false
end

---Render `state` at `width` columns. Heading counts leave hidden completed tasks out
---(see the header of this file).
---@param state { tasks: table[], nextId: integer }|rpiv_todo.Session|userdata|nil a state, a session, or a core.list handle
---@param width? integer
---@return any[] lines
function Overlay:render(state, width)
  -- A session or a core.list handle: read its snapshot (the turn bookkeeping needs ids).
  if type(state) == "userdata" then
    -- Any other userdata (JSON null, say) has no snapshot: nothing to show.
    local ok, snapshot = pcall(function()
      return state:state()
    end)
    state = ok and snapshot or nil
  elseif type(state) == "table" and type(state.state) == "function" then
    state = state:state()
  end
  local tasks = (type(state) == "table" and type(state.tasks) == "table") and state.tasks or {}
  local next_id = type(state) == "table" and state.nextId or nil
  if type(next_id) == "number" then
    -- A shrinking nextId means the list was cleared: ids may be handed out again.
    if self.last_next_id ~= nil and next_id < self.last_next_id then
      self:reset()
    end
    self.last_next_id = next_id
  end

  -- Forget ids that are no longer completed tasks, then drop the hidden ones.
  local completed = {}
  for i = 1, #tasks do
    local t = tasks[i]
    if t.status == "completed" then
      completed[t.id] = true
    end
  end
  local any_hidden = false
  for id in pairs(self.hidden) do
    if completed[id] then
      any_hidden = true
    else
      self.hidden[id] = nil
    end
  end
  for id in pairs(self.shown) do
    if not completed[id] then
      self.shown[id] = nil
    end
  end
  local shown_tasks = tasks
  if any_hidden then
    shown_tasks = {}
    for i = 1, #tasks do
      local t = tasks[i]
      if not (t.status == "completed" and self.hidden[t.id]) then
        shown_tasks[#shown_tasks + 1] = t
      end
    end
  end

  local o = self.opts
  local lines = render.render({ tasks = shown_tasks, nextId = next_id }, {
    width = width,
    max_widget_lines = o.max_widget_lines,
    collapse_key = o.collapse_key,
    theme = o.theme,
    layout = o.layout,
    collapsed = self.collapsed,
    expanded = self.expanded,
  })

  -- Only a full render shows rows; a collapsed panel shows no task to remember.
  if not self.collapsed and #lines > 0 then
    for i = 1, #shown_tasks do
      local t = shown_tasks[i]
      if t.status == "completed" then
        self.shown[t.id] = true
      end
    end
  end
  return lines
end

M.Overlay = Overlay

return M
