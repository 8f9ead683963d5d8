-- rpiv_todo.common: the small helpers several modules share, kept once.
--
--   * `num(n)`: an id or a count as text (integers without Lua 5.4's ".0");
--   * `glyphs()`: the status glyphs a person sees (overlay rows, /todos, the call log);
--   * `defaults`: the UI option defaults setup(), the overlay and the editor glue agree on;
--   * `core()`: the native core, required on first use and remembered;
--   * `add_listener(list, fn)`: append `fn` to a listener list, get back its remover;
--   * `got(value)`: `got <type> <value>`, what an error message says it was handed;
--   * `clip(text, width)`: no more of a long text than a `width`-column line can show.
-- Plain Lua (5.1, 5.4, LuaJIT); no native call, so setup() can use it before the core loads
-- (`core()` loads the core only when a caller first asks for it).

local M = {}
local H = {}

-- Defaults of the UI options (also `require("rpiv_todo").defaults`).
M.defaults = {
  -- Lines the overlay may use, heading included; at least 3.
  max_widget_lines = 12,
  -- Key that collapses/expands the overlay, or "off".
  collapse_key = "ctrl+shift+t",
}

-- One status glyph per status, as every view of the list shows them.
H.GLYPHS = { pending = "○", in_progress = "◐", completed = "✓", deleted = "⊘" }

---A fresh table of the status glyphs (callers may export or change their copy).
---@param with_deleted? boolean include the tombstone glyph (the call log shows it)
---@return table<string, string>
function M.glyphs(with_deleted)
  local out = {}
  for status, glyph in pairs(H.GLYPHS) do
    if with_deleted or status ~= "deleted" then
      out[status] = glyph
    end
  end
  return out
end

-- Texts of the ids a list really has, remembered: every render writes them again, and
-- string.format stops LuaJIT's trace compiler. Bounded by the key range.
H.num_memo = {}

---An id or a count as text: `3`, never `3.0` (a float-decoding JSON library under Lua 5.4
---hands over floats); a non-integer or a non-number as `tostring` writes it.
---@param n any
---@return string
function M.num(n)
  local text = H.num_memo[n]
  if text ~= nil then
    return text
  end
  if type(n) == "number" and n == math.floor(n) and n > -2 ^ 53 and n < 2 ^ 53 then
    text = string.format("%d", n)
    if n > 0 and n <= 65536 then
      H.num_memo[n] = text
    end
    return text
  end
  return tostring(n)
end

---The native core (`rpiv_todo.native`), required on the first call and remembered, so a
---module that uses it only now and then does not load it at require time.
---@return table
function M.core()
  local core = H.core_module
  if core == nil then
    core = require("rpiv_todo.native")
    H.core_module = core
  end
  return core
end

---Append `fn` to `listeners` and return a function that takes it out again (every
---place it stands in `listeners`, the list as it was when `fn` was added).
---@param listeners function[]
---@param fn function
---@return fun() remove
function M.add_listener(listeners, fn)
  listeners[#listeners + 1] = fn
  return function()
    for i = #listeners, 1, -1 do
      if listeners[i] == fn then
        table.remove(listeners, i)
      end
    end
  end
end

---The bytes of a text `clip` keeps for a `width`-column line: a text no longer than this
---is never cut.
---@param width integer
---@return integer
function M.clip_bytes(width)
  return width * 4 + 64
end

---No more of `text` than a line `width` columns wide can show, cut at a character
---boundary: a column takes at most 4 bytes of UTF-8, and 64 bytes more leave room for
---escapes that sanitizing drops. Sanitizing, measuring and cutting a 100 KB subject for
---a 100-column row then costs what the row shows. `width` nil: the text as it is.
---@param text string
---@param width integer|nil
---@return string
function M.clip(text, width)
  if width == nil then
    return text
  end
  local n = M.clip_bytes(width)
  if #text <= n then
    return text
  end
  -- Back off to the start of a UTF-8 sequence (continuation bytes are 0x80-0xBF).
  while n > 0 do
    local b = text:byte(n + 1)
    if b < 0x80 or b >= 0xC0 then
      break
    end
    n = n - 1
  end
  return text:sub(1, n)
end

---`got <type> <value>`, what an error message adds after what it expected
---(rpiv_todo.options_check.got).
M.got = require("rpiv_todo.options_check").got

return M
