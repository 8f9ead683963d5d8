-- tests/luarocks/rock_spec.lua: rpiv_todo as LuaRocks installs it. scripts/test.sh runs
-- `luarocks --lua-version <v> --tree <temp> make` on the rockspec, then this file with
-- that tree's `luarocks path` (and nothing of the checkout on the search paths), in the
-- same interpreter. RPIV_ROCK_TREE names the tree; RPIV_FLAVOUR the expected build.

local T = dofile(os.getenv("RPIV_ROOT") .. "/tests/harness.lua")
local H = {}

H.tree = os.getenv("RPIV_ROCK_TREE")
H.flavour = os.getenv("RPIV_FLAVOUR")

-- True when `path` lies inside the rock tree.
function H.in_tree(path)
  return type(path) == "string" and path:sub(1, #H.tree + 1) == H.tree .. "/"
end

-- Where require would find `name` on `search_path` (package.searchpath is 5.2+).
function H.find(name, search_path)
  local file = name:gsub("%.", "/")
  for template in search_path:gmatch("[^;]+") do
    local candidate = template:gsub("%?", file)
    local handle = io.open(candidate, "rb")
    if handle then
      handle:close()
      return candidate
    end
  end
  return nil
end

T.test("the Lua scripts and core.so come from the rock tree", function()
  T.ok(H.tree and H.tree ~= "", "RPIV_ROCK_TREE is set")
  local init = H.find("rpiv_todo", package.path:gsub("%?%.lua", "?/init.lua") .. ";" .. package.path)
  T.ok(H.in_tree(init), "rpiv_todo/init.lua inside the tree, found at " .. tostring(init))
  T.ok(H.in_tree(H.find("rpiv_todo.overlay", package.path:gsub("%?%.lua", "?/init.lua"))), "overlay/init.lua")
  T.ok(H.in_tree(H.find("rpiv_todo.core", package.cpath)), "core.so inside the tree")
  T.eq(H.find("rpiv_todo.meta.core", package.path), nil, "the LuaCATS declarations are not installed")
end)

T.test("the installed core is this version, built for this interpreter", function()
  local core = require("rpiv_todo.core")
  T.eq(core.version, T.cargo_version(), "core.version")
  T.eq(core.flavour, H.flavour, "core.flavour")
end)

T.test("a tool call runs from the installed rock", function()
  local todo = require("rpiv_todo")
  local spec = todo.tool()
  T.eq(spec.name, "todo", "tool name")
  local created = spec.execute({ action = "create", subject = "From the rock" }, { session = "rock" })
  T.eq(created.content[1].text, "Created #1: From the rock (pending)", "create")
  local updated = spec.execute('{"action":"update","id":1,"status":"in_progress"}', { session = "rock" })
  T.eq(updated.content[1].text, "Updated #1 (pending → in_progress)", "update from JSON text")
  T.eq(updated.details.tasks[1].status, "in_progress", "snapshot status")
  local lines = todo.overlay.render(todo.session("rock"):state(), { width = 80 })
  T.eq(lines[1], "● Todos (0/1)", "panel heading")
  T.eq(lines[2], "└─ ◐ From the rock", "panel row")
end)

T.finish()
