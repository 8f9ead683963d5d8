-- tests/lua/shared_tables_spec.lua: tables shared many times through every entry point that
-- reads a Lua value. `t = {}; for i = 1, n do t = { t, t } end` is n + 1 tables but 2^(n+1)
-- values once copied; the reader used to copy every path and, at n = 40, the allocator
-- failed and the process aborted. Now the reader counts what it copies again from tables
-- it has already read (src/limits.rs, MAX_REPEATED_VALUES): every depth up to 40, in each
-- place a value is read (tool arguments, a snapshot's task fields and metadata, a shared
-- blockedBy, a replayed entry), gives an answer or a Lua error within a second. A table
-- shared a little (the same small table in two places) reads as if it were two.
-- Runs in every interpreter (scripts/test.sh, and under valgrind for Lua 5.4); by hand:
--   lua5.4 tests/lua/shared_tables_spec.lua      (also luajit, lua5.1)

local T = dofile((os.getenv("RPIV_ROOT") or ".") .. "/tests/harness.lua")
local core = require("rpiv_todo.core")

local H = {}

-- Every depth in the first place a value is read (metadata, or the arguments), the
-- depths around the budget (14 fits, 15 does not) and the deepest in the other places.
-- Under valgrind (20-50x slower) a sample of the depths, and a wider time limit.
H.VALGRIND = os.getenv("RPIV_VALGRIND") ~= nil
H.LIMIT = H.VALGRIND and 30 or 1
H.DEPTHS = {}
if H.VALGRIND then
  H.DEPTHS = { 1, 14, 15, 40 }
else
  for n = 1, 40 do
    H.DEPTHS[n] = n
  end
end
H.SAMPLE = { [1] = true, [14] = true, [15] = true, [40] = true }

function H.dag(n)
  local t = {}
  for _ = 1, n do
    t = { t, t }
  end
  return t
end

function H.task(id)
  return { id = id, subject = "task " .. id, status = "pending" }
end

-- The places a shared table can sit in a snapshot, each a state holding `dag`.
H.states = {
  metadata = function(dag)
    local t = H.task(1)
    t.metadata = { m = dag }
    return { tasks = { t }, nextId = 2 }
  end,
  ["a field of its own"] = function(dag)
    local t = H.task(1)
    t.extra = dag
    return { tasks = { t }, nextId = 2 }
  end,
  ["the same metadata in many tasks"] = function(dag)
    local tasks = {}
    for i = 1, 64 do
      tasks[i] = H.task(i)
      tasks[i].metadata = { m = dag }
    end
    return { tasks = tasks, nextId = 65 }
  end,
}

-- A shared blockedBy: one array of ids in every task (a DAG of ids, not of tables).
function H.shared_blocked_by(n)
  local tasks, deps = {}, {}
  for i = 1, n do
    deps[i] = i
  end
  for i = 1, n do
    tasks[i] = H.task(i)
  end
  for i = n + 1, 2 * n do
    tasks[i] = H.task(i)
    tasks[i].blockedBy = deps
  end
  return { tasks = tasks, nextId = 2 * n + 1 }
end

function H.entries(state)
  return {
    {
      type = "message",
      message = { role = "toolResult", toolName = "todo", details = { tasks = { H.task(9) }, nextId = 10 } },
    },
    { type = "message", message = { role = "toolResult", toolName = "todo", details = state } },
  }
end

H.scratch = T.tempdir()

-- Each entry point with a value `v` holding a shared table: a snapshot (state) or the
-- tool's arguments (args).
H.calls = {
  ["core.apply(nil, args)"] = function(v)
    return core.apply(nil, { action = "create", subject = "a", extra = v })
  end,
  ["core.apply(nil, args metadata)"] = function(v)
    return core.apply(nil, { action = "create", subject = "a", metadata = { m = v } })
  end,
  ["list:apply(args)"] = function(v)
    return core.list(nil):apply({ action = "create", subject = "a", extra = v })
  end,
  ["core.from_strict(args, list)"] = function(v)
    return core.from_strict({ action = "create", subject = "a", extra = v }, core.list(nil))
  end,
  ["core.from_strict(args)"] = function(v)
    return core.from_strict({ action = "create", subject = "a", extra = v })
  end,
  ["core.apply(state, args)"] = function(_, state)
    return core.apply(state, { action = "list" })
  end,
  ["core.list(state)"] = function(_, state)
    return core.list(state)
  end,
  ["list:replace(state)"] = function(_, state)
    return core.list(nil):replace(state)
  end,
  ["core.save(path, state)"] = function(_, state)
    return core.save(H.scratch .. "/list.json", state)
  end,
  ["core._overlay_layout(state)"] = function(_, state)
    return core._overlay_layout(state, 3)
  end,
  ["core.overlay_view(state)"] = function(_, state)
    return core.overlay_view(state, 3)
  end,
  ["core.replay(entries)"] = function(_, state)
    return core.replay(H.entries(state))
  end,
}

-- Run `f` once: an answer or a Lua error, within the time limit. Returns ok, the result.
function H.within(name, f)
  local start = os.clock()
  local ok, r = pcall(f)
  local spent = os.clock() - start
  T.ok(spent < H.LIMIT, name .. ": answered within " .. H.LIMIT .. " s (took " .. spent .. " s)")
  return ok, r
end

-- A tool call's answer, rejected or not: its text.
function H.text(r)
  if type(r) == "table" and type(r.content) == "table" and r.content[1] then
    return r.content[1].text
  end
end

local names = {}
for name in pairs(H.calls) do
  names[#names + 1] = name
end
table.sort(names)
local places = {}
for place in pairs(H.states) do
  places[#places + 1] = place
end
table.sort(places)

for _, name in ipairs(names) do
  local call = H.calls[name]
  T.test(name .. ": DAGs of depth 1 to 40 answer or raise within " .. H.LIMIT .. " s", function()
    for _, n in ipairs(H.DEPTHS) do
      for _, place in ipairs(places) do
        if place == "metadata" or (H.SAMPLE[n] and not H.VALGRIND) then
          local dag = H.dag(n)
          H.within(name .. " depth " .. n .. " in " .. place, function()
            return call(dag, H.states[place](dag))
          end)
        end
      end
    end
  end)
end

T.test("a DAG too large to copy is named in-band in a tool call, and the list is untouched", function()
  local list = core.list(nil)
  list:apply({ action = "create", subject = "first" })
  local before = list:state_json()
  local _, r = H.within("list:apply", function()
    return list:apply({ action = "create", subject = "a", extra = H.dag(40) })
  end)
  T.contains(H.text(r), "Error: extra")
  T.contains(H.text(r), "expected at most 64360 values repeated from shared tables")
  T.eq(list:state_json(), before, "the list")
end)

T.test("a snapshot holding a DAG too large to copy is a Lua error naming the field", function()
  local err = T.raises(function()
    core.list(H.states.metadata(H.dag(40)))
  end, "expected at most 64360 values repeated from shared tables")
  T.contains(err, "tasks[1].metadata.m")
end)

T.test("a replayed snapshot holding a DAG too large to copy is skipped for the older one", function()
  local _, state = H.within("core.replay", function()
    return core.replay(H.entries(H.states.metadata(H.dag(40))))
  end)
  T.eq(state.nextId, 10)
  T.eq(state.tasks[1].subject, "task 9")
end)

T.test("a shared blockedBy repeats its ids: a little is read, past the budget refused", function()
  local small = core.list(H.shared_blocked_by(20))
  T.eq(#small, 40)
  T.same(small:state().tasks[40].blockedBy, { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20 })
  local replayed = core.replay(H.entries(H.shared_blocked_by(20)))
  T.eq(#replayed.tasks, 40)
  -- 400 tasks sharing 400 ids: 160,000 ids, past the 64,360 a read may repeat.
  local big = H.shared_blocked_by(400)
  H.within("core.list", function()
    T.raises(function()
      core.list(big)
    end, "expected at most 64360 values repeated from shared tables")
  end)
  local _, r = H.within("core.replay", function()
    return core.replay(H.entries(big))
  end)
  T.eq(r.nextId, 10, "the older snapshot")
end)

T.test("a table shared a little reads as two copies of it", function()
  local meta = { k = { 1, 2 } }
  local tasks = { H.task(1), H.task(2) }
  tasks[1].metadata, tasks[2].metadata = meta, meta
  local list = core.list({ tasks = tasks, nextId = 3 })
  T.same(list:state().tasks[2].metadata, { k = { 1, 2 } })
  local r = core.apply(nil, { action = "create", subject = "s", metadata = { a = meta, b = meta } })
  T.same(r.details.tasks[1].metadata, { a = { k = { 1, 2 } }, b = { k = { 1, 2 } } })
end)

T.finish("shared_tables_spec")
