-- tests/lua/reachable_spec.lua: every function Lua code can reach from what the native
-- module returns, called with every type of argument, must answer or raise a Lua error.
-- The functions are found by walking, not listed: from `rpiv_todo.core`, a list handle and
-- an overlay_live, every table's keys and values, every metatable `getmetatable` gives and
-- the methods a userdata's protected one holds, and every function's upvalues through `debug.getupvalue` (which reaches what
-- the Lua layer keeps private, such as the replay walk's native snapshot reader: it used
-- to trust its argument, and `snapshot("xxxx", 2)` was a SIGSEGV). Each function is then
-- called with each type in each of its first three argument positions.
-- Runs in every interpreter (scripts/test.sh, and under valgrind for Lua 5.4); by hand:
--   lua5.4 tests/lua/reachable_spec.lua      (also luajit, lua5.1)

local T = dofile((os.getenv("RPIV_ROOT") or ".") .. "/tests/harness.lua")
local core = require("rpiv_todo.core")

local H = {}

H.scratch = T.tempdir()

-- What the interpreter itself provides (the globals, the standard libraries and what
-- they hold): not the module's, and not to be called blindly (`os.exit`). A Lua 5.4
-- function's `_ENV` upvalue is the globals table.
function H.standard()
  local std = { [_G] = true }
  for _, lib in pairs(_G) do
    std[lib] = true
    if type(lib) == "table" and lib ~= package.loaded then
      for _, v in pairs(lib) do
        std[v] = true
      end
    end
  end
  std[package.loaded] = true
  std[getmetatable("")] = true
  return std
end

-- Every function reachable from `roots`, each once, with the path that found it.
function H.walk(roots)
  local seen, found = H.standard(), {}
  local function visit(v, path)
    local kind = type(v)
    if (kind ~= "table" and kind ~= "function" and kind ~= "userdata") or seen[v] then
      return
    end
    seen[v] = true
    if kind == "function" then
      found[#found + 1] = { f = v, path = path }
      for i = 1, 255 do
        local name, up = debug.getupvalue(v, i)
        if name == nil then
          break
        end
        visit(up, path .. " upvalue " .. i .. " (" .. name .. ")")
      end
    elseif kind == "table" then
      for k, x in next, v do
        visit(k, path .. " key")
        visit(x, path .. "." .. tostring(k))
      end
      visit(getmetatable(v), path .. " metatable")
    else
      local mt = getmetatable(v)
      if type(mt) == "table" then
        visit(mt, path .. " metatable")
      end
      -- A protected metatable still has methods: what indexing the userdata reaches.
      local raw = debug.getmetatable(v)
      if type(raw) == "table" then
        visit(rawget(raw, "__index"), path .. " methods")
      end
    end
  end
  for _, root in ipairs(roots) do
    visit(root.value, root.name)
  end
  return found
end

-- One value of each type a function can be handed (fresh tables each time: a call may
-- keep or change what it is given).
function H.values()
  return {
    { "nil", nil },
    { "false", false },
    { "true", true },
    { "integer", 2 },
    { "float", 2.5 },
    { "NaN", 0 / 0 },
    { "-2^63", -2 ^ 63 },
    { "string", H.scratch .. "/xxxx" },
    { "empty table", {} },
    { "array", { 1, 2 } },
    { "object", { tasks = "x", nextId = "y" } },
    { "function", print },
    { "thread", coroutine.create(function() end) },
    { "userdata", io.stdout },
    { "list handle", core.list(nil) },
    { "overlay_live", core.overlay_live() },
    { "null", core.null },
  }
end

local roots = {
  { name = "core", value = core },
  { name = "list", value = core.list(nil) },
  { name = "overlay_live", value = core.overlay_live() },
  { name = "replay's result", value = core.replay({}) },
}
local found = H.walk(roots)

T.test("the walk finds the module's functions and the replay walk's private ones", function()
  local paths = {}
  for _, f in ipairs(found) do
    paths[#paths + 1] = f.path
  end
  local all = table.concat(paths, "\n")
  T.contains(all, "core.apply")
  T.contains(all, "core.replay upvalue")
  T.contains(all, "list methods.apply")
  T.contains(all, "overlay_live methods.hidden")
  T.ok(#found >= 30, "functions found: " .. #found)
end)

T.test("every reachable function, called with each type in each position, answers or raises", function()
  local calls = 0
  for _, entry in ipairs(found) do
    for position = 1, 3 do
      for _, value in ipairs(H.values()) do
        local args = { n = 3 }
        args[position] = value[2]
        -- Pass the list handle first where a method expects its object.
        local ok, err = pcall(entry.f, args[1], args[2], args[3])
        calls = calls + 1
        if not ok then
          T.ok(type(err) == "string" or type(err) == "userdata" or type(err) == "table", entry.path)
        end
      end
    end
    -- Every position the same type.
    for _, value in ipairs(H.values()) do
      pcall(entry.f, value[2], value[2], value[2])
      calls = calls + 1
    end
  end
  T.note(#found .. " functions, " .. calls .. " calls")
  -- The module still works afterwards.
  local r = core.apply(nil, { action = "create", subject = "after" })
  T.eq(r.content[1].text, "Created #1: after (pending)")
end)

T.test("the replay walk's snapshot reader names a wrong argument", function()
  local snapshot
  for _, entry in ipairs(found) do
    if entry.path:find("snapshot", 1, true) then
      snapshot = entry.f
    end
  end
  T.ok(snapshot, "found the snapshot reader")
  T.raises(function()
    snapshot("xxxx", 2)
  end, "tasks: expected a table, got a string")
  T.raises(function()
    snapshot(io.stdout, 2)
  end, "tasks: expected a table, got a userdata")
  T.raises(function()
    snapshot({}, "2")
  end, "nextId: expected a number, got a string")
  local state = snapshot({ { id = 1, subject = "a", status = "pending" } }, 2)
  T.eq(state.nextId, 2)
  T.eq(state.tasks[1].subject, "a")
end)

T.finish("reachable_spec")
