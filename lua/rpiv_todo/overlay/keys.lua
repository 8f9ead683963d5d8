-- rpiv_todo.overlay.keys: the collapse key grammar (as the TypeScript original, rpiv-todo, parses it).
--
-- Trimmed and lowercased; zero or more distinct modifiers (ctrl, shift, alt, super) joined
-- by `+`, then one printable character or a named key. `"off"` disables the shortcut.
-- `normalize` is strict (setup() raises on nil); `resolve` is the lenient per-render form.

local M = {}
local H = {}

M.DEFAULT = require("rpiv_todo.common").defaults.collapse_key

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

---Normalize a collapse key, or nil when `key` is not a valid key.
---@param key any
---@return string|nil
function M.normalize(key)
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

---Lenient per-render resolution: anything invalid or blank means the default. Renders
---repeat the same key, so the last spelling's answer is remembered.
---@param key any
---@return string
function M.resolve(key)
  if type(key) ~= "string" then
    return M.DEFAULT
  end
  if key ~= H.last_key then
    H.last_key = key
    H.last_resolved = M.normalize(key) or M.DEFAULT
  end
  return H.last_resolved
end

return M
