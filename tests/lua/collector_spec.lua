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

T.finish()
