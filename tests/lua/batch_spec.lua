-- tests/lua/batch_spec.lua: `tasks`, several creates or updates in one call (this
-- project's extension, docs/deviations.md), through every path a host uses: tables, JSON
-- text, the pure core.apply, the strict form and a session. All or nothing, one reply line
-- per change, a bad item named with its field. Runs in every interpreter; by hand:
--   lua5.4 tests/lua/batch_spec.lua      (also luajit, lua5.1)

local T = dofile((os.getenv("RPIV_ROOT") or ".") .. "/tests/harness.lua")
local H = {}

local has_cjson, cjson = pcall(require, "cjson")
H.json = has_cjson and cjson or dofile(T.root() .. "/tests/lua/json.lua")

local todo = require("rpiv_todo")
local core = require("rpiv_todo.core")

T.before_each(function()
  todo.sessions.reset()
  todo.setup({ locale = "en" })
end)

H.CREATE = {
  action = "create",
  tasks = { { subject = "Write the parser" }, { subject = "Test it", blockedBy = { 1 }, activeForm = "Testing it" } },
}
H.CREATE_TEXT = '{"action":"create","tasks":[{"subject":"Write the parser"},'
  .. '{"subject":"Test it","blockedBy":[1],"activeForm":"Testing it"}]}'
H.CREATED = "Created #1: Write the parser (pending)\nCreated #2: Test it (pending)"
H.NEXT = '{"action":"update","tasks":[{"id":1,"status":"completed"},{"id":2,"status":"in_progress"}]}'
H.NEXT_REPLY = "Updated #1 (pending → completed)\nUpdated #2 (pending → in_progress)"

T.test("a batch through tables, JSON text and core.apply: one line per change", function()
  local list = core.list()
  local result = list:apply(H.CREATE)
  T.eq(result.content[1].text, H.CREATED, "tables")
  T.eq(#result.details.tasks, 2, "two tasks")
  T.eq(result.details.tasks[2].blockedBy[1], 1, "the second waits for the first")
  T.eq(result.details.nextId, 3, "nextId")
  T.eq(list:apply(H.json.decode(H.NEXT)).content[1].text, H.NEXT_REPLY, "update, tables")

  local json_list = core.list()
  local out = H.json.decode(json_list:apply_json(H.CREATE_TEXT))
  T.eq(out.content[1].text, H.CREATED, "JSON text")
  out = H.json.decode(json_list:apply_json(H.NEXT))
  T.eq(out.content[1].text, H.NEXT_REPLY, "update, JSON text")
  T.eq(out.details.tasks[1].status, "completed", "#1 completed")
  T.eq(out.details.tasks[2].status, "in_progress", "#2 in progress")

  local pure, state = core.apply(nil, H.CREATE_TEXT)
  T.eq(pure.content[1].text, H.CREATED, "core.apply")
  pure = core.apply(state, H.NEXT)
  T.eq(pure.content[1].text, H.NEXT_REPLY, "core.apply update")
end)

T.test("a batch with one bad item changes nothing and names the item and field", function()
  local s = todo.session("bad")
  s:execute(H.CREATE)
  local before = H.json.encode(s:state().tasks)
  for _, case in ipairs({
    {
      '{"action":"update","tasks":[{"id":1,"status":"in_progress"},{"id":2,"status":"done"}]}',
      'tasks[2].status: expected one of pending, in_progress, completed, deleted, got string "done"',
    },
    {
      { action = "update", tasks = { { id = 1, status = "completed" }, { id = 1, status = "in_progress" } } },
      "tasks[2]: illegal transition completed → in_progress",
    },
    {
      { action = "create", tasks = { { subject = "C" }, { subject = 5 } } },
      "tasks[2].subject: expected a string, got number 5",
    },
    { { action = "create", tasks = { { subject = "C" }, { owner = "x" } } }, "tasks[2]: subject required for create" },
    { { action = "update", tasks = { { id = 9, status = "completed" } } }, "tasks[1]: #9 not found" },
    {
      { action = "create", subject = "A", tasks = { { subject = "B" } } },
      "tasks: a task's fields go inside its item, but subject was given beside tasks",
    },
    { { action = "list", tasks = { { id = 1 } } }, "tasks: only create and update take several tasks, not list" },
  }) do
    local result = s:execute(case[1])
    T.eq(result.content[1].text, "Error: " .. case[2], "reply")
    T.eq(result.details.error, case[2], "details.error")
    T.eq(H.json.encode(s:state().tasks), before, "the list is untouched")
  end
end)

T.test("a single-task call is answered as before", function()
  local s = todo.session("single")
  T.eq(s:execute({ action = "create", subject = "A" }).content[1].text, "Created #1: A (pending)")
  T.eq(
    s:execute({ action = "update", id = 1, status = "in_progress" }).content[1].text,
    "Updated #1 (pending → in_progress)"
  )
end)

T.test("the strict form takes a batch: every item field present, null for not given", function()
  local strict = todo.tool({ strict = true })
  local item = function(fields)
    local out = {}
    for _, name in ipairs(require("rpiv_todo.tool").TASK_PROPERTY_ORDER) do
      out[name] = core.null
    end
    for k, v in pairs(fields) do
      out[k] = v
    end
    return out
  end
  local call = { tasks = { item({ subject = "A", metadata = '{"k":1}' }), item({ subject = "B" }) } }
  for _, name in ipairs(require("rpiv_todo.tool").PROPERTY_ORDER) do
    if call[name] == nil then
      call[name] = core.null
    end
  end
  call.action = "create"
  local result = strict.execute(call, { session = "strict" })
  T.eq(result.content[1].text, "Created #1: A (pending)\nCreated #2: B (pending)", "reply")
  T.eq(result.details.tasks[1].metadata.k, 1, "metadata text decoded in an item")
  call.tasks[2].metadata = "[1]"
  result = strict.execute(call, { session = "strict" })
  T.eq(result.content[1].text, "Error: tasks[2].metadata: expected a JSON object written as text, got an array")
  T.eq(#todo.session("strict"):state().tasks, 2, "unchanged")
end)

T.test("render_call counts a batch; render_result shows its lines", function()
  local spec = todo.tool()
  local s = todo.session("render")
  T.eq(spec.render_call(H.CREATE, s:state()), "+ create ×2")
  local result = s:execute(H.CREATE)
  T.eq(spec.render_result(result), "Created #1: Write the parser (pending); Created #2: Test it (pending)")
end)

T.finish()
