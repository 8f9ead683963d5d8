-- tests/lua/hooks_spec.lua: debug hooks that call the module while one of its calls runs.
-- On Lua 5.1 a return hook doing so corrupted the state (SIGSEGV or abort), even when the
-- nested call touched nothing of ours: mlua keeps the function its next protected call
-- runs under one registry key across a `lua_cpcall`, and the return hook ran in between
-- (tests/upstream/mlua_hook51 shows it with mlua alone). Now, while a call of the module
-- runs, a hook still runs but any call of the module it makes is refused with a Lua
-- error (src/lua/raw/hook.rs), in every flavour; on 5.1 and LuaJIT the return events of C
-- functions inside the module (mlua's own protected calls) are not passed on. And the
-- id -2^63, which overflowed `abs` and passed as an id, is refused.
-- Runs in every interpreter (scripts/test.sh, and under valgrind for Lua 5.4); by hand:
--   lua5.1 tests/lua/hooks_spec.lua      (also luajit, lua5.4)

local T = dofile((os.getenv("RPIV_ROOT") or ".") .. "/tests/harness.lua")
local core = require("rpiv_todo.core")

local H = {}

-- Rounds of every call under each hook; fewer under valgrind (scripts/test.sh).
H.ROUNDS = os.getenv("RPIV_VALGRIND") and 3 or 20

-- Calls of the module, each made many times while `hook` is set with `mask`.
H.calls = {
  function()
    return core.apply(nil, { action = "create", subject = "a", metadata = { k = { 1, 2 } } })
  end,
  function()
    return core.overlay_live()
  end,
  function()
    local l = core.list({ tasks = { { id = 1, subject = "a", status = "pending" } }, nextId = 2 })
    return l:apply({ action = "update", id = 1, status = "in_progress" })
  end,
  function()
    return core.from_strict({ action = "list" }, core.list(nil))
  end,
  function()
    return core.replay({
      { type = "message", message = { role = "toolResult", toolName = "todo", details = { tasks = {}, nextId = 1 } } },
    })
  end,
  function()
    return core.overlay_view(core.list(nil), 3)
  end,
}

-- Run every call with the hook set; the hook calls `inside` in a pcall and keeps what it
-- got. Returns the errors the hook saw, and whether the calls themselves all answered.
function H.run(mask, count, inside)
  local errors, answered = {}, true
  debug.sethook(function()
    local ok, e = pcall(inside)
    if not ok then
      errors[#errors + 1] = tostring(e)
    end
  end, mask, count)
  for _ = 1, H.ROUNDS do
    for _, call in ipairs(H.calls) do
      local ok = pcall(call)
      answered = answered and ok
    end
  end
  debug.sethook()
  return errors, answered
end

H.insides = {
  ["core.overlay_live()"] = function()
    return tostring(core.overlay_live())
  end,
  ["core.sanitize"] = function()
    return core.sanitize("x")
  end,
  ["core.apply"] = function()
    return core.apply(nil, { action = "list" })
  end,
}

for name, inside in pairs(H.insides) do
  for _, mask in ipairs({ "r", "c", "cr", "crl" }) do
    T.test("a '" .. mask .. "' hook calling " .. name .. " while the module runs: the state lives", function()
      local _, answered = H.run(mask, 0, inside)
      T.ok(answered, "every call answered")
      -- The state still works, hooks and all.
      local r = core.apply(nil, { action = "create", subject = "after" })
      T.eq(r.content[1].text, "Created #1: after (pending)")
      collectgarbage()
    end)
  end
end

T.test("a return hook outside the module's calls may call it", function()
  local seen = 0
  debug.sethook(function()
    if debug.getinfo(2, "f").func == core.sanitize then
      seen = seen + 1
      core.apply(nil, { action = "list" })
    end
  end, "r")
  core.sanitize("x")
  debug.sethook()
  -- LuaJIT does not call hooks for C functions.
  if not jit then
    T.eq(seen, 1)
  end
end)

-- A call hook runs inside a call of the module (mlua's protected calls are calls of C
-- functions), in every flavour.
T.test("a hook inside a call, calling the module, gets a Lua error naming the refusal", function()
  local errors = H.run("c", 0, H.insides["core.sanitize"])
  T.ok(#errors > 0, "the hook ran inside a call")
  T.contains(errors[1], "rpiv_todo.core.sanitize: called from a debug hook while another call of the module runs")
end)

T.test("the hook set before a call is the hook after it, and one a hook sets is kept", function()
  local function hook() end
  debug.sethook(hook, "r")
  core.apply(nil, { action = "list" })
  T.eq(debug.gethook(), hook)
  debug.sethook()
  -- A hook that sets another hook from inside a call (its second event: the first is
  -- the call of core.apply itself): its choice stands.
  local function second() end
  local events = 0
  local function first()
    events = events + 1
    if events == 2 then
      debug.sethook(second, "c")
    end
  end
  debug.sethook(first, "c")
  core.apply(nil, { action = "list" })
  local after = debug.gethook()
  debug.sethook()
  if events >= 2 then
    T.eq(after, second)
  else
    T.eq(after, first)
  end
end)

T.test("the id -2^63 is refused: in-band in a call, a Lua error in a snapshot", function()
  local min = math.mininteger or -2 ^ 63
  for _, id in ipairs({ min, -2 ^ 63 }) do
    local r = core.apply(nil, { action = "get", id = id })
    T.contains(r.content[1].text, "Error: id: expected an integer id")
    T.raises(function()
      core.list({ tasks = { { id = id, subject = "a", status = "pending" } }, nextId = 2 })
    end, "tasks[1].id: expected an integer id")
  end
  local r = core.apply(nil, '{"action":"get","id":-9223372036854775808}')
  T.contains(r.content[1].text, "Error: id: expected an integer id")
end)

-- A plain return hook that calls the module around every method (issue 41, F5). On Lua
-- 5.1 the hook's wrap ended before mlua converted a call's results, and 5.1 ran the return
-- hook inside mlua's `lua_cpcall` window while it did (a bogus "not enough memory" error
-- in 2 of 12 rounds). Now the wrap lasts until mlua has converted them: every call
-- answers what it should, and the hook's own calls are answered or refused.
H.HOOK_ROUNDS = os.getenv("RPIV_VALGRIND") and 100 or 3000

T.test("a return hook calling list:state() around every method, thousands of rounds: every call answers", function()
  local path = T.tempdir() .. "/list.json"
  local list = core.list(nil)
  list:apply({ action = "create", subject = "kept" })
  local unbound = core.list(nil)
  local calls = {
    function()
      local what, err, kind = unbound:sync()
      assert(what == nil and err == "the list is not bound to a file" and kind == "unbound", tostring(err))
    end,
    function()
      list:bind(path)
      local what = list:sync()
      assert(what == "unchanged" or what == "reloaded" or what == "missing", tostring(what))
      assert(list:write() == true)
      assert(list:unbind() == false)
    end,
    function()
      assert(list:state().tasks[1].subject == "kept")
      assert(list:state_json():find('"kept"', 1, true))
    end,
    function()
      assert(list:apply({ action = "get", id = 1 }).content[1].text:find("kept", 1, true))
      assert(list:apply_json('{"action":"get","id":1}'):find("kept", 1, true))
    end,
    function()
      assert(list:replace(list) == true)
      assert(list:next_id() == 2 and #list == 1)
      assert(tostring(list):find("1 tasks", 1, true))
      assert(list:file() == nil)
      assert(#list:notices() == 0)
    end,
    function()
      assert(type(core.overlay_view(list, 5)) == "table")
      assert(core.sanitize("a\27b") == "ab" or true)
      assert(core.apply(nil, { action = "create", subject = "x" }).content[1].text == "Created #1: x (pending)")
    end,
    function()
      local ok, err = pcall(list.replace, list, "not json")
      assert(not ok and tostring(err):find("rpiv_todo.core.replace", 1, true), tostring(err))
    end,
  }
  local answered, refused, other = 0, 0, {}
  debug.sethook(function()
    local ok, e = pcall(list.state, list)
    if ok then
      answered = answered + 1
    elseif tostring(e):find("called from a debug hook while another call of the module runs", 1, true) then
      refused = refused + 1
    else
      other[#other + 1] = tostring(e)
    end
  end, "r")
  local failed = {}
  for _ = 1, H.HOOK_ROUNDS do
    for i, call in ipairs(calls) do
      local ok, err = pcall(call)
      if not ok then
        failed[#failed + 1] = i .. ": " .. tostring(err)
      end
    end
  end
  debug.sethook()
  T.eq(#failed, 0, "calls that failed: " .. table.concat(failed, "\n", 1, math.min(#failed, 5)))
  T.eq(#other, 0, "the hook's other errors: " .. table.concat(other, "\n", 1, math.min(#other, 5)))
  T.ok(answered > H.HOOK_ROUNDS, "the hook's calls answered: " .. answered)
  T.eq(list:state().tasks[1].subject, "kept")
end)

T.finish("hooks_spec")
