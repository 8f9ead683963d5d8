-- tests/lua/core_spec.lua: rpiv_todo.core's own contract, from a real interpreter against
-- the built module: bad input comes back in-band naming the field with the list untouched,
-- the same bad arguments get the same error on every path, nulls delete metadata keys, one
-- nesting rule wherever a value enters, and what a host's snapshot may hold. The recorded
-- traces are tests/lua/conformance_spec.lua's. By hand, from the crate root:
--   lua5.4 tests/lua/core_spec.lua      (also luajit, lua5.1)

local T = dofile((os.getenv("RPIV_ROOT") or ".") .. "/tests/harness.lua")
local json = dofile(T.root() .. "/tests/lua/json.lua")
local core = require("rpiv_todo.core")
local H = {}

-- Lua 5.3+ has an integer subtype; LuaJIT and 5.1 have doubles only.
H.integers = math.type ~= nil

function H.text(result)
  return result.content[1].text
end

-- One call on a list holding one task: the call must answer in-band, naming the error in
-- details.error, and leave the list as it was. Returns the reply text.
function H.rejected(params)
  local list = core.list()
  list:apply({ action = "create", subject = "keep me" })
  local before = list:state_json()
  local ok, result = pcall(list.apply, list, params)
  T.ok(ok, "a Lua error escaped: " .. tostring(result))
  T.ok(result.details.error ~= nil, "details.error is set")
  T.eq(H.text(result), "Error: " .. tostring(result.details.error), "the text is the error")
  T.eq(list:state_json(), before, "the list is untouched")
  T.eq(#result.details.tasks, 1, "the snapshot is the old list")
  T.eq(result.details.nextId, 2, "the snapshot's nextId")
  return H.text(result)
end

T.test("bad input comes back in-band naming the field, with the list untouched", function()
  local cyclic = {}
  cyclic.t = cyclic
  local cases = {
    {
      { action = "frob" },
      'Error: action: expected one of create, update, list, get, delete, clear, got string "frob"',
    },
    { {}, "Error: action: expected one of create, update, list, get, delete, clear, got nothing" },
    { { action = "get", id = 1.5 }, "Error: id: expected an integer id, got number 1.5" },
    { { action = "get", id = 0 / 0 }, "Error: id: expected a finite number, got NaN" },
    { { action = "get", id = 1 / 0 }, "Error: id: expected a finite number, got inf" },
    -- Lua 5.4 keeps 2^60 a float; LuaJIT and 5.1 hand it over as an integer.
    {
      { action = "get", id = 2 ^ 60 },
      H.integers and "Error: id: expected an integer id, got number 1.152921504606847e+18"
        or "Error: id: expected an integer id, got number 1152921504606846976",
    },
    { { action = "get", id = "1" }, 'Error: id: expected an integer id, got string "1"' },
    {
      { action = "update", id = 1, status = "done" },
      'Error: status: expected one of pending, in_progress, completed, deleted, got string "done"',
    },
    { { action = "create", subject = "a\255b" }, "Error: subject: expected UTF-8 text, got bytes that are not UTF-8" },
    { { action = "create", subject = print }, "Error: subject: expected a JSON value, got a function" },
    {
      { action = "create", subject = "x", blockedBy = { 1, nil, 3 } },
      "Error: blockedBy: expected an array (keys 1..n) or an object (string keys), got a table with other keys",
    },
    {
      { action = "create", subject = "x", metadata = { 1, a = 2 } },
      "Error: metadata: expected an array (keys 1..n) or an object (string keys), got a table with other keys",
    },
    -- A cyclic table stops where JSON text would (serde_json's 128 levels).
    {
      { action = "create", subject = "x", metadata = cyclic },
      "Error: metadata"
        .. string.rep(".t", 127)
        .. ": expected nesting at most 64 levels deep, got deeper nesting (a cyclic table?)",
    },
    {
      '{"action": ',
      "Error: arguments: expected a JSON object, got text that does not parse (EOF while parsing a value at line 1 column 11)",
    },
    { "[1]", "Error: arguments: expected an object, got an array" },
    { '"\255"', "Error: arguments: expected UTF-8 JSON text, got bytes that are not UTF-8" },
    { 42, "Error: arguments: expected a table or a JSON string, got a integer" },
    { true, "Error: arguments: expected a table or a JSON string, got a boolean" },
    { nil, "Error: arguments: expected a table or a JSON string, got a nil" },
    { '{"action":"list","includeDeleted":1}', "Error: includeDeleted: expected a boolean, got number 1" },
  }
  for n, case in ipairs(cases) do
    T.eq(H.rejected(case[1]), case[2], "case " .. n)
  end
end)

-- Fields are checked in one fixed order (action, id, subject, description, activeForm,
-- owner, status, blockedBy, addBlockedBy, removeBlockedBy, includeDeleted, metadata, then
-- unknown keys by name), so a call with several bad fields gets the same error from Lua
-- tables, from JSON text and from core.apply.
T.test("the same bad arguments get the same error on every path", function()
  local cases = {
    {
      '{"status":"done","id":"2","action":"update"}',
      { status = "done", id = "2", action = "update" },
      'Error: id: expected an integer id, got string "2"',
    },
    {
      '{"action":"update","status":"done","id":"2"}',
      { action = "update", status = "done", id = "2" },
      'Error: id: expected an integer id, got string "2"',
    },
    {
      '{"owner":1,"subject":2,"action":"create"}',
      { owner = 1, subject = 2, action = "create" },
      "Error: subject: expected a string, got number 2",
    },
    {
      '{"metadata":[1],"includeDeleted":1,"blockedBy":"x","action":"create"}',
      { metadata = { 1 }, includeDeleted = 1, blockedBy = "x", action = "create" },
      'Error: blockedBy: expected an array of integer ids, got string "x"',
    },
    {
      '{"id":"x","action":"frob"}',
      { id = "x", action = "frob" },
      'Error: action: expected one of create, update, list, get, delete, clear, got string "frob"',
    },
    {
      '{"id":"x"}',
      { id = "x" },
      "Error: action: expected one of create, update, list, get, delete, clear, got nothing",
    },
  }
  for _, case in ipairs(cases) do
    local text, args, want = case[1], case[2], case[3]
    local list = core.list()
    T.eq(H.text(list:apply(args)), want, "tables, " .. text)
    T.eq(json.decode(list:apply_json(text)).content[1].text, want, "JSON text, " .. text)
    T.eq(H.text((core.apply(nil, args))), want, "core.apply, " .. text)
  end
end)

T.test("nulls from core.null and from JSON text delete metadata keys", function()
  local list = core.list()
  list:apply({ action = "create", subject = "m", metadata = { a = 1, b = 2, c = 3 } })
  list:apply({ action = "update", id = 1, metadata = { a = core.null } })
  list:apply('{"action":"update","id":1,"metadata":{"b":null}}')
  T.eq(
    list:state_json(),
    '{"tasks":[{"id":1,"subject":"m","status":"pending","metadata":{"c":3}}],"nextId":2}',
    "state"
  )
end)

T.test("integral floats are integer ids", function()
  local list = core.list()
  list:apply({ action = "create", subject = "a" })
  T.eq(H.text(list:apply({ action = "get", id = 1.0 })), "#1 [pending] a")
end)

T.test("the table path echoes the caller's own params table", function()
  local params = { action = "list" }
  local result = core.list():apply(params)
  T.ok(rawequal(result.details.params, params), "the same table")
  T.eq(result.details.action, "list")
end)

T.test("empty arrays carry the array metatable", function()
  local result = core.list():apply({ action = "list" })
  T.ok(rawequal(getmetatable(result.details.tasks), core.array_mt), "tasks' metatable")
  T.eq(core.array_mt.__jsontype, "array")
end)

T.test("a malformed state handed to the API raises a Lua error naming the field", function()
  T.raises(function()
    core.apply({ tasks = { { id = 1, subject = "s", status = "done" } }, nextId = 2 }, { action = "list" })
  end, "rpiv_todo.core.apply: tasks[1].status: expected one of pending, in_progress, completed, deleted")
end)

T.test("a rejected pure apply returns the same state table", function()
  local _, s1 = core.apply(nil, { action = "create", subject = "a" })
  local r, s2 = core.apply(s1, { action = "delete", id = 9 })
  T.ok(rawequal(s1, s2), "the same table")
  T.eq(r.details.error, "#9 not found")
end)

T.test("replay from tables reads only the snapshot of the winning entry", function()
  -- The echoed params hold something JSON cannot say; the snapshot is still good.
  local entry = {
    type = "message",
    message = {
      role = "toolResult",
      toolName = "todo",
      details = {
        action = "create",
        params = { action = "create", f = print },
        tasks = { { id = 1, subject = "a", status = "pending" } },
        nextId = 2,
      },
    },
  }
  T.eq(#core.replay({ entry }).tasks, 1)
end)

-- Nesting `levels` tables deep, {} innermost, as a table and as JSON text.
function H.nest_table(levels)
  local m = {}
  for _ = 2, levels do
    m = { k = m }
  end
  return m
end

function H.nest_json(levels)
  return string.rep('{"k":', levels - 1) .. "{}" .. string.rep("}", levels - 1)
end

function H.entry_tables(details)
  return { { type = "message", message = { role = "toolResult", toolName = "todo", details = details } } }
end

function H.entry_json(state_json)
  return '[{"type":"message","message":{"role":"toolResult","toolName":"todo","details":' .. state_json .. "}}]"
end

function H.json_text(reply)
  return reply:match('"text":"(.-)"}') or reply
end

-- One nesting rule, counted from the value (64 levels), wherever a value enters. Metadata
-- at the limit is accepted on both argument paths and everything the tool wrote reads back
-- (core.replay from tables and JSON text, core.list, core.apply, list:replace); one level
-- more is refused in-band on both paths with the same error, and in a snapshot a host hands
-- over it is a Lua error naming the field.
T.test("nesting at the limit is accepted and read back; one past it is refused on both paths", function()
  local lines = {}
  local function say(s)
    lines[#lines + 1] = s
  end
  for _, levels in ipairs({ 64, 65 }) do
    local list = core.list()
    local r = list:apply({ action = "create", subject = "deep", metadata = H.nest_table(levels) })
    say(levels .. " tables: " .. H.text(r))
    local jlist = core.list()
    say(
      levels
        .. " json: "
        .. H.json_text(
          jlist:apply_json('{"action":"create","subject":"deep","metadata":' .. H.nest_json(levels) .. "}")
        )
    )
    -- An unknown key obeys the same rule.
    say(levels .. " unknown key, tables: " .. H.text(core.list():apply({ action = "list", x = H.nest_table(levels) })))
    say(
      levels
        .. " unknown key, json: "
        .. H.json_text(core.list():apply_json('{"action":"list","x":' .. H.nest_json(levels) .. "}"))
    )
    if levels == 64 then
      for _, named in ipairs({ { "json", jlist }, { "tables", list } }) do
        local l = named[2]
        local n = {
          #core.replay(H.entry_tables(r.details)).tasks,
          #core.replay(H.entry_tables(l:state())).tasks,
          #core.replay(H.entry_json(l:state_json())).tasks,
          #core.list(l:state()),
          #core.list(l:state_json()),
          #select(2, core.apply(l:state(), { action = "list" })).tasks,
        }
        local copy = core.list()
        copy:replace(l:state())
        n[#n + 1] = #copy
        say("64 read back (" .. named[1] .. "): " .. table.concat(n, ","))
      end
    else
      -- A host's snapshot one level past the limit: a Lua error naming the field.
      local state = {
        tasks = { { id = 1, subject = "s", status = "pending", metadata = H.nest_table(levels) } },
        nextId = 2,
      }
      local ok, err = pcall(core.list, state)
      say(
        "65 core.list(table): " .. tostring(ok) .. " " .. tostring(tostring(err):match("tasks%[1%]%.metadata: [^\n]*"))
      )
      local ok2, err2 = pcall(
        core.list,
        '{"tasks":[{"id":1,"subject":"s","status":"pending","metadata":' .. H.nest_json(levels) .. '}],"nextId":2}'
      )
      say(
        "65 core.list(json): " .. tostring(ok2) .. " " .. tostring(tostring(err2):match("tasks%[1%]%.metadata: [^\n]*"))
      )
      say("65 replay skips it: " .. #core.replay(H.entry_tables(state)).tasks)
    end
  end
  local refused = "Error: metadata: expected nesting at most 64 levels deep, got deeper nesting"
  local refused_x = "Error: x: expected nesting at most 64 levels deep, got deeper nesting"
  T.same(lines, {
    "64 tables: Created #1: deep (pending)",
    "64 json: Created #1: deep (pending)",
    "64 unknown key, tables: No tasks",
    "64 unknown key, json: No tasks",
    "64 read back (json): 1,1,1,1,1,1,1",
    "64 read back (tables): 1,1,1,1,1,1,1",
    "65 tables: " .. refused,
    "65 json: " .. refused,
    "65 unknown key, tables: " .. refused_x,
    "65 unknown key, json: " .. refused_x,
    "65 core.list(table): false tasks[1].metadata: expected nesting at most 64 levels deep, got deeper nesting",
    "65 core.list(json): false tasks[1].metadata: expected nesting at most 64 levels deep, got deeper nesting",
    "65 replay skips it: 0",
  })
end)

T.finish("core_spec")
