-- tests/lua/meta_spec.lua: lua/rpiv_todo/meta/core.lua (the LuaCATS description editors
-- read) names exactly what the native module exports, and the list handle's methods.
-- Nothing here is generated: the annotations are hand-written, so a new export without
-- its annotation (or an annotation of a removed export) fails this spec.
--   luajit tests/lua/meta_spec.lua    (also lua5.1, lua5.4; from the repository root)

local T = dofile((os.getenv("RPIV_ROOT") or ".") .. "/tests/harness.lua")
local H = {}

-- The annotation file's text.
function H.meta_text()
  local path = T.root() .. "/lua/rpiv_todo/meta/core.lua"
  local file = assert(io.open(path, "rb"))
  local text = file:read("*a")
  file:close()
  return text
end

-- The names the annotations give: `function <prefix>.<name>(` and `function <prefix>:<name>(`
-- lines, plus the `---@field` lines of the `---@class <class>` block.
function H.annotated(text, prefix, class)
  local names = {}
  for name in text:gmatch("\nfunction " .. prefix .. "[.:]([%w_]+)%(") do
    names[name] = true
  end
  if class then
    local in_class = false
    for line in (text .. "\n"):gmatch("([^\n]*)\n") do
      if line:match("^%-%-%-@class ") then
        in_class = line == "---@class " .. class
      elseif in_class then
        local field = line:match("^%-%-%-@field ([%w_]+)")
        if field then
          names[field] = true
        elseif not line:match("^%-%-%-") then
          in_class = false
        end
      end
    end
  end
  return names
end

-- The sorted keys of a set, for a readable comparison.
function H.sorted(set)
  local keys = {}
  for key in pairs(set) do
    keys[#keys + 1] = key
  end
  table.sort(keys)
  return keys
end

-- The string keys of a table.
function H.keys(tbl)
  local set = {}
  for key in pairs(tbl) do
    if type(key) == "string" then
      set[key] = true
    end
  end
  return set
end

-- The methods of a userdata handle: the keys of its metatable's `__index` table (read with
-- debug.getmetatable, as the metatable itself is protected).
function H.methods(handle)
  local mt = debug.getmetatable(handle)
  T.eq(type(mt), "table", "handle metatable")
  T.eq(type(mt.__index), "table", "handle __index")
  return H.keys(mt.__index)
end

T.test("meta/core.lua names every export of the native module and nothing else", function()
  local core = require("rpiv_todo.core")
  local annotated = H.annotated(H.meta_text(), "core", "rpiv_todo.core")
  -- Exports for tests start with `_` and are not part of the API.
  local public = {}
  for k in pairs(H.keys(core)) do
    if k:sub(1, 1) ~= "_" then
      public[k] = true
    end
  end
  T.same(H.sorted(annotated), H.sorted(public), "core exports")
  T.eq(type(core._overlay_layout), "function", "the overlay's selection alone, for tests")
end)

T.test("meta/core.lua names every method of a list handle and nothing else", function()
  local list = require("rpiv_todo.core").list()
  local methods = H.methods(list)
  local annotated = H.annotated(H.meta_text(), "List")
  T.same(H.sorted(annotated), H.sorted(methods), "list methods")
end)

T.test("meta/core.lua names every method of an overlay live memory and nothing else", function()
  local live = require("rpiv_todo.core").overlay_live()
  local methods = H.methods(live)
  local annotated = H.annotated(H.meta_text(), "OverlayLive")
  T.same(H.sorted(annotated), H.sorted(methods), "overlay_live methods")
end)

T.finish()
