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
---@field live? userdata the native memory of what was seen (`core.overlay_live`), made on first use
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
    -- The last render's row lines (rpiv_todo.overlay.render reuses a row's unchanged line).
    rows = {},
  }, Overlay)
  return ov
end

-- The memory of what was seen lives natively (`core.overlay_live`), next to the
-- selection that reads it: a paint from a list handle never copies the list into Lua.
function Overlay:memory()
  local live = self.live
  if live == nil then
    live = require("rpiv_todo.native").overlay_live()
    self.live = live
  end
  return live
end

---Forget which completed tasks were shown (the session layer calls it on replay).
function Overlay:reset()
  if self.live ~= nil then
    self.live:reset()
  end
end

---A new agent turn began: completed tasks already shown hide from now on.
function Overlay:turn_started()
  self:memory():turn_started()
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

---The completed ids hidden after their turn, sorted (for tests and inspection).
---@return integer[]
function Overlay:hidden_ids()
  return self:memory():hidden()
end

---Render at `width` columns. Heading counts leave hidden completed tasks out (see the
---header of overlay/init.lua). A session or a `core.list` handle is read in place (the
---fast path: no snapshot is built); a state table works too. `max_lines` is the height
---budget of this render alone (a panel squeezed beside the cursor).
---@param source { tasks: table[], nextId: integer }|rpiv_todo.Session|userdata|nil a state, a session, or a core.list handle
---@param width? integer
---@param max_lines? integer this render's height budget (nil: `opts.max_widget_lines`)
---@return any[] lines
function Overlay:render(source, width, max_lines)
  local o = self.opts
  return render.paint(source, {
    width = width,
    max_widget_lines = max_lines or o.max_widget_lines,
    collapse_key = o.collapse_key,
    theme = o.theme,
    layout = o.layout,
    collapsed = self.collapsed,
    expanded = self.expanded,
    memo = self.rows,
  }, self:memory())
end

M.Overlay = Overlay

return M
