-- rpiv_todo.overlay.render: one panel's lines from a selection, through the layout and
-- the theme. The module-wide options (`config`, changed by setup through `configure`) live
-- here so that the stateless render and the live object read the same table.

---@helptext rpiv_todo-surprises-count verbatim
--- The heading counts the panel's tasks.
---     `● Todos (2/5)` counts what the panel may show. Completed tasks hide
---     after the turn they were completed in, so after the next turn the same
---     list reads `● Todos (0/3)`: two tasks left the panel, none was undone.
---     |:Todos| always counts the whole list.

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

-- What a setup() before this module loaded asked for (rpiv_todo.config keeps it).
require("rpiv_todo.config").configure_overlay(M)

H.core = common.core

-- Lenient: a non-number, NaN or a value below 3 means the default.
function H.max_widget_lines(n)
  if type(n) ~= "number" or n ~= n or n < 3 then
    return common.defaults.max_widget_lines
  end
  return n
end

function H.row_view(task, width)
  local blocked = task.blockedBy
  if type(blocked) ~= "table" or #blocked == 0 then
    blocked = nil
  end
  local form = task.activeForm
  if type(form) ~= "string" or form == "" then
    form = nil
  else
    form = text.sanitize(common.clip(form, width))
  end
  return {
    id = task.id,
    status = task.status,
    subject = text.sanitize(common.clip(task.subject or "", width)),
    activeForm = form,
    blockedBy = blocked,
    task = task,
  }
end

---A list handle's row view (read-only, text already sanitized) with its texts clipped
---to what a `width`-column line shows; the view itself when they are short.
---@param row table
---@param width integer
---@return table
function H.clipped(row, width)
  local subject, form = common.clip(row.subject, width), row.activeForm
  if form ~= nil then
    form = common.clip(form, width)
  end
  if subject == row.subject and form == row.activeForm then
    return row
  end
  return {
    id = row.id,
    status = row.status,
    subject = subject,
    activeForm = form,
    blockedBy = row.blockedBy,
    task = row.task,
  }
end

-- The layout for these options: module config, then the per-render override. Resolved
-- once per (config layout, override) pair: a live overlay renders with the same override
-- every time.
function H.layout_for(override)
  if override == nil then
    local cached = H.cached_layout
    if cached == nil or H.cached_for ~= M.config.layout then
      cached = layout_mod.resolve(M.config.layout)
      H.cached_layout, H.cached_for = cached, M.config.layout
    end
    return cached
  end
  local over = H.cached_override
  if over == nil or over.config ~= M.config.layout or over.override ~= override then
    over = { config = M.config.layout, override = override, layout = layout_mod.resolve(M.config.layout, override) }
    H.cached_override = over
  end
  return over.layout
end

---Is the memo of a row's line `m` still that row's line? Same row fields, and the same
---line start, width, ids shown, theme and layout.
---@return boolean
function H.same_row(m, row, prefix, ctx)
  if
    m.id ~= row.id
    or m.status ~= row.status
    or m.subject ~= row.subject
    or m.activeForm ~= row.activeForm
    or m.prefix ~= prefix
    or m.width ~= ctx.width
    or m.show_ids ~= ctx.show_ids
    or m.theme ~= ctx.theme
    or m.layout ~= ctx.layout
  then
    return false
  end
  local a, b = m.blockedBy, row.blockedBy
  if a == nil or b == nil then
    return a == b
  end
  if #a ~= #b then
    return false
  end
  for i = 1, #a do
    if a[i] ~= b[i] then
      return false
    end
  end
  return true
end

---The memo of a row's line (what `same_row` compares, and the line).
function H.row_memo(row, prefix, ctx, line)
  local blocked = nil
  if row.blockedBy ~= nil then
    blocked = {}
    for i = 1, #row.blockedBy do
      blocked[i] = row.blockedBy[i]
    end
  end
  return {
    id = row.id,
    status = row.status,
    subject = row.subject,
    activeForm = row.activeForm,
    blockedBy = blocked,
    prefix = prefix,
    width = ctx.width,
    show_ids = ctx.show_ids,
    theme = ctx.theme,
    layout = ctx.layout,
    line = line,
  }
end

-- The shipped row function: a layout that keeps it never reads `row.task`, so a list
-- handle's rows come without the whole task.
H.DEFAULT_ROW = layout_mod.default_layout.row

-- Rows under the heading in expanded mode: every task.
H.EVERYTHING = 2 ^ 31 - 1

---What a render reads: a `core.list` handle, a state table, or nil. A session gives its
---list handle (read in place, no snapshot); anything else with `:state()` its snapshot.
---@param source any
---@return any
function M.source(source)
  if type(source) == "table" then
    local list = source.list
    if type(list) == "userdata" and type(source.state) == "function" then
      return list
    end
    if type(source.state) == "function" then
      return source:state()
    end
  end
  return source
end

---What a row shows: a state's task as a row view, or a list handle's row view with its
---texts clipped to `width` (`paint` asks only when some row needs it).
function H.shown_row(row, views, width)
  if views then
    return H.clipped(row, width)
  end
  return H.row_view(row, width)
end

---The rows of a render with the memo (`paint`): a row unchanged since the last render
---reuses a copy of its line.
function H.memo_rows(lines, rows, views, convert, memo, ctx, more, mid, last, finish)
  local n, width, row_of = #rows, ctx.width, ctx.layout.row
  for i = 1, n do
    local row = rows[i]
    if convert then
      row = H.shown_row(row, views, width)
    end
    local last_row = i == n and more == 0
    local m = memo[i]
    if m ~= nil and H.same_row(m, row, last_row, ctx) then
      lines[i + 1] = themes.copy_line(m.line)
    else
      local line = finish((last_row and last or mid) .. row_of(ctx, row), width)
      lines[i + 1] = line
      memo[i] = H.row_memo(row, last_row, ctx, themes.copy_line(line))
    end
  end
end

---The panel's lines. `live` is an `overlay_live` (the live object's memory), a table of
---ids to leave out, or nil.
---@param source any a list handle, a state table, a session, or nil
---@param opts rpiv_todo.OverlayOptions
---@param live any
---@return any[] lines
function M.paint(source, opts, live)
  local cfg = M.config
  source = M.source(source)
  local budget
  if opts.expanded then
    budget = H.EVERYTHING
  else
    local mwl = opts.max_widget_lines
    if mwl == nil then
      mwl = cfg.max_widget_lines
    end
    budget = math.floor(H.max_widget_lines(mwl)) - 1
  end
  local layout = H.layout_for(opts.layout)
  local collapsed = opts.collapsed and true or false
  -- Selection, counts, showIds and the live memory: decided natively, in one call.
  local rows, counts, show_ids, hidden_completed, truncated, longest =
    H.core().overlay_view(source, budget, live, collapsed, layout.row ~= H.DEFAULT_ROW)
  if counts.total == 0 then
    return {}
  end

  local theme = themes.resolve(opts.theme or cfg.theme)
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
  if collapsed then
    lines[2] = finish(last .. layout.collapsed_hint(ctx), width)
  else
    -- A list handle's rows are row views already; a state table's are its own tasks.
    local views = type(source) == "userdata"
    local more = hidden_completed + truncated
    local n = #rows
    -- The shipped row function with a shipped theme depends on nothing but what the memo
    -- compares: a row unchanged since the last render reuses its line (a copy of it).
    local memo = opts.memo
    if memo ~= nil and (layout.row ~= H.DEFAULT_ROW or not themes.shipped(theme)) then
      memo = nil
    end
    -- A state's tasks become row views; a list handle's row views are clipped only when
    -- a text may be longer than a line shows (the native view says how long the longest
    -- is).
    local convert = not views or (width ~= nil and longest > common.clip_bytes(width))
    if memo == nil then
      for i = 1, n do
        local row = rows[i]
        if convert then
          row = H.shown_row(row, views, width)
        end
        local prefix = (i == n and more == 0) and last or mid
        lines[i + 1] = finish(prefix .. layout.row(ctx, row), width)
      end
    else
      H.memo_rows(lines, rows, views, convert, memo, ctx, more, mid, last, finish)
    end
    if more > 0 then
      local hidden = { count = more, completed = hidden_completed, pending = truncated }
      lines[n + 2] = finish(last .. layout.summary(ctx, hidden), width)
    end
  end
  local spacer = layout.spacer(ctx)
  if spacer ~= nil then
    lines[#lines + 1] = finish(spacer, width)
  end
  return lines
end

---Render the panel for `source` (stateless). Lines are strings, or lists of
---`{ text, group }` with the segments theme. Nothing to show: `{}` (hide the panel).
---@param source { tasks: table[], nextId: integer }|userdata|rpiv_todo.Session|nil a state, a core.list handle or a session
---@param opts? rpiv_todo.OverlayOptions
---@return any[] lines
function M.render(source, opts)
  opts = opts or {}
  return M.paint(source, opts, opts.hidden)
end

return M
