-- rpiv_todo.overlay.text: the text a render writes over and over, remembered.
--
-- A live panel repaints on every tool call with mostly the same subjects, the same cut
-- lines and the same UI words; a table lookup is far cheaper than a pattern scan, a native
-- call or a Fluent lookup. Every memo here is bounded:
--   * sanitize and cut memos by bytes (keys plus values, `M.MEMO_BYTES` each); text
--     longer than `M.ENTRY_MAX` bytes is never remembered, so a huge subject that was
--     renamed or cleared is not kept alive by the memo;
--   * UI words per locale: only the active locale's are kept, dropped when it changes.

local M = {}
local H = {}

-- Bytes each memo may hold before it starts over, and the longest text it remembers.
M.MEMO_BYTES = 256 * 1024
M.ENTRY_MAX = 4096
M.ELLIPSIS = "…"

H.core = require("rpiv_todo.common").core

---A memo: `map` from text to text, and the bytes it holds.
function H.memo()
  return { map = {}, bytes = 0 }
end

---The bytes remembering `key` -> `value` costs, or nil when it must not be remembered.
function H.cost(key, value)
  local cost = #key
  if value ~= key then
    cost = cost + #value
  end
  if cost > M.ENTRY_MAX then
    return nil
  end
  return cost
end

function H.clear(memo)
  memo.map, memo.bytes = {}, 0
end

---Count `cost` more bytes in `memo`, emptying it first when they would pass
---`M.MEMO_BYTES`. True when it was emptied (the caller's handle on its map is stale).
---@return boolean
function H.charge(memo, cost)
  local cleared = false
  if memo.bytes + cost > M.MEMO_BYTES then
    H.clear(memo)
    cleared = true
  end
  memo.bytes = memo.bytes + cost
  return cleared
end

H.sanitized = H.memo()

---Model text made safe for a terminal (escapes, controls and bidi marks dropped).
---@param text any
---@return string
function M.sanitize(text)
  if type(text) ~= "string" then
    text = tostring(text)
  end
  local map = H.sanitized.map
  local clean = map[text]
  if clean == nil then
    -- Printable ASCII is what sanitize leaves untouched; skip the native call for it.
    if text:find("[^\32-\126]") then
      clean = H.core().sanitize_display(text)
    else
      clean = text
    end
    local cost = H.cost(text, clean)
    if cost ~= nil then
      if H.charge(H.sanitized, cost) then
        map = H.sanitized.map
      end
      map[text] = clean
    end
  end
  return clean
end

-- Cuts per width: `H.cuts.map[width][line]`; bytes counted over every width.
H.cuts = H.memo()

---`line` cut to `width` columns with an ellipsis (escapes kept whole, SGR reset after the
---ellipsis). A line never takes more columns than bytes, so a short one needs no measuring.
---@param line string
---@param width integer|nil
---@return string
function M.truncate(line, width)
  if width == nil or #line <= width then
    return line
  end
  local by_width = H.cuts.map[width]
  if by_width == nil then
    by_width = {}
    H.cuts.map[width] = by_width
  end
  local cut = by_width[line]
  if cut == nil then
    cut = H.core().truncate(line, width, M.ELLIPSIS)
    local cost = H.cost(line, cut)
    if cost ~= nil then
      if H.charge(H.cuts, cost) then
        by_width = {}
        H.cuts.map[width] = by_width
      end
      by_width[line] = cut
    end
  end
  return cut
end

---Drop every remembered text (tests; a host freeing memory).
function M.clear()
  H.clear(H.sanitized)
  H.clear(H.cuts)
  H.words = nil
end

-- UI words: the variables each overlay message reads, in a fixed order, so a formatted
-- string can be found by its arguments' values. A message not listed is not remembered.
M.MESSAGE_ARGS = {
  ["overlay-heading"] = {},
  ["overlay-collapsed"] = {},
  ["overlay-more"] = { "count", "completed", "pending" },
  ["overlay-expand-hint"] = { "key" },
}
H.WORDS_MAX = 1024 -- formatted strings kept for the active locale
H.LEAF = {} -- key of a formatted string inside its node

---A UI string in the active locale, remembered per locale and argument values.
---@param id string
---@param args? table<string, string|number>
---@return string
function M.t(id, args)
  local i18n = H.i18n
  if i18n == nil then
    i18n = require("rpiv_todo.i18n")
    H.i18n = i18n
  end
  local names = M.MESSAGE_ARGS[id]
  if names == nil then
    return i18n.t(id, args)
  end
  local locale = i18n.locale()
  local words = H.words
  if words == nil or words.locale ~= locale or words.n >= H.WORDS_MAX then
    words = { locale = locale, n = 0, root = {} }
    H.words = words
  end
  local node = words.root[id]
  if node == nil then
    node = {}
    words.root[id] = node
  end
  for i = 1, #names do
    local v = args and args[names[i]]
    if v == nil or v ~= v then
      -- An argument left out (or NaN, which no table can hold as a key): ask Fluent.
      return i18n.t(id, args)
    end
    local child = node[v]
    if child == nil then
      child = {}
      node[v] = child
    end
    node = child
  end
  local text = node[H.LEAF]
  if text == nil then
    text = i18n.t(id, args)
    node[H.LEAF] = text
    words.n = words.n + 1
  end
  return text
end

return M
