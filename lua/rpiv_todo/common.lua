-- rpiv_todo.common: the small helpers several modules share, kept once.
--
--   * `num(n)`: an id or a count as text (integers without Lua 5.4's ".0");
--   * `glyphs()`: the status glyphs a person sees (overlay rows, /todos, the call log);
--   * `defaults`: the UI option defaults setup(), the overlay and the editor glue agree on;
--   * `state_of(source, what)`: a snapshot from a state, a session or the foreground session;
--   * `core()`: the native core, required on first use and remembered;
--   * `add_listener(list, fn)`: append `fn` to a listener list, get back its remover;
--   * `got(value)`: `got <type> <value>`, what an error message says it was handed;
--   * `clip(text, width)`: no more of a long text than a `width`-column line can show;
--   * `check_options(opts, names, checks, prefix)`: the one options checker of both
--     setup()s (rpiv_todo and rpiv_todo.nvim), so their messages read alike.
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

---A snapshot from a state table, a session (anything with `:state()`), or nil for the
---foreground session. Anything else raises `(rpiv_todo) <what>: expected ...`.
---@param source any
---@param what string the caller's name in the error
---@return rpiv_todo.State
function M.state_of(source, what)
  if source == nil then
    return require("rpiv_todo.session").foreground():state()
  end
  if type(source) == "table" and type(source.state) == "function" then
    return source:state()
  end
  if type(source) ~= "table" then
    error("(rpiv_todo) " .. what .. ": expected a state { tasks, nextId }, a session or nil, got " .. type(source), 0)
  end
  return source
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

---`got <type> <value>`, what an error message adds after what it expected (strings
---quoted, numbers and booleans written out, other values by type only).
---@param value any
---@return string
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
  local n = width * 4 + 64
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

function M.got(value)
  local kind = type(value)
  if kind == "string" then
    return "got string " .. string.format("%q", value)
  elseif kind == "number" or kind == "boolean" then
    return "got " .. kind .. " " .. tostring(value)
  end
  return "got " .. kind
end

---The one options checker of `require("rpiv_todo").setup()` and
---`require("rpiv_todo.nvim").setup()`. `opts` is the table handed to setup (nil: none);
---`names` lists every known key in the order they are checked; `checks[name](value)`
---returns nil when the value is fine, else what was expected ("expected a boolean").
---Values are checked only when present, unless the key is in `nil_checked`. Raises,
---before anything changes:
---  `(rpiv_todo) <prefix><key>: expected …, got <type> <value>` for a wrong value,
---  `(rpiv_todo) <prefix><key>: unknown option (expected <names>)` for an unknown key,
---  `(rpiv_todo) <prefix>setup: expected a table of options, got …` for anything but a table.
---Keys without a check pass here (their setup checks them itself). Returns `opts`, or an
---empty table for nil.
---@param opts any
---@param names string[]
---@param checks table<string, fun(value: any): string|nil>
---@param prefix? string put before every key ("nvim.")
---@param nil_checked? table<string, boolean> keys whose check also sees nil
---@return table
function M.check_options(opts, names, checks, prefix, nil_checked)
  prefix = prefix or ""
  if opts == nil then
    return {}
  end
  if type(opts) ~= "table" then
    error("(rpiv_todo) " .. prefix .. "setup: expected a table of options, " .. M.got(opts), 0)
  end
  local known = {}
  for _, name in ipairs(names) do
    known[name] = true
  end
  for k in pairs(opts) do
    if not known[k] then
      error(
        "(rpiv_todo) " .. prefix .. tostring(k) .. ": unknown option (expected " .. table.concat(names, ", ") .. ")",
        0
      )
    end
  end
  for _, k in ipairs(names) do
    local v, check = opts[k], checks[k]
    if check ~= nil and (v ~= nil or (nil_checked ~= nil and nil_checked[k])) then
      local problem = check(v)
      if problem ~= nil then
        error("(rpiv_todo) " .. prefix .. k .. ": " .. problem .. ", " .. M.got(v), 0)
      end
    end
  end
  return opts
end

return M
