-- rpiv_todo.overlay.layout: what each line of the panel says, as overridable functions.
--
-- One function per kind of line (heading, task row, "+N more" summary, collapsed hint,
-- trailing spacer) plus the status glyphs. Each returns the text of its line after the
-- tree prefix (`├─ ` / `└─ `), written with the theme in `ctx.theme`. `default_layout`
-- keeps the originals so an override can call them; `resolve` merges overrides over it.
-- Which rows exist and what the counts are is decided natively before any of this runs.

local common = require("rpiv_todo.common")

local M = {}
local H = {}

local num = common.num

function H.id_list(ids)
  -- ipairs, not `#`: a host's table may report a border far past its ids.
  local parts = {}
  for i, id in ipairs(ids) do
    parts[i] = "#" .. num(id)
  end
  return table.concat(parts, ",")
end

---What every layout function receives first.
---@class rpiv_todo.OverlayContext
---@field theme rpiv_todo.OverlayTheme the active theme (`fg`, `bold`, `strikethrough`)
---@field layout rpiv_todo.OverlayLayout the merged layout, to call a sibling
---@field glyphs table<string, string> status -> glyph
---@field counts { total: integer, pending: integer, in_progress: integer, completed: integer } over the tasks the panel may show (tombstones and tasks hidden after their turn left out)
---@field show_ids boolean whether rows carry `#id` (some shown task has blockedBy)
---@field collapse_key string|nil the key the collapsed hint advertises; nil when "off"
---@field width integer|nil the width lines are cut to
---@field t fun(id: string, args?: table): string the UI words in the active locale
---@field sanitize fun(text: string): string strip terminal escapes from model text

---One task as a row sees it: the text fields are already sanitized.
---@class rpiv_todo.OverlayRow
---@field id integer
---@field status "pending"|"in_progress"|"completed"
---@field subject string
---@field activeForm string|nil present only when the task has a non-empty one
---@field blockedBy integer[]|nil present only when non-empty
---@field task table the task as stored (raw, unsanitized text)

---What was left out on overflow.
---@class rpiv_todo.OverlayHidden
---@field count integer all tasks left out
---@field completed integer completed tasks dropped
---@field pending integer unfinished tasks cut from the tail

---Each function returns the text of its line after the tree prefix (`├─ ` / `└─ `);
---the heading and the spacer have no prefix. Return values are theme values (strings
---for the plain and ANSI themes): build them with `ctx.theme` and `..`.
---@class rpiv_todo.OverlayLayout
---@field heading fun(ctx: rpiv_todo.OverlayContext): any
---@field row fun(ctx: rpiv_todo.OverlayContext, row: rpiv_todo.OverlayRow): any
---@field summary fun(ctx: rpiv_todo.OverlayContext, hidden: rpiv_todo.OverlayHidden): any
---@field collapsed_hint fun(ctx: rpiv_todo.OverlayContext): any
---@field spacer fun(ctx: rpiv_todo.OverlayContext): any|nil nil: no blank line below the panel
---@field glyphs table<string, string>

---@class rpiv_todo.OverlayLayoutOverride
---@field heading? fun(ctx: rpiv_todo.OverlayContext): any
---@field row? fun(ctx: rpiv_todo.OverlayContext, row: rpiv_todo.OverlayRow): any
---@field summary? fun(ctx: rpiv_todo.OverlayContext, hidden: rpiv_todo.OverlayHidden): any
---@field collapsed_hint? fun(ctx: rpiv_todo.OverlayContext): any
---@field spacer? fun(ctx: rpiv_todo.OverlayContext): any|nil
---@field glyphs? table<string, string>

---@type rpiv_todo.OverlayLayout
M.default_layout = {
  glyphs = common.glyphs(),
}

-- Colors per status: the glyph says the state, the subject stays readable.
H.GLYPH_COLOR = { pending = "dim", in_progress = "warning", completed = "success" }
H.SUBJECT_COLOR = { pending = "text", in_progress = "accent", completed = "muted" }

---`● Todos (done/total)`; `○` and dim once nothing is pending or in progress.
---@param ctx rpiv_todo.OverlayContext
function M.default_layout.heading(ctx)
  local c = ctx.counts
  local active = c.pending + c.in_progress > 0
  local color = active and "accent" or "dim"
  local text = ctx.t("overlay-heading") .. " (" .. num(c.completed) .. "/" .. num(c.total) .. ")"
  local th = ctx.theme
  return th.fg(color, active and "●" or "○") .. " " .. th.bold(th.fg(color, text))
end

---`<glyph> [#id ]<subject>[ (<activeForm>)][ ⛓ #1,#2]`.
---@param ctx rpiv_todo.OverlayContext
---@param row rpiv_todo.OverlayRow
function M.default_layout.row(ctx, row)
  local th = ctx.theme
  local status = row.status
  -- Pieces first, one concatenation at the end: this runs once per row per render.
  local glyph = th.fg(H.GLYPH_COLOR[status] or "text", ctx.glyphs[status] or "?")
  local id = ""
  if ctx.show_ids then
    id = " " .. th.fg("dim", "#" .. num(row.id))
  end
  local subject = th.fg(H.SUBJECT_COLOR[status] or "text", row.subject)
  if status == "completed" then
    subject = th.strikethrough(subject)
  end
  local form = ""
  if status == "in_progress" and row.activeForm then
    form = " " .. th.fg("muted", "(" .. row.activeForm .. ")")
  end
  local deps = ""
  if row.blockedBy then
    deps = " " .. th.fg("muted", "⛓ " .. H.id_list(row.blockedBy))
  end
  return glyph .. id .. " " .. subject .. form .. deps
end

---`+N more (X completed, Y pending)`, zero parts left out (worded by the i18n layer).
---@param ctx rpiv_todo.OverlayContext
---@param hidden rpiv_todo.OverlayHidden
function M.default_layout.summary(ctx, hidden)
  return ctx.theme.fg("muted", ctx.t("overlay-more", hidden))
end

---`<key> to expand`, or `collapsed` when the key is off.
---@param ctx rpiv_todo.OverlayContext
function M.default_layout.collapsed_hint(ctx)
  local text
  if ctx.collapse_key == nil then
    text = ctx.t("overlay-collapsed")
  else
    text = ctx.t("overlay-expand-hint", { key = ctx.collapse_key })
  end
  return ctx.theme.fg("dim", text)
end

---The blank line that keeps the panel off the editor's border.
function M.default_layout.spacer(_)
  return ""
end

H.LAYOUT_FUNCTIONS = { "heading", "row", "summary", "collapsed_hint", "spacer" }
H.STATUSES = { "pending", "in_progress", "completed" }

---Check a layout override (for `setup()`, which raises on the message).
---@param layout any
---@return boolean ok
---@return string|nil what what was expected, when not ok
function M.check(layout)
  if type(layout) == "function" then
    return true
  end
  if type(layout) ~= "table" then
    return false, "expected a table of layout functions or a function"
  end
  local known = { glyphs = true }
  for _, name in ipairs(H.LAYOUT_FUNCTIONS) do
    known[name] = true
    if layout[name] ~= nil and type(layout[name]) ~= "function" then
      return false, name .. ": expected a function"
    end
  end
  for k in pairs(layout) do
    if not known[k] then
      return false,
        tostring(k) .. ": unknown layout key (expected one of heading, row, summary, collapsed_hint, spacer, glyphs)"
    end
  end
  if layout.glyphs ~= nil then
    if type(layout.glyphs) ~= "table" then
      return false, "glyphs: expected a table of strings"
    end
    for k, v in pairs(layout.glyphs) do
      if (k ~= "pending" and k ~= "in_progress" and k ~= "completed") or type(v) ~= "string" then
        return false, "glyphs: expected strings for pending, in_progress, completed"
      end
    end
  end
  return true
end

---Merge overrides over the default layout (later ones win; glyphs merged key by key).
---An override may be a table or a function receiving the defaults and returning one.
---@param ... rpiv_todo.OverlayLayoutOverride|function|nil
---@return rpiv_todo.OverlayLayout
function M.resolve(...)
  local out = { glyphs = {} }
  -- By name, not with pairs(): the LuaJIT 2.1.0-beta3 of Debian's Neovim 0.7.2 was seen
  -- to skip `heading` in a pairs() loop over this table once the loop was compiled (the
  -- panel then failed with "attempt to call field 'heading'"; tests/nvim/locale_spec.lua,
  -- about one run in ten under load).
  for _, name in ipairs(H.LAYOUT_FUNCTIONS) do
    out[name] = M.default_layout[name]
  end
  for _, status in ipairs(H.STATUSES) do
    out.glyphs[status] = M.default_layout.glyphs[status]
  end
  for k, v in pairs(M.default_layout.glyphs) do
    out.glyphs[k] = v -- any other a host added
  end
  for i = 1, select("#", ...) do
    local o = select(i, ...)
    if type(o) == "function" then
      o = o(M.default_layout)
    end
    if type(o) == "table" then
      for _, name in ipairs(H.LAYOUT_FUNCTIONS) do
        if type(o[name]) == "function" then
          out[name] = o[name]
        end
      end
      if type(o.glyphs) == "table" then
        for k, v in pairs(o.glyphs) do
          if type(v) == "string" then
            out.glyphs[k] = v
          end
        end
      end
    end
  end
  return out
end

return M
