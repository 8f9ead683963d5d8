-- tests/lua/replay_copy_spec.lua: the native copy of a replayed snapshot held in Lua tables
-- (`raw::snapshot_table`, src/lua/raw/snapshot.rs). It copies each task table to a new one
-- in one pass of `lua_next`, reusing the entry's strings, and a `blockedBy` array in one
-- pass too, whatever part of the table (array or hash) its keys sit in. Whatever the copy
-- refuses goes to the general reading, which decides the same way; a snapshot that breaks
-- a rule makes the walk go on to the older entry. Every flavour gives the same answers.
--   luajit tests/lua/replay_copy_spec.lua      (also lua5.1, lua5.4)

local T = dofile((os.getenv("RPIV_ROOT") or ".") .. "/tests/harness.lua")
local H = {}

local core = require("rpiv_todo.core")

function H.entry(tasks, next_id)
  return {
    type = "message",
    message = { role = "toolResult", toolName = "todo", details = { tasks = tasks, nextId = next_id } },
  }
end

-- The entries: an older list (one task, "older"), then `tasks` as the newest snapshot.
function H.replay(tasks, next_id)
  local older = H.entry({ { id = 1, subject = "older", status = "pending" } }, 2)
  return core.replay({ older, H.entry(tasks, next_id or 9) })
end

-- An id array whose keys all sit in the hash part, set from the last to the first.
function H.backwards(ids)
  local t = {}
  for i = #ids, 1, -1 do
    t[i] = ids[i]
  end
  return t
end

T.test("the copy is a new table per task, with every field the entry had", function()
  local deps = { 1 }
  local tasks = {
    { id = 1, subject = "one", status = "completed", description = "d", activeForm = "Doing", owner = "me" },
    { id = 2, subject = "two", status = "in_progress", blockedBy = deps, metadata = { k = { 1, "x" } } },
  }
  local s = H.replay(tasks)
  T.same(s, {
    tasks = {
      { id = 1, subject = "one", status = "completed", description = "d", activeForm = "Doing", owner = "me" },
      { id = 2, subject = "two", status = "in_progress", blockedBy = { 1 }, metadata = { k = { 1, "x" } } },
    },
    nextId = 9,
  })
  T.ok(s.tasks[1] ~= tasks[1] and s.tasks[2].blockedBy ~= deps, "new tables, not the entry's")
  s.tasks[2].blockedBy[1] = 99
  T.eq(deps[1], 1, "the entry's blockedBy is untouched")
end)

T.test("blockedBy keys in the hash part, set backwards: copied in array order", function()
  local s = H.replay({
    { id = 1, subject = "a", status = "pending" },
    { id = 2, subject = "b", status = "pending" },
    { id = 3, subject = "c", status = "pending" },
    { id = 4, subject = "d", status = "pending", blockedBy = H.backwards({ 3, 1, 2 }) },
  })
  T.same(s.tasks[4].blockedBy, { 3, 1, 2 })
  T.eq(#s.tasks, 4, "the newest snapshot won")
end)

T.test("a blockedBy that is no array of ids: the older snapshot wins", function()
  local cases = {
    ["an extra key"] = function()
      local b = { 1 }
      b.x = 2
      return b
    end,
    ["a hole"] = function()
      return { 1, nil, 1 }
    end,
    ["a key past the length"] = function()
      local b = H.backwards({ 1, 1 })
      b[4] = 1
      return b
    end,
    ["a fractional id"] = function()
      return { 1.5 }
    end,
    ["a string id"] = function()
      return { "1" }
    end,
    ["an unknown id"] = function()
      return { 7 }
    end,
    ["itself"] = function()
      return { 2 }
    end,
    ["empty object"] = function()
      return { x = 1 }
    end,
    -- A border far past the keys: 29 keys, a length of 2^28. Nothing may be sized by it.
    ["keys at powers of two"] = function()
      local b = {}
      for k = 28, 0, -1 do
        b[2 ^ k] = 1
      end
      return b
    end,
  }
  for name, make in pairs(cases) do
    local s = H.replay({
      { id = 1, subject = "a", status = "pending" },
      { id = 2, subject = "b", status = "pending", blockedBy = make() },
    })
    T.eq(s.tasks[1].subject .. "/" .. #s.tasks, "older/1", name)
  end
end)

T.test("a status or subject of the wrong kind: the older snapshot wins, the entry unchanged", function()
  local cases = {
    { id = 2, subject = "b", status = 1 },
    { id = 2, subject = "b", status = "done" },
    { id = 2, subject = 3, status = "pending" },
    { id = 2, subject = "b", status = "pending", owner = true },
    { id = 2.5, subject = "b", status = "pending" },
    { id = 2, status = "pending" },
  }
  for i, t in ipairs(cases) do
    local s = H.replay({ t })
    T.eq(s.tasks[1].subject, "older", "case " .. i)
  end
  T.eq(cases[1].status, 1, "a number status stays a number in the entry")
end)

T.test("text that is not UTF-8 is refused; UTF-8 beyond ASCII is kept", function()
  T.eq(H.replay({ { id = 2, subject = "caf\233", status = "pending" } }).tasks[1].subject, "older")
  T.eq(H.replay({ { id = 2, subject = "café ✓", status = "pending" } }).tasks[1].subject, "café ✓")
end)

T.test("a field of its own is kept, through the general reading", function()
  local s = H.replay({ { id = 2, subject = "b", status = "pending", extra = { 1 } } })
  T.same(s.tasks[1], { id = 2, subject = "b", status = "pending", extra = { 1 } })
end)

T.test("nextId below the largest id is repaired as the reducer repairs it", function()
  T.eq(H.replay({ { id = 5, subject = "b", status = "pending" } }, 2).nextId, 6)
end)

T.finish()
