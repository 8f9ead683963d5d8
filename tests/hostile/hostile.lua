-- tests/hostile/hostile.lua: hostile input against the native module from a real
-- interpreter. Seeded pseudo-random tool arguments — wrong types, NaN, huge and fractional
-- ids, non-UTF-8 bytes, deep and cyclic tables, functions, both null values, JSON text
-- that is truncated or mangled — go through list:apply (tables), list:apply_json (text)
-- and core.apply. Every call must return in-band: no Lua error, `details.error` set exactly
-- when the text starts with "Error: ", and a rejected call leaves the list byte-for-byte
-- as it was. scripts/test.sh runs it with stderr captured and fails on any byte there.
--   luajit tests/hostile/hostile.lua [calls]     (lua/rpiv_todo/core.so built for it)
local T = dofile((os.getenv("RPIV_ROOT") or ".") .. "/tests/harness.lua")
local has_cjson, cjson = pcall(require, "cjson")
local core = require("rpiv_todo.core")
local CALLS = tonumber(arg and arg[1]) or 20000

-- A small LCG so every run sees the same inputs on every interpreter (5.1 has no integers:
-- keep the state below 2^31 and multiply in floats that stay exact).
local seed = 12345
local function rand(n)
  seed = (seed * 16807) % 2147483647
  return seed % n + 1
end
local function pick(t)
  return t[rand(#t)]
end

local ACTIONS = { "create", "update", "list", "get", "delete", "clear", "frob", "", "CREATE" }
local STATUSES = { "pending", "in_progress", "completed", "deleted", "done", "" }
local FIELDS = {
  "action",
  "subject",
  "description",
  "activeForm",
  "owner",
  "status",
  "id",
  "blockedBy",
  "addBlockedBy",
  "removeBlockedBy",
  "metadata",
  "includeDeleted",
  "tasks",
  "extra",
}

local cyclic = {}
cyclic.self = cyclic

local function deep(n)
  local t = {}
  local cur = t
  for _ = 1, n do
    cur.next = {}
    cur = cur.next
  end
  return t
end

local function value(depth)
  local k = rand(22)
  if k == 1 then
    return rand(5)
  end
  if k == 2 then
    return rand(5) - 3
  end
  if k == 3 then
    return rand(10) + 0.5
  end
  if k == 4 then
    return 0 / 0
  end
  if k == 5 then
    return 1 / 0
  end
  if k == 6 then
    return 2 ^ 60
  end
  if k == 7 then
    return "text " .. rand(100)
  end
  if k == 8 then
    return "\255\254 not utf-8"
  end
  if k == 9 then
    return "\27[31mred\27[0m\n\t\226\128\174bidi"
  end
  if k == 10 then
    return true
  end
  if k == 11 then
    return core.null
  end
  if k == 12 then
    return print
  end
  if k == 13 then
    return cyclic
  end
  if k == 14 then
    return deep(70)
  end
  if k == 15 then
    return {}
  end
  if k == 16 then
    return { 1, 2, rand(5) }
  end
  if k == 17 then
    return { 1, nil, 3 }
  end
  if k == 18 then
    return { a = 1, [1] = 2 }
  end
  if k == 19 and depth < 3 then
    return { k = value(depth + 1), n = core.null }
  end
  if k == 20 then
    return pick(STATUSES)
  end
  if k == 21 then
    return coroutine.create(function() end)
  end
  return "x"
end

-- Mostly well-formed calls (so the list grows and real transitions happen), some hostile.
local function params()
  local p = { action = pick({ "create", "create", "update", "update", "list", "get", "delete", "clear" }) }
  if rand(4) == 1 then
    p.action = pick(ACTIONS)
  end
  p.subject = "task " .. rand(50)
  if rand(2) == 1 then
    p.id = rand(30)
  end
  if rand(3) == 1 then
    p.status = pick(STATUSES)
  end
  if rand(5) == 1 then
    p.addBlockedBy = { rand(30) }
  end
  if rand(6) == 1 then
    -- A batch (`tasks`): mostly well-formed items, some hostile ones, the call's own
    -- fields usually moved into the items.
    local items = {}
    for i = 1, rand(4) do
      items[i] = rand(8) == 1 and value(0)
        or { subject = "task " .. rand(50), id = rand(30), status = rand(2) == 1 and pick(STATUSES) or nil }
    end
    p.tasks = items
    if rand(4) ~= 1 then
      p.subject, p.id, p.status, p.addBlockedBy = nil, nil, nil, nil
    end
  end
  for _ = 1, rand(3) - 1 do
    p[pick(FIELDS)] = value(0)
  end
  if rand(50) == 1 then
    return value(0)
  end
  return p
end

local function mangle(text)
  local k = rand(6)
  if k == 1 then
    return text:sub(1, rand(#text))
  end
  if k == 2 then
    return text .. "}"
  end
  if k == 3 then
    return string.rep("[", 200) .. string.rep("]", 200)
  end
  if k == 4 then
    return "\255" .. text
  end
  if k == 5 then
    return "null"
  end
  return text
end

local failures = {}
local function fail(msg)
  failures[#failures + 1] = msg
end

-- Raise (failing the enclosing check) when anything failed since the last call, with the
-- first ten messages.
local function none_failed()
  local n = #failures
  if n > 0 then
    local shown = {}
    for i = 1, math.min(n, 10) do
      shown[i] = failures[i]
    end
    failures = {}
    error(string.format("%d failures, the first %d:\n      %s", n, #shown, table.concat(shown, "\n      ")), 2)
  end
end

local function check(list, result, before, how)
  local details = result.details
  local text = result.content[1].text
  if type(text) ~= "string" then
    return fail(how .. ": no text")
  end
  local rejected = text:sub(1, 7) == "Error: "
  if rejected ~= (details.error ~= nil) then
    fail(how .. ": error flag and text disagree: " .. text)
  end
  if rejected and list:state_json() ~= before then
    fail(how .. ": a rejected call changed the list: " .. text)
  end
  if #details.tasks ~= #list then
    fail(how .. ": snapshot and list differ in length")
  end
end

local stats = { calls = 0, rejected = 0 }
T.test(CALLS .. " seeded hostile calls (tables, JSON text, core.apply) all answer in band", function()
  local tables, texts = core.list(), core.list()
  local state = nil
  for i = 1, CALLS do
    local p = params()
    -- Tables.
    local before = tables:state_json()
    local ok, result = pcall(tables.apply, tables, p)
    if not ok then
      fail("list:apply raised: " .. tostring(result))
    else
      check(tables, result, before, "table call " .. i)
      if result.details.error then
        stats.rejected = stats.rejected + 1
      end
    end
    -- JSON text (only what cjson can encode; then mangled now and then).
    if has_cjson then
      local okj, text = pcall(cjson.encode, p)
      if okj then
        text = rand(5) == 1 and mangle(text) or text
        local before_json = texts:state_json()
        local ok2, out = pcall(texts.apply_json, texts, text)
        if not ok2 then
          fail("list:apply_json raised: " .. tostring(out))
        else
          local okd, r = pcall(cjson.decode, out)
          if not okd then
            fail("apply_json returned text that is not JSON: " .. out:sub(1, 80))
          else
            if type(r.details.tasks) ~= "table" then
              fail("apply_json: no tasks array")
            end
            if r.details.error and texts:state_json() ~= before_json then
              fail("apply_json: a rejected call changed the list")
            end
          end
        end
      end
    end
    -- The pure function, threading the state through Lua.
    if i % 10 == 0 then
      local ok3, r, s2 = pcall(core.apply, state, p)
      if not ok3 then
        fail("core.apply raised: " .. tostring(r))
      else
        state = s2
      end
    end
    stats.calls = stats.calls + 1
  end
  none_failed()
end)
T.note(string.format("%d calls, %d rejected in-band", stats.calls, stats.rejected))

-- Differential: the same seeded calls through the three paths (list:apply with tables,
-- list:apply_json with text, core.apply threading a state table) must give the same reply
-- text and the same list, while other code's finalizers run around and inside the calls:
-- finalizers that call the tool on a list of their own (which must just work) and on the
-- three lists under test with read-only calls (answered normally, or in-band
-- "Error: list busy" when they land in the middle of a call; never a Lua error, never a
-- change). Under Lua 5.4 some finalizers also raise (5.4 makes that a warning; under
-- LuaJIT and 5.1 a raising finalizer's error surfaces in arbitrary code, which
-- tests/hostile/finalizers.lua covers). Metadata stays out: its key order is a documented
-- difference between Lua tables and JSON text (docs/deviations.md).
local HOSTILE_TEXT = { "plain", "\27[31mred\27[0m", "\27]0;title\7x", "\226\128\174bidi", "\216\156alm", " " }

local function clean_call()
  local p = { action = pick({ "create", "create", "create", "update", "update", "update", "get", "list", "delete" }) }
  if rand(200) == 1 then
    p.action = "clear"
  end
  if p.action == "create" or rand(4) == 1 then
    p.subject = pick(HOSTILE_TEXT) .. " " .. rand(9)
  end
  if p.action ~= "create" then
    p.id = rand(12)
  end
  if rand(3) == 1 then
    p.status = pick({ "pending", "in_progress", "completed", "deleted" })
  end
  if rand(4) == 1 then
    p.owner = pick(HOSTILE_TEXT)
  end
  if rand(5) == 1 then
    p.activeForm = pick(HOSTILE_TEXT)
  end
  if rand(4) == 1 then
    local key = p.action == "create" and "blockedBy" or pick({ "addBlockedBy", "removeBlockedBy" })
    p[key] = { rand(12), rand(12) }
  end
  if p.action == "list" and rand(2) == 1 then
    p.includeDeleted = true
  end
  return p
end

local diff = { calls = 0, busy = 0, reentered = 0 }
if has_cjson then
  T.test("the three paths agree call by call while finalizers run and re-enter", function()
    local tables, texts = core.list(), core.list()
    local state = nil
    local scratch = core.list()
    local lua54 = _VERSION == "Lua 5.4" and not rawget(_G, "jit")
    local function reenter()
      diff.reentered = diff.reentered + 1
      local ok, r = pcall(scratch.apply, scratch, { action = #scratch < 20 and "create" or "clear", subject = "gc" })
      if not ok or r.details.error then
        fail("another list from a finalizer: " .. tostring(ok and r.content[1].text or r))
      end
      local before_t, before_j = tables:state_json(), texts:state_json()
      local ok1, r1 = pcall(tables.apply, tables, { action = "list" })
      local ok2, r2 = pcall(texts.apply_json, texts, '{"action":"get","id":1}')
      if not ok1 or not ok2 then
        fail("a re-entrant read raised: " .. tostring(ok1 and r2 or r1))
        return
      end
      if r1.content[1].text:find("^Error: list busy") then
        diff.busy = diff.busy + 1
      end
      if tables:state_json() ~= before_t or texts:state_json() ~= before_j then
        fail("a re-entrant read changed a list")
      end
      if type(r2) ~= "string" or not r2:find('"content"', 1, true) then
        fail("a re-entrant apply_json gave no result")
      end
    end
    local function raise()
      error("finalizer error")
    end
    local function garbage()
      local mt = { __gc = reenter }
      for _ = 1, rand(3) do
        if rawget(_G, "newproxy") then
          getmetatable(newproxy(true)).__gc = reenter
        else
          setmetatable({}, mt)
        end
      end
      if lua54 then
        setmetatable({}, { __gc = raise })
      end
    end
    local n = math.floor(CALLS / 4)
    for i = 1, n do
      local p = clean_call()
      local text = cjson.encode(p)
      garbage()
      local ok1, r1 = pcall(tables.apply, tables, p)
      garbage()
      local ok2, out = pcall(texts.apply_json, texts, text)
      garbage()
      local ok3, r3, s3 = pcall(core.apply, state, p)
      if not (ok1 and ok2 and ok3) then
        fail("call " .. i .. " raised: " .. tostring(not ok1 and r1 or not ok2 and out or r3))
        break
      end
      state = s3
      local r2 = cjson.decode(out)
      local t1, t2, t3 = r1.content[1].text, r2.content[1].text, r3.content[1].text
      if t1 ~= t2 or t1 ~= t3 then
        fail(string.format("call %d %s: the paths disagree: %q / %q / %q", i, text, t1, t2, t3))
        break
      end
      local j1, j2, j3 = tables:state_json(), texts:state_json(), core.list(state):state_json()
      if j1 ~= j2 or j1 ~= j3 then
        fail(string.format("call %d %s: the lists differ after it", i, text))
        break
      end
      diff.calls = diff.calls + 1
    end
    if diff.reentered == 0 then
      fail("no finalizer ran")
    end
    none_failed()
  end)
  T.note(
    string.format(
      "differential: %d calls agree on three paths; %d re-entrant finalizers, %d answered busy",
      diff.calls,
      diff.reentered,
      diff.busy
    )
  )
else
  T.note("skipped: the differential run needs cjson (scripts/test.sh installs lua-cjson)")
end

T.test("the text helpers take any bytes", function()
  for _ = 1, 2000 do
    local b = {}
    for j = 1, rand(40) do
      b[j] = string.char(rand(256) - 1)
    end
    local s = table.concat(b)
    local ok = pcall(core.sanitize, s) and pcall(core.width, s) and pcall(core.truncate, s, rand(20) - 1, "…")
    if not ok then
      fail("a text helper raised on random bytes")
    end
  end
  none_failed()
end)

T.test("replay skips malformed entries, never raises", function()
  local entries = {
    1,
    "x",
    {},
    { type = "message" },
    {
      type = "message",
      message = { role = "toolResult", toolName = "todo", details = { tasks = { { id = "bad" } }, nextId = 2 } },
    },
    cyclic,
  }
  local okr, replayed = pcall(core.replay, entries)
  if not okr then
    fail("replay raised: " .. tostring(replayed))
  elseif #replayed.tasks ~= 0 then
    fail("replay kept a bad snapshot")
  end

  none_failed()
end)

T.finish("hostile")
