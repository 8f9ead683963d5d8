-- tests/lua/strict_spec.lua: the strict form (todo.tool({ strict = true })) accepts and
-- refuses exactly what the normal form does, because the core converts it (serde_json)
-- and then runs it like any other call. Pinned here: metadata integers past 2^53 and
-- 2^63 stay exact, a raw DEL byte is text, a lone surrogate escape is refused, each
-- through the table path and the JSON text path. Runs in every interpreter; by hand:
--   lua5.4 tests/lua/strict_spec.lua      (also luajit, lua5.1)

local T = dofile((os.getenv("RPIV_ROOT") or ".") .. "/tests/harness.lua")

local todo = require("rpiv_todo")
local core = require("rpiv_todo.core")
local tool = require("rpiv_todo.tool")
local session = require("rpiv_todo.session")

local strict = todo.tool({ strict = true })
local normal = todo.tool()

T.before_each(function()
  session.reset()
end)

-- A strict call as a model in strict mode writes it: every property present.
local function strict_table(fields)
  local out = {}
  for _, name in ipairs(tool.PROPERTY_ORDER) do
    out[name] = core.null
  end
  for k, v in pairs(fields) do
    out[k] = v
  end
  return out
end

-- The same call as JSON text: every property present, null where not given. `fields`
-- holds each property's JSON text.
local function strict_text(fields)
  local parts = {}
  for _, name in ipairs(tool.PROPERTY_ORDER) do
    parts[#parts + 1] = '"' .. name .. '":' .. (fields[name] or "null")
  end
  return "{" .. table.concat(parts, ",") .. "}"
end

local function tasks_json(id)
  local text = todo.session(id).list:state_json()
  return text:match('"tasks":(%[.*%])')
end

-- The metadata object, as JSON text, with integers no double holds.
local BIG = '{"n":9007199254740993,"m":18446744073709551615,"k":-9223372036854775807}'

T.test("metadata integers past 2^53 and 2^63 are stored exactly in both forms, on both paths", function()
  local want = '[{"id":1,"subject":"a","status":"pending","metadata":' .. BIG .. "}]"
  local r = normal.execute('{"action":"create","subject":"a","metadata":' .. BIG .. "}", { session = "normal" })
  T.eq(r.content[1].text, "Created #1: a (pending)", "normal form, JSON text")
  T.eq(tasks_json("normal"), want, "normal form keeps them exact")
  r = strict.execute(strict_table({ action = "create", subject = "a", metadata = BIG }), { session = "table" })
  T.eq(r.content[1].text, "Created #1: a (pending)", "strict form, table")
  T.eq(tasks_json("table"), want, "strict form from a table keeps them exact")
  local text = strict_text({ action = '"create"', subject = '"a"', metadata = string.format("%q", BIG) })
  r = strict.execute(text, { session = "text" })
  T.eq(r.content[1].text, "Created #1: a (pending)", "strict form, JSON text")
  T.eq(tasks_json("text"), want, "strict form from JSON text keeps them exact")
  -- An update merges into the exact values and keeps them.
  strict.execute(strict_table({ action = "update", id = 1, metadata = '{"x":1}' }), { session = "table" })
  T.eq(
    tasks_json("table"),
    '[{"id":1,"subject":"a","status":"pending","metadata":{"n":9007199254740993,'
      .. '"m":18446744073709551615,"k":-9223372036854775807,"x":1}}]',
    "merged, still exact"
  )
end)

T.test("a raw DEL byte is text in both forms, on both paths", function()
  local function check(result, id, what)
    T.eq(result.content[1].text, "Created #1: ab (pending)", what .. ": accepted (the reply drops DEL)")
    local task = todo.session(id):state().tasks[1]
    T.eq(task.subject, "a\127b", what .. ": subject stored as given")
    T.eq(task.metadata.k, "x\127y", what .. ": metadata stored as given")
  end
  check(
    normal.execute('{"action":"create","subject":"a\127b","metadata":{"k":"x\127y"}}', { session = "n" }),
    "n",
    "normal form, JSON text"
  )
  check(
    strict.execute(strict_table({ action = "create", subject = "a\127b", metadata = '{"k":"x\127y"}' }), {
      session = "t",
    }),
    "t",
    "strict form, table"
  )
  local text = strict_text({ action = '"create"', subject = '"a\127b"', metadata = '"{\\"k\\":\\"x\127y\\"}"' })
  check(strict.execute(text, { session = "j" }), "j", "strict form, JSON text")
end)

T.test("a lone surrogate escape is refused in both forms, on both paths, and nothing is stored", function()
  local r = normal.execute('{"action":"create","subject":"a","metadata":{"k":"\\ud800"}}', { session = "n" })
  T.eq(
    r.details.error,
    "arguments: expected a JSON object, got text that does not parse"
      .. " (unexpected end of hex escape at line 1 column 57)",
    "normal form, JSON text"
  )
  r = strict.execute(strict_table({ action = "create", subject = "a", metadata = '{"k":"\\ud800"}' }), {
    session = "t",
  })
  T.eq(
    r.content[1].text,
    "Error: metadata: expected a JSON object written as text, got text that is not JSON"
      .. " (unexpected end of hex escape at line 1 column 13)",
    "strict form, table: the metadata text"
  )
  local text = strict_text({ action = '"create"', subject = '"a"', metadata = '"{\\"k\\":\\"\\\\ud800\\"}"' })
  r = strict.execute(text, { session = "j" })
  T.eq(
    r.details.error,
    "metadata: expected a JSON object written as text, got text that is not JSON"
      .. " (unexpected end of hex escape at line 1 column 13)",
    "strict form, JSON text: the metadata text"
  )
  r = strict.execute(strict_text({ action = '"create"', subject = '"a\\ud83d"' }), { session = "j" })
  T.contains(r.details.error, "arguments: expected a JSON object, got text that does not parse (", "the call's text")
  for _, id in ipairs({ "n", "t", "j" }) do
    T.eq(#todo.session(id):state().tasks, 0, id .. ": nothing stored")
  end
end)

T.test("a rejected strict call has the envelope of every call: snapshot, error, arguments as given", function()
  local s = todo.session("env")
  s:execute({ action = "create", subject = "Keep", metadata = { keep = 1 } })
  local heard = 0
  todo.listen(function(event)
    heard = heard + (event == "executed" and 1 or 0)
  end)
  local call = strict_table({ action = "update", id = 1, metadata = "[1]" })
  local r = strict.execute(call, { session = "env" })
  T.eq(r.content[1].text, "Error: metadata: expected a JSON object written as text, got an array", "reply")
  T.eq(r.details.error, "metadata: expected a JSON object written as text, got an array", "details.error")
  T.eq(r.details.action, "update", "details.action")
  T.eq(r.details.params, call, "details.params: the arguments themselves")
  T.eq(r.details.nextId, 2, "details.nextId")
  T.eq(r.details.tasks[1].subject, "Keep", "details.tasks: the list as it is")
  T.eq(heard, 1, "listeners hear the call")
  r = strict.execute('{"action":"update","id":1,"metadata":"7"}', { session = "env" })
  T.eq(r.details.error, "metadata: expected a JSON object written as text, got a number", "JSON text")
  T.eq(r.details.params.metadata, "7", "JSON text echoed as the value it spells")
  T.eq(r.details.params.id, 1, "id echoed")
  T.eq(s:state().tasks[1].metadata.keep, 1, "list unchanged")
  -- A successful call's result is the normal form's, its echo the converted call.
  r = strict.execute(strict_table({ action = "update", id = 1, metadata = '{"keep":null}' }), { session = "env" })
  T.eq(r.content[1].text, "Updated #1", "reply")
  T.eq(r.details.params.metadata.keep, core.null, "the metadata text's null kept in the echo")
  T.eq(r.details.params.owner, nil, "nulls not given")
  T.eq(s:state().tasks[1].metadata, nil, "key deleted, empty record dropped")
  -- What the strict form cannot read is reported as the normal form reports it.
  T.eq(strict.execute("{", { session = "env" }).details.error, normal.execute("{").details.error, "bad text")
  T.eq(strict.execute(42, { session = "env" }).details.error, normal.execute(42).details.error, "a number")
  local deep = ("["):rep(70) .. ("]"):rep(70)
  T.eq(
    strict.execute(strict_table({ action = "update", id = 1, metadata = '{"d":' .. deep .. "}" })).content[1].text,
    normal.execute('{"action":"update","id":1,"metadata":{"d":' .. deep .. "}}").content[1].text,
    "nesting past the limit: the normal form's check"
  )
end)

T.test("from_strict: the conversion alone", function()
  local out, err = tool.from_strict(strict_table({
    action = "create",
    subject = "S",
    metadata = '{"s":"a\\u00e9\\ud83d\\ude00\\n","n":-1.5e2,"t":true,"z":null,"a":[],"o":{}}',
  }))
  T.eq(err, nil, "no error")
  T.eq(out.action, "create", "action")
  T.eq(out.subject, "S", "subject")
  T.eq(out.owner, nil, "null: not given")
  T.eq(out.metadata.s, "a\195\169\240\159\152\128\n", "string escapes")
  T.eq(out.metadata.n, -150, "number")
  T.eq(out.metadata.t, true, "true")
  T.eq(out.metadata.z, core.null, "null kept inside metadata")
  T.eq(getmetatable(out.metadata.a), core.array_mt, "empty array marked")
  T.eq(next(out.metadata.o), nil, "empty object")
  out, err = tool.from_strict('{"action":"list","metadata":"  null "}')
  T.same(out, { action = "list" }, "JSON text; the text null is no metadata")
  T.eq(err, nil, "no error")
  out, err = tool.from_strict({ action = "update", id = 1, metadata = "[]" })
  T.eq(out, nil, "refused")
  T.eq(err, "metadata: expected a JSON object written as text, got an array", "error names the field")
  T.eq(tool.from_strict("not json"), "not json", "unreadable text is handed back")
  T.raises(function()
    core.from_strict({ action = "list" }, {})
  end, "rpiv_todo.core.from_strict: list: expected a core.list handle or nil, got table")
end)

-- A recorded call in the strict form (metadata as the recorded JSON text), or nil when the
-- strict form cannot say it: a property outside the schema, a null (strict nulls mean
-- "not given"), metadata that is no object.
local function strict_of(params, source)
  if type(params) ~= "table" then
    return nil
  end
  local known = {}
  for _, name in ipairs(tool.PROPERTY_ORDER) do
    known[name] = true
  end
  local out = strict_table({})
  for k, v in pairs(params) do
    if not known[k] or v == core.null then
      return nil
    end
    if k == "metadata" then
      if type(v) ~= "table" then
        return nil
      end
      v = source(v)
      if v:sub(1, 1) ~= "{" then
        return nil
      end
    end
    out[k] = v
  end
  return out
end

T.test("every recorded call in the strict form gives the recorded reply, bound or not", function()
  local json = dofile(T.root() .. "/tests/lua/json.lua")
  local traces = json.decode_lines(T.read(T.fixture("reducer-traces.jsonl")), core.null)
  local dir = T.tempdir()
  local calls = 0
  for n, trace in ipairs(traces) do
    local list, bound = core.list(), core.list()
    local file = dir .. "/trace" .. n .. ".json"
    bound:bind(file)
    local last
    for i, step in ipairs(trace.value.steps) do
      local text = trace.source(step.params)
      local at = trace.value.name .. " step " .. i .. ": " .. text
      local call = strict_of(step.params, trace.source)
      T.ok(call ~= nil, "a recorded call the strict form cannot say, " .. at)
      local got = core.from_strict(call, list)
      local saved = core.from_strict(call, bound)
      T.same(got.details.params, step.params, "the normal form echoed, " .. at)
      calls = calls + 1
      T.eq(got.content[1].text, step.content, "reply, " .. at)
      T.same(got.details.tasks, step.details.tasks, "tasks, " .. at)
      T.eq(saved.content[1].text, step.content, "reply on a bound list, " .. at)
      last = step.details
    end
    -- What the bound list's replies said is what its file holds.
    local fresh = core.list()
    fresh:bind(file)
    T.eq(fresh:sync(), "reloaded", "the file read, " .. trace.value.name)
    T.same(fresh:state(), { tasks = last.tasks, nextId = last.nextId }, "the file, " .. trace.value.name)
  end
  T.eq(calls, 6825, "steps")
end)

T.finish()
