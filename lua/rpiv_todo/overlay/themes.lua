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

-- Spans values are never changed once built: a concatenation keeps the segment tables of
-- its operands (a merge of two neighbours makes a new one), a restyle makes new segments,
-- and `finish` hands out a line of its own segments, so a render allocates about one
-- table per piece of text.

---Append `seg` to `out` (being built), merged into the last segment when both have the
---same style. `seg` is kept, not copied: it is never changed.
---A segment table; the style keys only when set (no hash part for a plain one).
---@return table
function H.seg(text_, group, bold, strikethrough)
  local seg = { text_, group }
  if bold then
    seg.bold = bold
  end
  if strikethrough then
    seg.strikethrough = strikethrough
  end
  return seg
end

function H.push_segment(out, seg)
  if seg[1] == "" then
    return
  end
  local n = #out
  local last = out[n]
  if last and last[2] == seg[2] and last.bold == seg.bold and last.strikethrough == seg.strikethrough then
    out[n] = H.seg(last[1] .. seg[1], last[2], last.bold, last.strikethrough)
  else
    out[n + 1] = seg
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

---Coerce a string or spans value into a spans list (a spans value is returned as it is).
function H.spans(x)
  if getmetatable(x) == H.Spans then
    return x
  end
  local out = setmetatable({}, H.Spans)
  H.append_spans(out, x)
  return out
end

H.Spans.__concat = function(a, b)
  -- "" on either side adds nothing: the other value is the result (values never change).
  if a == "" and getmetatable(b) == H.Spans then
    return b
  elseif b == "" and getmetatable(a) == H.Spans then
    return a
  end
  local out = setmetatable({}, H.Spans)
  H.append_spans(out, a)
  H.append_spans(out, b)
  return out
end

---Set `key` to `value` on every segment of a spans value, in new segments (inputs are not
---changed). Key 2 (the group) is set only where none is: the innermost color wins.
---@param s any a string or a spans value
---@param key 2|"bold"|"strikethrough"
---@param value any
---@return table
function H.restyle(s, key, value)
  local out = setmetatable({}, H.Spans)
  if getmetatable(s) == H.Spans then
    for i = 1, #s do
      local seg = s[i]
      local copy = H.seg(seg[1], seg[2], seg.bold, seg.strikethrough)
      if key ~= 2 or copy[2] == nil then
        copy[key] = value
      end
      out[i] = copy
    end
  elseif s ~= nil then
    local text_ = tostring(s)
    if text_ ~= "" then
      out[1] = { text_ }
      out[1][key] = value
    end
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

---A line of its own: the same segments, each a new table.
---@param spans table a spans value
---@return table
function H.own(spans)
  local out = setmetatable({}, H.Spans)
  for i = 1, #spans do
    local seg = spans[i]
    out[i] = H.seg(seg[1], seg[2], seg.bold, seg.strikethrough)
  end
  return out
end

-- Cut a spans line to `width` columns: truncate the plain text natively, then keep the
-- segments that cover the kept prefix and put the ellipsis in the last one's style.
function H.finish_spans(line, width)
  local spans = H.spans(line)
  if width == nil then
    return H.own(spans)
  end
  local bytes = 0
  for i = 1, #spans do
    bytes = bytes + #spans[i][1]
  end
  if bytes <= width then
    return H.own(spans)
  end
  local plain = H.plain_of(spans)
  local cut = text.truncate(plain, width)
  if cut == plain then
    return H.own(spans)
  end
  local ellipsis = text.ELLIPSIS
  local keep = #cut - #ellipsis
  if keep < 0 or cut:sub(keep + 1) ~= ellipsis or cut:sub(1, keep) ~= plain:sub(1, keep) then
    return H.own(H.spans(cut)) -- not a prefix plus ellipsis: keep the text, drop the styles
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
    out[#out + 1] = H.seg(s, seg[2], seg.bold, seg.strikethrough)
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
    return H.restyle(s, 2, M.groups[color])
  end,
  bold = function(s)
    return H.restyle(s, "bold", true)
  end,
  strikethrough = function(s)
    return H.restyle(s, "strikethrough", true)
  end,
  finish = function(line, width)
    return H.finish_spans(line, width)
  end,
}

---Is `theme` one of the shipped themes (plain, ansi, segments)?
---@param theme any
---@return boolean
function M.shipped(theme)
  return theme == M.themes.plain or theme == M.themes.ansi or theme == M.themes.segments
end

---A rendered line of its own: a string as it is, a segments line with new segment tables.
---@param line any
---@return any
function M.copy_line(line)
  if getmetatable(line) == H.Spans then
    return H.own(line)
  end
  return line
end

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
