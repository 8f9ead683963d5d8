-- tests/lua/collector_spec.lua: the native module and the host's garbage collector. While
-- a native call runs on LuaJIT and Lua 5.1 the collector is held (finalizers must not run
-- inside it); afterwards it must be as the host left it. PUC Lua 5.1 has no way to ask
-- whether it runs, and every call used to end by restarting a collector the host had
-- stopped (issue 18, fault 4).
--   lua5.1 tests/lua/collector_spec.lua      (also luajit, lua5.4)

local T = dofile((os.getenv("RPIV_ROOT") or ".") .. "/tests/harness.lua")
local H = {}

local core = require("rpiv_todo.core")

-- Make about `mb` megabytes of tables that nothing keeps (stored, so that no compiler
-- can leave them out), and return how far the heap grew meanwhile, in KB.
function H.garbage(mb)
  local before = collectgarbage("count")
  for i = 1, mb * 8000 do
    H.sink = { i, i, i, i, i, i, i, i, i, i, i, i, i, i }
  end
  H.sink = nil
  return collectgarbage("count") - before
end

function H.native_calls()
  local list = core.list(nil)
  for i = 1, 20 do
    list:apply({ action = "create", subject = "task " .. i })
  end
  list:state()
  core.apply(nil, { action = "list" })
  core.replay({})
  core.overlay_view(list, 5)
end

-- How far 16 MB of garbage grows the heap after native calls made with the collector
-- stopped by the host (`stopped`) or running, in KB.
function H.growth_after_native_calls(stopped)
  collectgarbage("collect")
  collectgarbage(stopped and "stop" or "restart")
  H.native_calls()
  local grown = H.garbage(16)
  collectgarbage("restart")
  collectgarbage("collect")
  return grown
end

T.test("a collector the host stopped stays stopped after native calls", function()
  local grown = H.growth_after_native_calls(true)
  -- Nothing collected: the heap grew by about what was made.
  T.ok(grown > 12 * 1024, "the heap grew by " .. math.floor(grown) .. " KB, expected about 16 MB")
end)

T.test("a running collector still runs after native calls", function()
  local grown = H.growth_after_native_calls(false)
  T.ok(grown < 12 * 1024, "the heap grew by " .. math.floor(grown) .. " KB, expected far less than 16 MB")
end)

-- Finalizers that call the module (issue 41, F4). On Lua 5.1 a finalizer can run at any
-- allocation, mlua's included: while mlua read a call's arguments or converted its
-- results (its strings), outside the module's hold on the collector, and inside a
-- `lua_cpcall` window where mlua keeps the function its next protected call runs under
-- one registry key. A finalizer calling the module there replaced that function (a
-- SIGSEGV in 4 of 5 runs). And a call made from a finalizer restarted the collector that
-- 5.1 holds back while finalizers run. Now the hold covers the whole call and puts the
-- collector back as it found it.

-- Rounds of the loop below; fewer under valgrind (scripts/test.sh).
H.ROUNDS = os.getenv("RPIV_VALGRIND") and 200 or 4000

-- A value whose finalizer runs `f`: a userdata from `newproxy` where there is one (Lua
-- 5.1 and LuaJIT run no finalizer of a table), a table otherwise.
function H.finalized(f)
  if newproxy then
    local p = newproxy(true)
    getmetatable(p).__gc = f
    return p
  end
  return setmetatable({}, { __gc = f })
end

-- Every method of a bound list, and the module functions that take one, each as a call
-- and the check of what it answered (a busy list may refuse, with its own error).
H.BUSY = "list busy: another call on this list is under way"
function H.methods(list, path)
  return {
    sync = function()
      local what, err, kind = list:sync()
      assert(what == "unchanged" or what == "reloaded" or kind == "unbound", tostring(err))
    end,
    write = function()
      assert(list:write() == true)
    end,
    state = function()
      assert(type(list:state().tasks) == "table")
    end,
    state_json = function()
      assert(list:state_json():sub(1, 1) == "{")
    end,
    apply = function()
      local r = list:apply({ action = "list" })
      assert(r.content[1].text:find("#1 kept", 1, true) or r.content[1].text:find(H.BUSY, 1, true), r.content[1].text)
    end,
    apply_json = function()
      assert(list:apply_json('{"action":"list"}'):sub(1, 1) == "{")
    end,
    replace = function()
      assert(list:replace(list) == true)
    end,
    unbind = function()
      assert(list:unbind() == false)
    end,
    bind = function()
      list:bind(path)
    end,
    notices = function()
      assert(type(list:notices()) == "table")
    end,
    file = function()
      local p = list:file()
      assert(p == nil or type(p) == "string")
    end,
    next_id = function()
      assert(list:next_id() >= 1)
    end,
    len = function()
      assert(#list >= 0)
    end,
    tostring = function()
      assert(tostring(list):find("^rpiv_todo.list"))
    end,
    overlay_view = function()
      assert(type(core.overlay_view(list, 5)) == "table")
    end,
    from_strict = function()
      assert(type(core.from_strict({ action = "list" }, list)) == "table")
    end,
    core_apply = function()
      assert(type(core.apply(list, { action = "list" })) == "table")
    end,
  }
end

T.test("finalizers calling every method of the list in use, thousands of rounds: each answers", function()
  local path = T.tempdir() .. "/list.json"
  local list = core.list(nil)
  list:bind(path)
  list:apply({ action = "create", subject = "kept" })
  local methods = H.methods(list, path)
  local names = {}
  for name in pairs(methods) do
    names[#names + 1] = name
  end
  table.sort(names)
  local ran, wrong = 0, {}
  -- Lua 5.4 runs finalizers inside native calls (it never propagates their errors, so
  -- nothing holds its collector), and LuaJIT inside mlua's reading of the arguments and
  -- conversion of the results (its hold covers the module's own part): there a finalizer
  -- may find the list busy, refused as the module refuses a re-entrant call, or as mlua
  -- refuses a second borrow or a recursive call. On 5.1 the hold covers the whole call:
  -- no finalizer runs inside one, and every finalizer's call answers.
  local function allowed(err)
    return (_VERSION ~= "Lua 5.1" or jit)
      and (
        err:find(H.BUSY, 1, true)
        or err:find("error borrowing userdata", 1, true)
        or err:find("error mutably borrowing userdata", 1, true)
        or err:find("mutable callback called recursively", 1, true)
      )
  end
  local function finalizer(name)
    return function()
      ran = ran + 1
      local ok, err = pcall(methods[name])
      if not ok and not allowed(tostring(err)) then
        wrong[#wrong + 1] = name .. ": " .. tostring(err)
      end
    end
  end
  for round = 1, H.ROUNDS do
    for i = 1, #names do
      H.finalized(finalizer(names[(round + i) % #names + 1]))
    end
    -- The outer calls: every method, each making the strings and tables mlua converts.
    for _, name in ipairs(names) do
      local ok, err = pcall(methods[name])
      if not ok then
        wrong[#wrong + 1] = "outer " .. name .. ": " .. tostring(err)
      end
    end
  end
  collectgarbage()
  collectgarbage()
  T.eq(#wrong, 0, "calls that failed: " .. table.concat(wrong, "\n", 1, math.min(#wrong, 5)))
  T.ok(ran > H.ROUNDS, "finalizers ran: " .. ran)
  -- The list is the one task it had.
  T.eq(list:state().tasks[1].subject, "kept")
  T.eq(#list, 1)
end)

T.test("a call from a finalizer leaves the collector as 5.1 held it: no finalizer runs inside another", function()
  local depth, deepest, calls = 0, 0, 0
  local list = core.list(nil)
  local function finalizer()
    depth = depth + 1
    deepest = math.max(deepest, depth)
    calls = calls + 1
    -- A call, then garbage: were the collector restarted, the allocations below would
    -- run the next finalizer inside this one.
    list:state()
    for i = 1, 200 do
      H.sink = { i, i, i, i, i, i, i, i }
    end
    depth = depth - 1
  end
  for _ = 1, H.ROUNDS do
    H.finalized(finalizer)
    H.sink = { list:state_json() }
  end
  collectgarbage()
  T.ok(calls > H.ROUNDS / 2, "finalizers ran: " .. calls)
  T.eq(deepest, 1, "finalizers nested")
end)

T.finish()
