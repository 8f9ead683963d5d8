-- tests/lua/replay_sparse_spec.lua: `core.replay` over entries tables that are not
-- sequences, and over entries that are not tables. Under LuaJIT the walk is Lua (`lua/rpiv_todo/native/replay_walk.lua`): it walks
-- down from the table's length and hands a table with more than 64 holes to the native
-- walk, which counts the keys that are there. A border far past the entries (keys at
-- powers of two: a length of 2^28 with 29 entries) must neither hang nor lose the list;
-- every flavour gives the same answers.
--   luajit tests/lua/replay_sparse_spec.lua      (also lua5.1, lua5.4)

local T = dofile((os.getenv("RPIV_ROOT") or ".") .. "/tests/harness.lua")
local H = {}

local core = require("rpiv_todo.core")

function H.todo(subject, id)
  return {
    type = "message",
    message = {
      role = "toolResult",
      toolName = "todo",
      details = { tasks = { { id = id, subject = subject, status = "pending" } }, nextId = id + 1 },
    },
  }
end

function H.other(i)
  return { type = "message", message = { role = "user", content = "turn " .. i } }
end

-- The subjects and nextId of a replayed state, as one line.
function H.shown(state)
  local out = {}
  for i, t in ipairs(state.tasks) do
    out[i] = t.id .. ":" .. t.subject
  end
  return table.concat(out, ",") .. " next " .. state.nextId
end

T.test("keys at powers of two up to 2^28: the newest todo result is found, in no time", function()
  local entries = {}
  for k = 28, 1, -1 do
    entries[2 ^ k] = H.other(k)
  end
  entries[1] = H.todo("the only list", 4)
  T.eq(H.shown(core.replay(entries)), "4:the only list next 5")
  -- A todo result far up the border is the newest.
  entries[2 ^ 20] = H.todo("newer", 7)
  T.eq(H.shown(core.replay(entries)), "7:newer next 8")
end)

T.test("no todo result among sparse entries: the empty list", function()
  local entries = {}
  for k = 28, 0, -1 do
    entries[2 ^ k] = H.other(k)
  end
  T.eq(H.shown(core.replay(entries)), " next 1")
end)

-- The walk reads an entry's fields before it checks their types (see `newest` in
-- replay_walk.lua); a value that cannot be indexed makes it walk again with care. Either
-- way only tables are entries and messages: a userdata that answers every field like a
-- todo result is passed over, as are numbers, strings, functions and messages that are
-- not tables.
T.test("entries and messages that are not tables are passed over", function()
  local fake = {
    type = "message",
    message = { role = "toolResult", toolName = "todo", details = H.todo("fake", 9).message.details },
  }
  local u = io.tmpfile()
  debug.setmetatable(u, { __index = fake })
  local odd = {
    5,
    true,
    false,
    "message",
    print,
    coroutine.create(function() end),
    u,
    { type = "message", message = 5 },
    { type = "message", message = "toolResult" },
    { type = "message", message = u },
    { type = "message", message = false },
  }
  for i = 1, #odd do
    local entries = { H.todo("the list", 4), H.other(1), odd[i], H.other(2) }
    T.eq(H.shown(core.replay(entries)), "4:the list next 5", "odd entry " .. i)
  end
  -- All of them at once, newest first, and a userdata that is a todo result's message.
  local entries = { H.todo("the list", 4) }
  for i = 1, #odd do
    entries[#entries + 1] = odd[i]
  end
  T.eq(H.shown(core.replay(entries)), "4:the list next 5")
  -- A table entry that raises when read still raises (once walked with care).
  local raising = setmetatable({}, {
    __index = function()
      error("entry refuses to be read")
    end,
  })
  local ok, err = pcall(core.replay, { H.todo("the list", 4), raising })
  T.eq(ok, false)
  T.eq(tostring(err):find("entry refuses to be read", 1, true) ~= nil, true, tostring(err))
  -- An error raised once (a host cancelling, say) is raised, not walked past: only the
  -- error of indexing what cannot be indexed makes the walk start again.
  for _, raised in ipairs({ { cancelled = true }, "cancelled once" }) do
    local armed = true
    local once = setmetatable({}, {
      __index = function()
        if armed then
          armed = false
          error(raised, 0)
        end
      end,
    })
    ok, err = pcall(core.replay, { H.todo("the list", 4), 5, once })
    T.eq(ok, false, "raised once: " .. tostring(raised))
    T.eq(err, raised)
  end
end)

T.finish()
