-- rpiv_todo.overlay.render: one panel's lines from a selection, through the layout and
-- the theme. The module-wide options (`config`, changed by setup through `configure`) live
-- here so that the stateless render and the live object read the same table.

local common = require("rpiv_todo.common")
local keys = require("rpiv_todo.overlay.keys")
local layout_mod = require("rpiv_todo.overlay.layout")
local text = require("rpiv_todo.overlay.text")
local themes = require("rpiv_todo.overlay.themes")

local M = {}
local H = {}

-- Module-wide defaults; `setup()` changes them through `configure` after validating.
M.config = {
  -- Lines the panel may use, heading included (the trailing blank line is extra).
  max_widget_lines = common.defaults.max_widget_lines,
  -- The key the collapsed hint advertises; "off" shows a static label instead.
  collapse_key = common.defaults.collapse_key,
  -- nil: plain text. A theme table or the name of a shipped theme.
  theme = nil,
  -- nil: the default layout. A partial layout merged over it.
  layout = nil,
}

---Set the module-wide defaults (`setup()` validates first; this does not).
---@param opts { max_widget_lines?: integer, collapse_key?: string, theme?: any, layout?: any }
function M.configure(opts)
  for _, k in ipairs({ "max_widget_lines", "collapse_key", "theme", "layout" }) do
    if opts[k] ~= nil then
      M.config[k] = opts[k]
    end
  end
  H.cached_layout = nil
end

function H.core()
  local core = H.core_module
  if core == nil then
    core = require("rpiv_todo.native")
    H.core_module = core
  end
  return core
end

-- Lenient: a non-number, NaN or a value below 3 means the default.
function H.max_widget_lines(n)
  if type(n) ~= "number" or n ~= n or n < 3 then
    return common.defaults.max_widget_lines
  end
  return n
end

function H.row_view(task)
  local blocked = task.blockedBy
  if type(blocked) ~= "table" or #blocked == 0 then
    blocked = nil
  end
  local form = task.activeForm
  if type(form) ~= "string" or form == "" then
    form = nil
  else
    form = text.sanitize(form)
  end
  return {
    id = task.id,
    status = task.status,
    subject = text.sanitize(task.subject or ""),
    activeForm = form,
    blockedBy = blocked,
    task = task,
  }
end

-- The layout for these options: module config, then the per-render override.
function H.layout_for(override)
  if override == nil then
    local cached = H.cached_layout
    if cached == nil or H.cached_for ~= M.config.layout then
      cached = layout_mod.resolve(M.config.layout)
      H.cached_layout, H.cached_for = cached, M.config.layout
    end
    return cached
  end
  return layout_mod.resolve(M.config.layout, override)
end

-- One pass over the shown tasks: counts and whether any of them waits on another.
function H.scan(tasks)
  local counts = { total = 0, pending = 0, in_progress = 0, completed = 0 }
  local show_ids = false
  for i = 1, #tasks do
    local t = tasks[i]
    local s = t.status
    if s ~= "deleted" then
      if counts[s] ~= nil and s ~= "total" then
        counts[s] = counts[s] + 1
      end
      counts.total = counts.total + 1
      if not show_ids then
        local b = t.blockedBy
        show_ids = type(b) == "table" and #b > 0
      end
    end
  end
  return counts, show_ids
end

---Render the panel for `state` (stateless). Lines are strings, or lists of
---`{ text, group }` with the segments theme. Nothing to show: `{}` (hide the panel).
---@param state { tasks: table[], nextId: integer }|nil
---@param opts? rpiv_todo.OverlayOptions
---@return any[] lines
function M.render(state, opts)
  opts = opts or {}
  local cfg = M.config
  local tasks, counts, show_ids, sel
  if type(state) == "userdata" then
    -- A `core.list` handle: selection, counts and showIds come back in one native call
    -- that reads no Lua tables (the fast path for live UIs; see README "Performance").
    local budget = opts.expanded and 2147483647
      or math.floor(
          H.max_widget_lines(opts.max_widget_lines == nil and cfg.max_widget_lines or opts.max_widget_lines)
        )
        - 1
    sel = H.core().overlay_layout(state, budget, opts.hidden)
    local c = sel.counts
    counts = { total = c.total, pending = c.pending, in_progress = c.inProgress, completed = c.completed }
    show_ids = sel.showIds
    tasks = sel.visible
  else
    tasks = (type(state) == "table" and type(state.tasks) == "table") and state.tasks or {}
    counts, show_ids = H.scan(tasks)
  end
  if counts.total == 0 then
    return {}
  end

  local theme = themes.resolve(opts.theme or cfg.theme)
  local layout = H.layout_for(opts.layout)
  local key = keys.resolve(opts.collapse_key == nil and cfg.collapse_key or opts.collapse_key)
  local width = opts.width
  if type(width) ~= "number" or width ~= width then
    width = nil
  else
    width = math.max(0, math.floor(width))
  end
  local ctx = {
    theme = theme,
    layout = layout,
    glyphs = layout.glyphs,
    counts = counts,
    show_ids = show_ids,
    collapse_key = key ~= "off" and key or nil,
    width = width,
    t = text.t,
    sanitize = text.sanitize,
  }
  local finish = theme.finish or themes.finish_string
  local mid = theme.fg("dim", "├─") .. " "
  local last = theme.fg("dim", "└─") .. " "

  local lines = { finish(layout.heading(ctx), width) }
  if opts.collapsed then
    lines[2] = finish(last .. layout.collapsed_hint(ctx), width)
  else
    local budget
    if opts.expanded then
      budget = counts.total
    else
      local mwl = opts.max_widget_lines
      if mwl == nil then
        mwl = cfg.max_widget_lines
      end
      -- Budgets past the task count select the same rows; clamp so the native
      -- side always gets a small integer.
      budget = math.min(math.floor(H.max_widget_lines(mwl)) - 1, counts.total)
    end
    local visible, hidden_completed, truncated
    if sel then
      visible = sel.visible
      hidden_completed, truncated = math.floor(sel.hiddenCompleted), math.floor(sel.truncatedTail)
    elseif budget >= counts.total then
      -- Everything fits: the selection is every live task, no native round trip.
      visible = {}
      for i = 1, #tasks do
        if tasks[i].status ~= "deleted" then
          visible[#visible + 1] = tasks[i]
        end
      end
      hidden_completed, truncated = 0, 0
    else
      local picked = H.core().overlay_layout({ tasks = tasks, nextId = state.nextId }, budget)
      visible = picked.visible
      hidden_completed = math.floor(picked.hiddenCompleted or 0)
      truncated = math.floor(picked.truncatedTail or 0)
    end
    local more = hidden_completed + truncated
    local n = #visible
    for i = 1, n do
      local prefix = (i == n and more == 0) and last or mid
      lines[#lines + 1] = finish(prefix .. layout.row(ctx, H.row_view(visible[i])), width)
    end
    if more > 0 then
      local hidden = { count = more, completed = hidden_completed, pending = truncated }
      lines[#lines + 1] = finish(last .. layout.summary(ctx, hidden), width)
    end
  end
  local spacer = layout.spacer(ctx)
  if spacer ~= nil then
    lines[#lines + 1] = finish(spacer, width)
  end
  return lines
end

return M
