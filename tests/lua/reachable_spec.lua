-- tests/lua/reachable_spec.lua: every function Lua code can reach from what the native
-- module returns, called with every type of argument, must answer or raise a Lua error.
-- The functions are found by walking, not listed: from `rpiv_todo.core`, a list handle, an
-- overlay_live, a destroyed list and an error the module raised, every table's keys and
-- values, every metatable `debug.getmetatable` gives (its metamethods: `__gc`,
-- `__close`, `__len`, `__tostring`, `__eq`, `__index`, `__newindex`, `__call`, whichever
-- it has, and the methods its `__index` table holds), and every function's upvalues
-- through `debug.getupvalue` (which reaches what the Lua layer keeps private, such as the
-- replay walk's native snapshot reader: it used to trust its argument, and
-- `snapshot("xxxx", 2)` was a SIGSEGV). Each function is then called with each type in
-- each of its first three argument positions, values of the wrong userdata type among
-- them. Issue 41: a metatable's `__gc` called by hand with a table, a number or another
-- userdata was a SIGSEGV (F1), and `debug.getupvalue(core.apply, 1)` handed out mlua's
-- callback object, whose `__gc` called by hand freed it twice (F3).
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
      visit(debug.getmetatable(v), path .. " metatable")
    else
      -- The metatable as the debug library gives it, protected or not: every metamethod
      -- and, through `__index`, every method.
      local raw = debug.getmetatable(v)
      if type(raw) == "table" then
        visit(rawget(raw, "__index"), path .. " methods")
        visit(raw, path .. " metatable")
      end
    end
  end
  for _, root in ipairs(roots) do
    visit(root.value, root.name)
  end
  return found
end

-- A list whose `__gc` was called by hand: mlua gives it its metatable of destroyed
-- userdata.
function H.destroyed()
  local list = core.list(nil)
  rawget(debug.getmetatable(list), "__gc")(list)
  return list
end

-- The error object a failed call raises (mlua's, a userdata in every flavour).
function H.error_object()
  local _, err = pcall(core.list, "not json")
  return err
end

-- One value of each type a function can be handed (fresh tables each time: a call may
-- keep or change what it is given).
function H.values()
  return {
    { "destroyed list", H.destroyed() },
    { "error object", H.error_object() },
    { "proxy", newproxy and newproxy(true) or setmetatable({}, {}) },
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
  { name = "destroyed list", value = H.destroyed() },
  { name = "error", value = H.error_object() },
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
  -- Every metamethod of every metatable: the list's, the overlay's, a destroyed list's and
  -- an error's.
  for _, path in ipairs({
    "list metatable.__gc",
    "list metatable.__len",
    "list metatable.__tostring",
    "overlay_live metatable.__gc",
    "overlay_live metatable.__tostring",
    "destroyed list methods",
    "destroyed list metatable.__newindex",
    "destroyed list metatable.__call",
    "destroyed list metatable.__eq",
    "destroyed list metatable.__len",
    "destroyed list metatable.__tostring",
    "error metatable.__gc",
    "error metatable.__tostring",
  }) do
    T.contains(all, path)
  end
  if _VERSION == "Lua 5.4" then
    T.contains(all, "destroyed list metatable.__close")
  end
  T.ok(#found >= 60, "functions found: " .. #found)
end)

T.test("no function reached holds an object of mlua's: debug.getupvalue finds numbers and names", function()
  local kinds = {}
  for _, entry in ipairs(found) do
    for i = 1, 255 do
      local name, up = debug.getupvalue(entry.f, i)
      if name == nil then
        break
      end
      if type(up) == "userdata" and up ~= core.null then
        kinds[#kinds + 1] = entry.path .. " upvalue " .. i
      end
    end
  end
  T.eq(#kinds, 0, "userdata upvalues: " .. table.concat(kinds, ", "))
  -- The issue's reproducer (F3): the first upvalue of core.apply was mlua's callback
  -- (Lua 5.4 and LuaJIT; the debug library of PUC 5.1 reads no C function's upvalues).
  local _, up = debug.getupvalue(core.apply, 1)
  T.eq(type(up), (_VERSION == "Lua 5.1" and not jit) and "nil" or "number")
end)

T.test("a metatable's __gc called by hand with a wrong value raises; with its own, it destroys", function()
  local gc = rawget(debug.getmetatable(core.list(nil)), "__gc")
  local live_gc = rawget(debug.getmetatable(core.overlay_live()), "__gc")
  for _, value in ipairs({ {}, 2, "text", io.stdout, core.overlay_live(), H.error_object(), H.destroyed() }) do
    T.raises(function()
      gc(value)
    end, "__gc: expected a userdata of this metatable's type")
  end
  T.raises(function()
    live_gc(core.list(nil))
  end, "__gc: expected a userdata of this metatable's type")
  local list = core.list(nil)
  T.eq(gc(list), true)
  T.raises(function()
    list:state()
  end, "destructed")
  -- Twice: the destroyed list has another metatable now.
  T.raises(function()
    gc(list)
  end, "__gc: expected a userdata of this metatable's type")
  -- An error object's __gc by hand, then the collector: freed once (valgrind on 5.4).
  do
    local err = H.error_object()
    local err_gc = rawget(debug.getmetatable(err), "__gc")
    err_gc(err)
    T.eq(debug.getmetatable(err), nil)
    T.eq(type(tostring(err)), "string")
  end
  collectgarbage()
  collectgarbage()
end)

T.test("the metamethods as operators, on every value of the wrong type: answered or raised", function()
  local values = H.values()
  local count = 0
  for _, a in ipairs(values) do
    -- (`print` among them is not called: it would write to stdout.)
    for _, b in ipairs(type(a[2]) == "function" and {} or values) do
      local x, y = a[2], b[2]
      for _, op in ipairs({
        function()
          return #x
        end,
        function()
          return tostring(x)
        end,
        function()
          return x == y
        end,
        function()
          return x[y]
        end,
        function()
          x[y] = y
        end,
        function()
          return x(y)
        end,
      }) do
        pcall(op)
        count = count + 1
      end
    end
  end
  T.ok(count > 1000, "operations: " .. count)
  local r = core.apply(nil, { action = "create", subject = "after" })
  T.eq(r.content[1].text, "Created #1: after (pending)")
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
