-- rpiv_todo.overlay.themes: how a colored piece of overlay text is written.
--
-- A theme is a table of functions: `fg(color, text)`, `bold(text)`, `strikethrough(text)`,
-- and optionally `finish(line, width)`, which turns a built line into the theme's line
-- type cut to `width` columns. Shipped: `plain` (what the recorded cases hold), `ansi`
-- (basic SGR) and `segments` (each line a list of `{ text, group }` for UIs that paint
-- with highlight groups). Colors: accent, dim, muted, text, warning, success, error,
-- toolTitle.

---A theme writes colored text. The values a theme returns are concatenated with `..` by
---layout functions, so they must be strings or support `__concat`.
---@class rpiv_todo.OverlayTheme
---@field fg fun(color: string, text: any): any
---@field bold fun(text: any): any
---@field strikethrough fun(text: any): any
---@field finish? fun(line: any, width: integer|nil): any turns a built line into the theme's line type, cut to `width`

local text = require("rpiv_todo.overlay.text")

local M = {}
local H = {}

---@type table<string, rpiv_todo.OverlayTheme>
M.themes = {}

local function identity_fg(_, s)
  return s
end
local function identity(s)
  return s
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
  fg = function(color, s)
    local sgr = H.SGR[color]
    if sgr == nil or s == "" then
      return s
    end
    return sgr[1] .. s .. sgr[2]
  end,
  bold = function(s)
    return "\27[1m" .. s .. "\27[22m"
  end,
  strikethrough = function(s)
    return "\27[9m" .. s .. "\27[29m"
  end,
}

-- Segments: each line is a list of `{ text, group }` (group nil: no highlight), with
-- `bold = true` / `strikethrough = true` on the segments that carry them. Groups are
-- named `RpivTodo<Color>` (RpivTodoAccent, RpivTodoDim, ..., RpivTodoToolTitle).
H.Spans = {}
H.Spans.__index = H.Spans

---color -> highlight group name (RpivTodo<Color>)
---@type table<string, string>
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
function H.restyle(s, change)
  local out = H.spans(s)
  for i = 1, #out do
    change(out[i])
  end
  return out
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
  local cut = text.truncate(plain, width)
  if cut == plain then
    return spans
  end
  local ellipsis = text.ELLIPSIS
  local keep = #cut - #ellipsis
  if keep < 0 or cut:sub(keep + 1) ~= ellipsis or cut:sub(1, keep) ~= plain:sub(1, keep) then
    return H.spans(cut) -- not a prefix plus ellipsis: keep the text, drop the styles
  end
  local out = setmetatable({}, H.Spans)
  local used = 0
  for i = 1, #spans do
    local seg = spans[i]
    if used >= keep then
      break
    end
    local s = seg[1]
    if used + #s > keep then
      s = s:sub(1, keep - used)
    end
    used = used + #s
    out[#out + 1] = { s, seg[2], bold = seg.bold, strikethrough = seg.strikethrough }
  end
  local last = out[#out]
  if last then
    last[1] = last[1] .. ellipsis
  else
    out[1] = { ellipsis }
  end
  return out
end

M.themes.segments = {
  fg = function(color, s)
    local group = M.groups[color]
    -- The innermost color wins, as it does in a terminal.
    return H.restyle(s, function(seg)
      if seg[2] == nil then
        seg[2] = group
      end
    end)
  end,
  bold = function(s)
    return H.restyle(s, function(seg)
      seg.bold = true
    end)
  end,
  strikethrough = function(s)
    return H.restyle(s, function(seg)
      seg.strikethrough = true
    end)
  end,
  finish = function(line, width)
    return H.finish_spans(line, width)
  end,
}

---The finish step of string themes: a line cut to `width` (an override that returned
---spans to a string theme is flattened first).
---@param line any
---@param width integer|nil
---@return string
function M.finish_string(line, width)
  if type(line) ~= "string" then
    line = H.plain_of(line)
  end
  return text.truncate(line, width)
end

---A theme table from an option: a table with `fg`, or the name of a shipped theme;
---anything else is the plain theme (render options are lenient).
---@param theme any
---@return rpiv_todo.OverlayTheme
function M.resolve(theme)
  if type(theme) == "string" then
    theme = M.themes[theme]
  end
  if type(theme) ~= "table" or type(theme.fg) ~= "function" then
    return M.themes.plain
  end
  return theme
end

return M
