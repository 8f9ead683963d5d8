-- rpiv_todo.overlay: the panel a person watches above the editor while the agent works.
--
-- Three pieces, each replaceable by a host:
--   * the layout: one function per kind of line (heading, task row, "+N more" summary,
--     collapsed hint, trailing spacer) plus the status glyphs; `M.default_layout` keeps
--     the originals so an override can call them;
--   * the theme: how a colored piece of text is written (plain text, ANSI SGR, or
--     `{ text, group }` segments for UIs that paint with highlight groups);
--   * the live object (`M.new`): remembers what a person has already seen, so completed
--     tasks fall away at the next turn, and the collapsed / expanded modes.
-- Which tasks fit on overflow is decided natively (`core.overlay_layout`); this file only
-- writes lines (and skips the native call when every task fits).
--
-- What the heading counts. `● Todos (done/total)` counts the tasks the panel works over:
-- live tasks, minus the completed ones the live object hid after their turn. So after
-- four tasks finished in earlier turns and two in this one, the heading says (2/2) while
-- `/todos` says 6/6. Chosen on purpose:
--   * DESIGN.md says completed tasks "hide from later renders"; the heading is part of
--     the render, so a hidden task leaves it as it leaves the rows;
--   * the seed's README has the widget render "whenever any overlay-visible tasks exist"
--     and auto-hide otherwise: one set drives both, so the panel never shows a heading
--     such as (6/6) above no rows one turn and disappears the next;
--   * the heading's total always equals the rows plus the `+N more` summary, so every
--     number on the panel adds up;
--   * the reference overlay computes its counts over the same filtered set;
--   * `/todos` is the full account, and the panel stays a view of the work at hand.

---@class rpiv_todo.OverlayModule
---@field config { max_widget_lines: integer, collapse_key: string, theme: any, layout: any } module-wide defaults (set by setup)
---@field themes { plain: rpiv_todo.OverlayTheme, ansi: rpiv_todo.OverlayTheme, segments: rpiv_todo.OverlayTheme }
---@field groups table<string, string> color -> highlight group name (RpivTodo<Color>)
---@field default_layout rpiv_todo.OverlayLayout the shipped layout functions and glyphs
---@field Overlay rpiv_todo.Overlay the live object's metatable
local M = {}
local H = {}

-- ---------------------------------------------------------------------------
-- Defaults (also the documentation of the per-render options)
-- ---------------------------------------------------------------------------

---@class rpiv_todo.OverlayOptions
---@field width? integer terminal columns; no line exceeds it (nil: no truncation)
---@field max_widget_lines? integer panel height budget, heading included (floor 3; else 12)
---@field collapsed? boolean show only the heading and the expand hint
---@field collapse_key? string key advertised by the hint; "off": a static "collapsed" label
---@field expanded? boolean the host's "show all" mode: every task, no summary
---@field theme? rpiv_todo.OverlayTheme|"plain"|"ansi"|"segments"
---@field layout? rpiv_todo.OverlayLayoutOverride|fun(default: rpiv_todo.OverlayLayout): rpiv_todo.OverlayLayoutOverride

-- Module-wide defaults; `setup()` changes them through `M.configure` after validating.
M.config = {
  -- Lines the panel may use, heading included (the trailing blank line is extra).
  max_widget_lines = 12,
  -- The key the collapsed hint advertises; "off" shows a static label instead.
  collapse_key = "ctrl+shift+t",
  -- nil: plain text. A theme table or the name of a shipped theme.
  theme = nil,
  -- nil: `M.default_layout`. A partial layout merged over it.
  layout = nil,
}

H.DEFAULT_MAX_WIDGET_LINES = 12
H.DEFAULT_COLLAPSE_KEY = "ctrl+shift+t"
H.ELLIPSIS = "…"

-- ---------------------------------------------------------------------------
-- Collapse key grammar (DESIGN.md "Collapse key")
-- ---------------------------------------------------------------------------

H.MODIFIERS = { ctrl = true, shift = true, alt = true, super = true }
H.NAMED_KEYS = {
  escape = true,
  esc = true,
  enter = true,
  ["return"] = true,
  tab = true,
  space = true,
  backspace = true,
  delete = true,
  insert = true,
  clear = true,
  home = true,
  ["end"] = true,
  pageup = true,
  pagedown = true,
  up = true,
  down = true,
  left = true,
  right = true,
}
for i = 1, 12 do
  H.NAMED_KEYS["f" .. i] = true
end
-- A one-character base key: the printable ASCII a terminal key id can name. `+` is the
-- separator and space is spelled "space", so neither is accepted bare.
H.PRINTABLE_KEY = "^[a-z0-9_%-!@#%$%%%^&%*%(%)|~`'\":;,%./<>%?%[%]{}=\\]$"

---Normalize a collapse key: trimmed and lowercased, zero or more distinct modifiers
---(ctrl, shift, alt, super) joined by `+`, then one printable character or a named key.
---`"off"` is returned as is (it disables the shortcut).
---@param key any
---@return string|nil key the normalized key, or nil when `key` is not a valid key
function M.normalize_collapse_key(key)
  if type(key) ~= "string" then
    return nil
  end
  local k = key:gsub("^%s+", ""):gsub("%s+$", ""):lower()
  if k == "off" then
    return k
  end
  if k == "" or k:sub(1, 1) == "+" or k:sub(-1) == "+" or k:find("++", 1, true) then
    return nil
  end
  local parts = {}
  for part in k:gmatch("[^+]+") do
    parts[#parts + 1] = part
  end
  local seen = {}
  for i = 1, #parts - 1 do
    local m = parts[i]
    if not H.MODIFIERS[m] or seen[m] then
      return nil
    end
    seen[m] = true
  end
  local base = parts[#parts]
  if H.NAMED_KEYS[base] or base:find(H.PRINTABLE_KEY) then
    return k
  end
  return nil
end

-- Lenient per-render resolution: anything invalid or blank means the default.
-- Renders repeat the same key: remember what the last spelling resolved to.
function H.collapse_key(key)
  if type(key) ~= "string" then
    return H.DEFAULT_COLLAPSE_KEY
  end
  if key ~= H.last_key then
    H.last_key = key
    H.last_key_resolved = M.normalize_collapse_key(key) or H.DEFAULT_COLLAPSE_KEY
  end
  return H.last_key_resolved
end

function H.max_widget_lines(n)
  if type(n) ~= "number" or n ~= n or n < 3 then
    return H.DEFAULT_MAX_WIDGET_LINES
  end
  return n
end

-- ---------------------------------------------------------------------------
-- Themes
-- ---------------------------------------------------------------------------

---A theme writes colored text. `fg` receives one of: accent, dim, muted, text,
---warning, success, error, toolTitle. The values a theme returns are concatenated with
---`..` by layout functions, so they must be strings or support `__concat`.
---@class rpiv_todo.OverlayTheme
---@field fg fun(color: string, text: any): any
---@field bold fun(text: any): any
---@field strikethrough fun(text: any): any
---@field finish? fun(line: any, width: integer|nil): any turns a built line into the theme's line type, cut to `width`

M.themes = {}

local function identity_fg(_, text)
  return text
end
local function identity(text)
  return text
end

-- Plain text: what the recorded cases hold.
M.themes.plain = { fg = identity_fg, bold = identity, strikethrough = identity }

-- ANSI SGR with the basic 16-color set only (no truecolor, no 256-color), so any terminal
-- shows it. Every open code is closed by its own reset code rather than a full reset, so
-- nesting works and stripping the SGR gives the plain line.
H.SGR = {
  accent = { "\27[36m", "\27[39m" }, -- cyan
  dim = { "\27[2m", "\27[22m" }, -- faint: chrome such as the tree and ids
  muted = { "\27[90m", "\27[39m" }, -- gray: secondary text
  text = { "\27[39m", "\27[39m" }, -- the terminal's own foreground
  warning = { "\27[33m", "\27[39m" }, -- yellow
  success = { "\27[32m", "\27[39m" }, -- green
  error = { "\27[31m", "\27[39m" }, -- red
  toolTitle = { "\27[35m", "\27[39m" }, -- magenta
}

M.themes.ansi = {
  fg = function(color, text)
    local sgr = H.SGR[color]
    if sgr == nil or text == "" then
      return text
    end
    return sgr[1] .. text .. sgr[2]
  end,
  bold = function(text)
    return "\27[1m" .. text .. "\27[22m"
  end,
  strikethrough = function(text)
    return "\27[9m" .. text .. "\27[29m"
  end,
}

-- Segments: each line is a list of `{ text, group }` (group nil: no highlight), with
-- `bold = true` / `strikethrough = true` on the segments that carry them. Groups are
-- named `RpivTodo<Color>` (RpivTodoAccent, RpivTodoDim, ..., RpivTodoToolTitle).
H.Spans = {}
H.Spans.__index = H.Spans

M.groups = {}
for color in pairs(H.SGR) do
  M.groups[color] = "RpivTodo" .. color:sub(1, 1):upper() .. color:sub(2)
end

function H.push_segment(out, seg)
  if seg[1] == "" then
    return
  end
  local last = out[#out]
  if last and last[2] == seg[2] and last.bold == seg.bold and last.strikethrough == seg.strikethrough then
    last[1] = last[1] .. seg[1]
  else
    out[#out + 1] = { seg[1], seg[2], bold = seg.bold, strikethrough = seg.strikethrough }
  end
end

function H.append_spans(out, x)
  if getmetatable(x) == H.Spans then
    for i = 1, #x do
      H.push_segment(out, x[i])
    end
  elseif x ~= nil then
    H.push_segment(out, { tostring(x) })
  end
end

---Coerce a string or spans value into a (fresh) spans list.
function H.spans(x)
  local out = setmetatable({}, H.Spans)
  H.append_spans(out, x)
  return out
end

H.Spans.__concat = function(a, b)
  local out = setmetatable({}, H.Spans)
  H.append_spans(out, a)
  H.append_spans(out, b)
  return out
end

-- Apply a change to every segment of a spans value (a copy; inputs are not mutated).
function H.restyle(text, change)
  local out = H.spans(text)
  for i = 1, #out do
    change(out[i])
  end
  return out
end

M.themes.segments = {
  fg = function(color, text)
    local group = M.groups[color]
    -- The innermost color wins, as it does in a terminal.
    return H.restyle(text, function(seg)
      if seg[2] == nil then
        seg[2] = group
      end
    end)
  end,
  bold = function(text)
    return H.restyle(text, function(seg)
      seg.bold = true
    end)
  end,
  strikethrough = function(text)
    return H.restyle(text, function(seg)
      seg.strikethrough = true
    end)
  end,
  finish = function(line, width)
    return H.finish_spans(line, width)
  end,
}

-- ---------------------------------------------------------------------------
-- Native helpers, loaded on first use (so setup() can validate without the .so)
-- ---------------------------------------------------------------------------

function H.core()
  local core = H.core_module
  if core == nil then
    core = require("rpiv_todo.native")
    H.core_module = core
  end
  return core
end

function H.t(id, args)
  local i18n = H.i18n_module
  if i18n == nil then
    i18n = require("rpiv_todo.i18n")
    H.i18n_module = i18n
  end
  return i18n.t(id, args)
end

-- Sanitized text, remembered: a live panel re-renders the same subjects many times, and
-- a table lookup is far cheaper than a pattern scan or a native call. Bounded: cleared
-- when it grows past H.MEMO_MAX entries (strings are never collected from weak keys).
H.MEMO_MAX = 4096
H.memo, H.memo_size = {}, 0
H.cut_memo, H.cut_size = {}, 0

function H.sanitize(text)
  if type(text) ~= "string" then
    text = tostring(text)
  end
  local clean = H.memo[text]
  if clean == nil then
    -- Printable ASCII is what sanitize leaves untouched; skip the native call for it.
    if text:find("[^\32-\126]") then
      clean = H.core().sanitize(text)
    else
      clean = text
    end
    if H.memo_size >= H.MEMO_MAX then
      H.memo, H.memo_size = {}, 0
    end
    H.memo[text] = clean
    H.memo_size = H.memo_size + 1
  end
  return clean
end

-- A line never takes more columns than bytes (wide characters need 3+ bytes), so a line
-- no longer in bytes than the width needs no measuring.
function H.truncate_string(line, width)
  if width == nil or #line <= width then
    return line
  end
  -- Styled lines are longer in bytes than in columns; remember their cuts per width
  -- (bounded like the sanitize memo) so a steady panel makes no native calls.
  local memo = H.cut_memo[width]
  if memo == nil or H.cut_size >= H.MEMO_MAX then
    if H.cut_size >= H.MEMO_MAX then
      H.cut_memo, H.cut_size = {}, 0
    end
    memo = {}
    H.cut_memo[width] = memo
  end
  local cut = memo[line]
  if cut == nil then
    -- The native cut keeps escapes whole and resets SGR after the ellipsis.
    cut = H.core().truncate(line, width, H.ELLIPSIS)
    memo[line] = cut
    H.cut_size = H.cut_size + 1
  end
  return cut
end

function H.finish_string(line, width)
  if type(line) ~= "string" then
    -- An override returned spans to a string theme: flatten it.
    line = H.plain_of(line)
  end
  return H.truncate_string(line, width)
end

function H.plain_of(x)
  if getmetatable(x) == H.Spans or type(x) == "table" then
    local parts = {}
    for i = 1, #x do
      parts[i] = x[i][1]
    end
    return table.concat(parts)
  end
  return tostring(x)
end

-- Cut a spans line to `width` columns: truncate the plain text natively, then keep the
-- segments that cover the kept prefix and put the ellipsis in the last one's style.
function H.finish_spans(line, width)
  local spans = H.spans(line)
  if width == nil then
    return spans
  end
  local plain = H.plain_of(spans)
  if #plain <= width then
    return spans
  end
  local cut = H.core().truncate(plain, width, H.ELLIPSIS)
  if cut == plain then
    return spans
  end
  local keep = #cut - #H.ELLIPSIS
  if keep < 0 or cut:sub(keep + 1) ~= H.ELLIPSIS or cut:sub(1, keep) ~= plain:sub(1, keep) then
    return H.spans(cut) -- not a prefix plus ellipsis: keep the text, drop the styles
  end
  local out = setmetatable({}, H.Spans)
  local used = 0
  for i = 1, #spans do
    local seg = spans[i]
    if used >= keep then
      break
    end
    local text = seg[1]
    if used + #text > keep then
      text = text:sub(1, keep - used)
    end
    used = used + #text
    out[#out + 1] = { text, seg[2], bold = seg.bold, strikethrough = seg.strikethrough }
  end
  local last = out[#out]
  if last then
    last[1] = last[1] .. H.ELLIPSIS
  else
    out[1] = { H.ELLIPSIS }
  end
  return out
end

function H.theme(theme)
  if type(theme) == "string" then
    theme = M.themes[theme]
  end
  if type(theme) ~= "table" or type(theme.fg) ~= "function" then
    return M.themes.plain
  end
  return theme
end

-- ---------------------------------------------------------------------------
-- The layout
-- ---------------------------------------------------------------------------

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
  glyphs = { pending = "○", in_progress = "◐", completed = "✓" },
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
  local text = ctx.t("overlay-heading") .. " (" .. H.num(c.completed) .. "/" .. H.num(c.total) .. ")"
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
    id = " " .. th.fg("dim", "#" .. H.num(row.id))
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

---Check a layout override (for `setup()`, which raises on the message).
---@param layout any
---@return boolean ok
---@return string|nil what what was expected, when not ok
function M.check_layout(layout)
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
function M.resolve_layout(...)
  local out = { glyphs = {} }
  for k, v in pairs(M.default_layout) do
    if k ~= "glyphs" then
      out[k] = v
    end
  end
  for k, v in pairs(M.default_layout.glyphs) do
    out.glyphs[k] = v
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

-- ---------------------------------------------------------------------------
-- Rendering
-- ---------------------------------------------------------------------------

-- Integers print without a trailing ".0" under Lua 5.4. Remembered, as ids repeat on
-- every render and string.format stops LuaJIT's trace compiler.
H.num_memo = {}
function H.num(n)
  local text = H.num_memo[n]
  if text ~= nil then
    return text
  end
  if type(n) == "number" and n == math.floor(n) and n > -2 ^ 53 and n < 2 ^ 53 then
    text = string.format("%d", n)
    if n > 0 and n <= 65536 then -- the ids a list really has; bounded
      H.num_memo[n] = text
    end
    return text
  end
  return tostring(n)
end

function H.id_list(ids)
  local parts = {}
  for i = 1, #ids do
    parts[i] = "#" .. H.num(ids[i])
  end
  return table.concat(parts, ",")
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
    form = H.sanitize(form)
  end
  return {
    id = task.id,
    status = task.status,
    subject = H.sanitize(task.subject or ""),
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
      cached = M.resolve_layout(M.config.layout)
      H.cached_layout, H.cached_for = cached, M.config.layout
    end
    return cached
  end
  return M.resolve_layout(M.config.layout, override)
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

  local theme = H.theme(opts.theme or cfg.theme)
  local layout = H.layout_for(opts.layout)
  local key = H.collapse_key(opts.collapse_key == nil and cfg.collapse_key or opts.collapse_key)
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
    t = H.t,
    sanitize = H.sanitize,
  }
  local finish = theme.finish or H.finish_string
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
      local sel = H.core().overlay_layout({ tasks = tasks, nextId = state.nextId }, budget)
      visible = sel.visible
      hidden_completed = math.floor(sel.hiddenCompleted or 0)
      truncated = math.floor(sel.truncatedTail or 0)
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

-- ---------------------------------------------------------------------------
-- The live overlay
-- ---------------------------------------------------------------------------

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
  local lines = M.render({ tasks = shown_tasks, nextId = next_id }, {
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
