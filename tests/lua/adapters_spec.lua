-- tests/lua/adapters_spec.lua: the avante.nvim, codecompanion.nvim and ACP adapters, called
-- the way those hosts call them, from a plain interpreter (luajit, lua5.1, lua5.4) and from
-- Neovim (tests/nvim/adapters_spec.lua runs this file too). Run from the crate root:
--   luajit tests/lua/adapters_spec.lua
-- Argument shapes: avante calls func(input, opts) with the decoded JSON arguments and
-- opts = { on_log, on_complete, session_ctx, tool_use_id, streaming }; codecompanion calls
-- cmds[i](self, args, opts) with opts = { input, output_cb } and then
-- output.success(self, stdout, meta) (v18+) or output.success(self, tools, cmd, stdout).
-- Expected texts come from the content-string and error tables of the TypeScript
-- original (rpiv-todo).

local T = dofile((os.getenv("RPIV_ROOT") or ".") .. "/tests/harness.lua")

local todo = require("rpiv_todo")
local avante = require("rpiv_todo.adapters.avante")
local codecompanion = require("rpiv_todo.adapters.codecompanion")
local acp = require("rpiv_todo.adapters.acp")

T.before_each(function()
  todo.sessions.reset()
  todo.setup({ locale = "en" })
end)

-- What avante passes as the second argument of a tool's func.
function T.avante_opts(extra)
  local calls = { log = {}, completed = 0 }
  local opts = {
    on_log = function(line)
      calls.log[#calls.log + 1] = line
    end,
    on_complete = function()
      calls.completed = calls.completed + 1
    end,
    session_ctx = {},
    tool_use_id = "toolu_01",
    streaming = false,
  }
  for k, v in pairs(extra or {}) do
    opts[k] = v
  end
  return opts, calls
end

-- A stand-in for codecompanion's chat buffer: records what the model would be sent.
function T.chat()
  local chat = { outputs = {} }
  function chat:add_tool_output(tool, text)
    self.outputs[#self.outputs + 1] = { tool = tool, text = text }
  end
  return chat
end

function T.field(fields, name)
  for _, f in ipairs(fields) do
    if f.name == name then
      return f
    end
  end
  error("no field " .. name, 2)
end

-- ---------------------------------------------------------------------------
-- The schema every host registers, and its strict-mode form
-- ---------------------------------------------------------------------------

-- Paths of empty tables: an empty Lua table has no JSON kind of its own (vim.json writes
-- `[]`, cjson `{}`), so a schema must hold none.
function T.empty_tables(v, path, out)
  out = out or {}
  if type(v) == "table" then
    if next(v) == nil then
      out[#out + 1] = path
    end
    for k, x in pairs(v) do
      T.empty_tables(x, path .. "." .. tostring(k), out)
    end
  end
  return out
end

-- OpenAI's strict-mode rules for a function's parameters, as a list of violations.
T.STRICT_KEYWORDS = {
  type = true,
  properties = true,
  required = true,
  additionalProperties = true,
  items = true,
  enum = true,
  anyOf = true,
  description = true,
}
function T.strict_violations(schema, path, out)
  out = out or {}
  for k in pairs(schema) do
    if not T.STRICT_KEYWORDS[k] then
      out[#out + 1] = path .. ": keyword " .. k .. " is not supported"
    end
  end
  local types = type(schema.type) == "table" and schema.type or { schema.type }
  local is_object = false
  for _, t in ipairs(types) do
    is_object = is_object or t == "object"
  end
  if is_object then
    if schema.additionalProperties ~= false then
      out[#out + 1] = path .. ": additionalProperties must be false"
    end
    local required = {}
    for _, name in ipairs(schema.required or {}) do
      required[name] = true
    end
    for name, prop in pairs(schema.properties or {}) do
      if not required[name] then
        out[#out + 1] = path .. ": " .. name .. " is not in required"
      end
      T.strict_violations(prop, path .. "." .. name, out)
    end
    if schema.properties == nil then
      out[#out + 1] = path .. ": an object needs properties"
    end
  end
  if schema.items then
    T.strict_violations(schema.items, path .. "[]", out)
  end
  for i, alt in ipairs(schema.anyOf or {}) do
    T.strict_violations(alt, path .. ".anyOf[" .. i .. "]", out)
  end
  return out
end

T.test("the tool's schemas hold no empty table, so every Lua JSON encoder writes the same JSON", function()
  T.eq(table.concat(T.empty_tables(todo.tool().parameters, "parameters"), ", "), "", "normal form")
  T.eq(table.concat(T.empty_tables(todo.tool({ strict = true }).parameters, "parameters"), ", "), "", "strict form")
  local metadata = todo.tool().parameters.properties.metadata
  T.eq(metadata.type, "object", "metadata type")
  T.eq(metadata.additionalProperties, true, "metadata takes any keys")
  T.eq(metadata.patternProperties, nil, "no patternProperties")
end)

T.test("the strict form follows OpenAI's strict rules; the normal form does not", function()
  local strict = todo.tool({ strict = true })
  T.eq(table.concat(T.strict_violations(strict.parameters, "parameters"), "; "), "", "strict form")
  T.eq(strict.strict, true, "spec.strict")
  T.eq(#strict.parameters.required, 13, "all thirteen properties required")
  T.eq(strict.parameters.required[1], "action", "action first")
  T.eq(strict.parameters.properties.action.type, "string", "action is not nullable")
  T.eq(table.concat(strict.parameters.properties.subject.type, ","), "string,null", "subject nullable")
  T.eq(table.concat(strict.parameters.properties.metadata.type, ","), "string,null", "metadata as text")
  T.eq(strict.parameters.properties.status.anyOf[2].type, "null", "status: enum or null")
  T.eq(table.concat(strict.parameters.properties.blockedBy.type, ","), "array,null", "blockedBy nullable")
  T.eq(strict.parameters.properties.blockedBy.items.type, "number", "blockedBy items")
  T.contains(T.strict_violations(todo.tool().parameters, "parameters")[1] or "", "additionalProperties", "normal")
  T.eq(todo.tool().strict, nil, "the normal spec has no strict flag")
  T.raises(function()
    todo.tool({ strict = "yes" })
  end, "(rpiv_todo) tool: strict: expected a boolean")
  T.raises(function()
    todo.tool({ strikt = true })
  end, "(rpiv_todo) tool: strikt: unknown option")
  T.raises(function()
    todo.tool(true)
  end, "(rpiv_todo) tool: expected a table")
end)

T.test("strict calls: null means not given, metadata text is decoded, its nulls delete keys", function()
  local spec = todo.tool({ strict = true })
  local null = require("rpiv_todo.core").null
  local function call(p)
    return spec.execute(p, { session = "strict" }).content[1].text
  end
  local all_null = {
    action = "create",
    subject = "Write the parser",
    description = null,
    activeForm = null,
    status = null,
    id = null,
    blockedBy = null,
    addBlockedBy = null,
    removeBlockedBy = null,
    owner = null,
    metadata = '{"area":"parser","keep":1,"deep":{"list":[1,"x",[]],"empty":{}}}',
    includeDeleted = null,
  }
  T.eq(call(all_null), "Created #1: Write the parser (pending)", "create")
  local task = todo.session("strict"):state().tasks[1]
  T.eq(task.metadata.area, "parser", "metadata decoded")
  T.eq(task.metadata.deep.list[2], "x", "nested array")
  T.eq(task.owner, nil, "null owner not stored")
  T.eq(call({ action = "update", id = 1, metadata = '{"area":null}' }), "Updated #1", "null deletes")
  task = todo.session("strict"):state().tasks[1]
  T.eq(task.metadata.area, nil, "area removed")
  T.eq(task.metadata.keep, 1, "keep kept")
  T.eq(
    call('{"action":"update","id":1,"status":"in_progress","subject":null,"metadata":null}'),
    "Updated #1 (pending → in_progress)",
    "JSON text"
  )
  T.eq(
    call({ action = "update", id = 1, status = "in_progress", metadata = "" }),
    "No change: #1 already matches the requested values (status: in_progress)",
    "blank metadata text is not given"
  )
  local before = todo.session("strict"):state()
  T.eq(
    call({ action = "update", id = 1, metadata = "{area: 1}" }),
    "Error: metadata: expected a JSON object written as text, got text that is not JSON"
      .. " (key must be a string at line 1 column 2)",
    "bad JSON"
  )
  T.eq(
    call({ action = "update", id = 1, metadata = "[1]" }),
    "Error: metadata: expected a JSON object written as text, got an array",
    "array"
  )
  T.eq(
    call({ action = "update", id = 1, metadata = "7" }),
    "Error: metadata: expected a JSON object written as text, got a number",
    "number"
  )
  local result = spec.execute({ action = "update", id = 1, metadata = "[]" }, { session = "strict" })
  T.eq(result.details.error, "metadata: expected a JSON object written as text, got an array", "details.error")
  T.eq(result.details.nextId, before.nextId, "snapshot nextId")
  T.eq(#result.details.tasks, #before.tasks, "snapshot tasks")
  T.eq(result.details.params.metadata, "[]", "params echoed as given")
  T.eq(todo.session("strict"):state().tasks[1].metadata.keep, 1, "list unchanged")
  -- What the core says about the rest, as in the normal form.
  T.eq(call({ action = "update", id = 9, status = "completed", owner = null }), "Error: #9 not found", "core error")
end)

T.test("from_strict leaves a normal-form call as it is", function()
  local tool = require("rpiv_todo.tool")
  local p = { action = "update", id = 2, metadata = { a = 1 }, addBlockedBy = { 1 } }
  local out, err = tool.from_strict(p)
  T.eq(err, nil, "no error")
  T.same(out.metadata, p.metadata, "metadata table kept")
  T.same(out.addBlockedBy, p.addBlockedBy, "array kept")
  T.eq(out.id, 2, "id")
end)

T.test("reminder: English text naming tasks left in_progress, nil when settled", function()
  local s = todo.session("r")
  T.eq(todo.reminder("r"), nil, "empty list")
  s:execute({ action = "create", subject = "Write the parser" })
  s:execute({ action = "create", subject = "Test \27[31mit" })
  T.eq(todo.reminder(s), nil, "all pending")
  s:execute({ action = "update", id = 1, status = "in_progress" })
  T.eq(
    todo.reminder("r"),
    "Reminder from the todo tool: #1 Write the parser is still in_progress."
      .. " Mark it completed if it is done, or pending if you stopped.",
    "one"
  )
  s:execute({ action = "update", id = 2, status = "in_progress" })
  T.eq(
    todo.reminder(s),
    "Reminder from the todo tool: #1 Write the parser; #2 Test it are still in_progress."
      .. " Mark each completed if it is done, or pending if you stopped; keep one in_progress.",
    "two, sanitized"
  )
  T.contains(todo.reminder(s:state()), "#2 Test it", "a state")
  s:execute({ action = "update", id = 1, status = "completed" })
  s:execute({ action = "delete", id = 2 })
  T.eq(todo.reminder("r"), nil, "settled")
  T.eq(todo.reminder(), nil, "default session")
  T.raises(function()
    todo.reminder(true)
  end, "(rpiv_todo) reminder:")
end)

-- ---------------------------------------------------------------------------
-- avante.nvim
-- ---------------------------------------------------------------------------

T.test("avante tool has the custom-tool shape", function()
  local tool = avante.tool()
  T.eq(tool.name, "todo", "name")
  T.eq(type(tool.func), "function", "func")
  T.eq(tool.param.type, "table", "param.type")
  T.eq(tool.param.fields[1].name, "action", "first field")
  local action = T.field(tool.param.fields, "action")
  T.eq(action.type, "string", "action type")
  T.eq(action.optional, false, "action is required")
  T.eq(table.concat(action.choices, ","), "create,update,list,get,delete,clear", "action choices")
  local status = T.field(tool.param.fields, "status")
  T.eq(table.concat(status.choices, ","), "pending,in_progress,completed,deleted", "status choices")
  T.eq(status.optional, true, "status optional")
  T.eq(T.field(tool.param.fields, "id").type, "number", "id type")
  T.eq(T.field(tool.param.fields, "includeDeleted").type, "boolean", "includeDeleted type")
  T.eq(T.field(tool.param.fields, "metadata").type, "object", "metadata type")
  for _, name in ipairs({ "blockedBy", "addBlockedBy", "removeBlockedBy" }) do
    local f = T.field(tool.param.fields, name)
    T.eq(f.type, "array", name .. " type")
    T.eq(f.items.type, "number", name .. " items type")
    T.eq(type(f.items.name), "string", name .. " items carry a name (avante converts them as a field)")
  end
  T.eq(#tool.param.fields, 13, "one field per schema property")
  local tasks = T.field(tool.param.fields, "tasks")
  T.eq(tasks.type, "array", "tasks type")
  T.eq(tasks.items.type, "object", "tasks items are objects")
  T.eq(tasks.items.fields, nil, "a bare object (avante would write empty properties)")
  for _, f in ipairs(tool.param.fields) do
    T.eq(type(f.description), "string", f.name .. " description")
  end
  T.eq(tool.returns[1].name, "result", "returns[1]")
  T.eq(tool.returns[1].type, "string", "returns[1].type")
  T.eq(tool.returns[2].name, "error", "returns[2]")
  T.eq(tool.returns[2].optional, true, "returns[2].optional")
end)

-- avante turns param.fields into the provider's JSON Schema itself (its
-- llm_tool_param_fields_to_json_schema): an object with sub-fields recurses, an array
-- converts its `items` as a one-field list and keeps the one property, anything else
-- becomes { type, description } with `choices` as `enum`; a field not `optional` is
-- required. Re-stated here so the test sees what the model is sent.
function T.avante_schema(fields)
  local properties, required = {}, {}
  for _, field in ipairs(fields) do
    if field.type == "object" and field.fields then
      local p, r = T.avante_schema(field.fields)
      properties[field.name] = { type = field.type, description = field.description, properties = p, required = r }
    elseif field.type == "array" and field.items then
      local p = T.avante_schema({ field.items })
      local _, item = next(p)
      properties[field.name] = { type = field.type, description = field.description, items = item }
    else
      properties[field.name] = { type = field.type, description = field.description }
      if field.choices then
        properties[field.name].enum = field.choices
      end
    end
    if not field.optional then
      required[#required + 1] = field.name
    end
  end
  return properties, required
end

T.test("avante builds the tool's own JSON Schema from the fields (what the model is sent)", function()
  local schema = todo.tool().parameters
  local properties, required = T.avante_schema(avante.tool().param.fields)
  T.eq(table.concat(required, ","), table.concat(schema.required, ","), "required")
  local names = {}
  for name in pairs(schema.properties) do
    names[#names + 1] = name
  end
  table.sort(names)
  local got = {}
  for name in pairs(properties) do
    got[#got + 1] = name
  end
  table.sort(got)
  T.eq(table.concat(got, ","), table.concat(names, ","), "property names")
  for _, name in ipairs(names) do
    local want, have = schema.properties[name], properties[name]
    T.eq(have.type, want.type, name .. " type")
    -- The schema carries no property descriptions (the tool's description explains every
    -- field); avante wants one, and is given the field's name.
    T.eq(want.description, nil, name .. ": no description in the schema")
    T.eq(have.description, name, name .. " description")
    T.eq(
      have.enum and table.concat(have.enum, ",") or nil,
      want.enum and table.concat(want.enum, ",") or nil,
      name .. " enum"
    )
    if want.items then
      T.eq(have.items and have.items.type, want.items.type, name .. " items type")
    end
  end
  -- Spelled out for the two the model needs most.
  T.eq(table.concat(properties.action.enum, ","), "create,update,list,get,delete,clear", "action enum")
  T.eq(properties.blockedBy.items.type, "number", "blockedBy items")
end)

T.test("avante description carries the prompt snippet and every guideline", function()
  local spec = todo.tool()
  local tool = avante.tool()
  T.contains(tool.description, spec.description, "description")
  T.contains(tool.description, spec.prompt_snippet, "snippet")
  T.eq(#spec.prompt_guidelines, 8, "eight guidelines")
  for _, line in ipairs(spec.prompt_guidelines) do
    T.contains(tool.description, "- " .. line, "guideline")
  end
end)

T.test("avante func returns the content text the model reads", function()
  local tool = avante.tool()
  local opts, calls = T.avante_opts()
  local result, err = tool.func({ action = "create", subject = "Write the parser" }, opts)
  T.eq(result, "Created #1: Write the parser (pending)", "create")
  T.eq(err, nil, "no error")
  result, err = tool.func({ action = "update", id = 1, status = "in_progress" }, opts)
  T.eq(result, "Updated #1 (pending → in_progress)", "update")
  T.eq(err, nil, "no error")
  T.eq(calls.completed, 0, "synchronous: on_complete is not used")
  T.eq(todo.sessions.exists("default"), false, "not the shared default list")
  -- Without a sidebar (a plain interpreter), the request's session context names the list.
  local other = tool.func({ action = "get", id = 1 }, T.avante_opts())
  T.eq(other, nil, "another request context has its own list")
end)

T.test("avante func reports a rejected call as its error, list unchanged", function()
  local tool = avante.tool()
  local opts = T.avante_opts()
  local result, err = tool.func({ action = "update", id = 9, status = "completed" }, opts)
  T.eq(result, nil, "no result")
  -- avante writes "Error: " before it itself.
  T.eq(err, "#9 not found", "error")
  result, err = tool.func({ action = "create" }, opts)
  T.eq(result, nil, "no result for the second rejected call")
  T.eq(err, "subject required for create", "error")
  T.eq(tool.func({ action = "list" }, opts), "No tasks", "nothing created")
end)

T.test("avante func accepts JSON text too", function()
  local tool = avante.tool()
  local result = tool.func('{"action":"create","subject":"From JSON"}', T.avante_opts())
  T.eq(result, "Created #1: From JSON (pending)", "create")
end)

T.test("avante session option routes calls to that session", function()
  local fixed = avante.tool({ session = "chat-7" })
  fixed.func({ action = "create", subject = "In chat 7" }, T.avante_opts())
  T.eq(#todo.session("chat-7"):state().tasks, 1, "chat-7 has the task")
  T.eq(#todo.session("default"):state().tasks, 0, "default untouched")
  local by_ctx = avante.tool({
    session = function(opts)
      return opts.session_ctx.chat
    end,
  })
  by_ctx.func({ action = "create", subject = "In chat 8" }, T.avante_opts({ session_ctx = { chat = "chat-8" } }))
  T.eq(todo.session("chat-8"):state().tasks[1].subject, "In chat 8", "chat-8 has the task")
  T.raises(function()
    avante.tool({ session = 3 })
  end, "(rpiv_todo) avante: session:")
end)

-- ---------------------------------------------------------------------------
-- codecompanion.nvim
-- ---------------------------------------------------------------------------

T.test("codecompanion tool has the tool shape", function()
  local spec = todo.tool()
  local tool = codecompanion.tool()
  T.eq(tool.name, "todo", "name")
  T.eq(tool.schema.type, "function", "schema.type")
  local fn = tool.schema["function"]
  T.eq(fn.name, "todo", "function.name")
  T.eq(fn.description, spec.description, "function.description")
  T.eq(fn.strict, false, "function.strict")
  T.eq(fn.parameters.type, "object", "parameters.type")
  T.eq(fn.parameters.required[1], "action", "parameters.required")
  T.eq(table.concat(fn.parameters.properties.action.enum, ","), "create,update,list,get,delete,clear", "action enum")
  T.eq(type(tool.cmds[1]), "function", "cmds[1]")
  T.eq(type(tool.output.success), "function", "output.success")
  T.eq(type(tool.output.error), "function", "output.error")
  T.contains(tool.system_prompt, spec.prompt_snippet, "system prompt snippet")
  for _, line in ipairs(spec.prompt_guidelines) do
    T.contains(tool.system_prompt, line, "guideline")
  end
end)

T.test("codecompanion cmd returns success with the content text", function()
  local tool = codecompanion.tool()
  local opts = { input = nil, output_cb = function() end }
  local out = tool.cmds[1](tool, { action = "create", subject = "Write the parser" }, opts)
  T.eq(out.status, "success", "status")
  T.eq(out.data, "Created #1: Write the parser (pending)", "data")
  out = tool.cmds[1](tool, { action = "update", id = 1, status = "in_progress" }, opts)
  T.eq(out.data, "Updated #1 (pending → in_progress)", "data")
  out = tool.cmds[1](tool, { action = "update", id = 1, status = "in_progress" }, opts)
  T.eq(out.data, "No change: #1 already matches the requested values (status: in_progress)", "data")
end)

T.test("codecompanion cmd returns error for a rejected call", function()
  local tool = codecompanion.tool()
  local out = tool.cmds[1](tool, { action = "delete", id = 4 }, {})
  T.eq(out.status, "error", "status")
  T.eq(out.data, "Error: #4 not found", "data")
end)

T.test("codecompanion output puts the text in the chat (v18+ signature)", function()
  local tool = codecompanion.tool()
  local out = tool.cmds[1](tool, { action = "create", subject = "A" }, {})
  local chat = T.chat()
  tool.output.success(tool, { out.data }, { tools = { chat = chat }, cmd = tool.cmds[1] })
  T.eq(chat.outputs[1].text, "Created #1: A (pending)", "success text")
  T.eq(chat.outputs[1].tool, tool, "tool passed")
  local bad = tool.cmds[1](tool, { action = "get", id = 7 }, {})
  tool.output.error(tool, { bad.data }, { tools = { chat = chat }, cmd = tool.cmds[1] })
  T.eq(chat.outputs[2].text, "Error: #7 not found", "error text")
end)

T.test("codecompanion output puts the text in the chat (pre-v18 signature)", function()
  local tool = codecompanion.tool()
  local out = tool.cmds[1](tool, { action = "create", subject = "B" }, {})
  local chat = T.chat()
  tool.output.success(tool, { chat = chat }, tool.cmds[1], { out.data })
  T.eq(chat.outputs[1].text, "Created #1: B (pending)", "success text")
  tool.output.error(tool, { chat = chat }, tool.cmds[1], { { status = "error", data = "Error: #2 not found" } })
  T.eq(chat.outputs[2].text, "Error: #2 not found", "error text")
end)

T.test("codecompanion output carries only the call's own result from turn-wide lists", function()
  local tool = codecompanion.tool()
  local chat = T.chat()
  -- v19 hands output.error the turn's whole stderr; the last entry is this call's.
  tool.output.error(
    tool,
    { "Error: #42 not found", "Error: #77 not found" },
    { tools = { chat = chat }, cmd = tool.cmds[1] }
  )
  T.eq(chat.outputs[1].text, "Error: #77 not found", "v19 error")
  -- v17 hands output.success the turn's whole stdout.
  tool.output.success(tool, { chat = chat }, tool.cmds[1], { "Created #1: A (pending)", "Created #2: B (pending)" })
  T.eq(chat.outputs[2].text, "Created #2: B (pending)", "v17 success")
  -- Entries may be { status, data } tables or lists of lines.
  tool.output.success(tool, { { status = "success", data = { "a", "b" } } }, { tools = { chat = chat } })
  T.eq(chat.outputs[3].text, "a\nb", "lines joined")
end)

T.test("codecompanion gives each chat its own list by default", function()
  local tool = codecompanion.tool()
  local chat1, chat2 = { id = 11, bufnr = 3 }, { id = 12, bufnr = 4 }
  T.eq(
    tool.cmds[1]({ chat = chat1 }, { action = "create", subject = "In chat 11" }, {}).data,
    "Created #1: In chat 11 (pending)",
    "chat 11"
  )
  T.eq(
    tool.cmds[1]({ chat = chat2 }, { action = "create", subject = "In chat 12" }, {}).data,
    "Created #1: In chat 12 (pending)",
    "chat 12"
  )
  T.eq(todo.session(codecompanion.session_of(chat1)):state().tasks[1].subject, "In chat 11", "chat 11 list")
  T.eq(todo.session(codecompanion.session_of(chat2)):state().tasks[1].subject, "In chat 12", "chat 12 list")
  T.eq(todo.sessions.exists("default"), false, "no shared list")
  T.ok(codecompanion.session_of(chat1):find("^codecompanion:%d+%-[^-]+%-%d+$") ~= nil, "codecompanion:<time>-<pid>-<n>")
end)

T.test("codecompanion: two chats with the same id (math.random unseeded) have two lists", function()
  local tool = codecompanion.tool()
  local first, second = { id = 5, bufnr = 5 }, { id = 5, bufnr = 6 }
  tool.cmds[1]({ chat = first }, { action = "create", subject = "First editor's chat" }, {})
  local out = tool.cmds[1]({ chat = second }, { action = "list" }, {})
  T.eq(out.data, "No tasks", "the second chat starts empty")
  T.eq(codecompanion.session_of(first) == codecompanion.session_of(second), false, "two ids")
end)

T.test("codecompanion: a chat opened with earlier messages gets its list back", function()
  local tool = codecompanion.tool()
  local function call(id, args)
    return {
      role = "llm",
      tools = { calls = { { id = id, type = "function", ["function"] = { name = "todo", arguments = args } } } },
    }
  end
  local function result(id, text)
    return { role = "tool", tools = { call_id = id }, content = text }
  end
  local chat = {
    id = 5,
    bufnr = 7,
    messages = {
      { role = "user", content = "Plan it" },
      call("c1", '{"action":"create","subject":"Tag the release"}'),
      result("c1", "Created #1: Tag the release (pending)"),
      call("c2", '{"action":"update","id":1,"status":"in_progress","metadata":"{\\"k\\":1}","owner":null}'),
      result("c2", "Updated #1 (pending → in_progress)"),
      call("c3", '{"action":"create","subject":"Never answered"}'),
    },
  }
  local out = tool.cmds[1]({ chat = chat }, { action = "get", id = 1 }, {})
  T.eq(out.data, "#1 [in_progress] Tag the release", "the list its answered calls built")
  T.eq(todo.session(codecompanion.session_of(chat)):state().nextId, 2, "the unanswered call is not replayed")
  T.eq(todo.session(codecompanion.session_of(chat)):state().tasks[1].metadata.k, 1, "strict-form calls too")
end)

T.test("codecompanion accepts strict-form calls and offers the strict schema", function()
  local tool = codecompanion.tool()
  local null = require("rpiv_todo.core").null
  local out = tool.cmds[1](tool, { action = "create", subject = "S", owner = null, metadata = '{"k":1}' }, {})
  T.eq(out.data, "Created #1: S (pending)", "strict call")
  T.eq(todo.session("default"):state().tasks[1].metadata.k, 1, "metadata text decoded")
  local strict = codecompanion.tool({ strict = true })
  local fn = strict.schema["function"]
  T.eq(fn.strict, true, "function.strict")
  T.eq(table.concat(T.strict_violations(fn.parameters, "parameters"), "; "), "", "strict rules")
  T.eq(codecompanion.forces_strict({ name = "openai_responses" }), true, "openai_responses")
  T.eq(
    codecompanion.forces_strict({ name = "copilot", url = "https://api.githubcopilot.com/responses" }),
    true,
    "copilot responses"
  )
  T.eq(
    codecompanion.forces_strict({ name = "openai", url = "https://api.openai.com/v1/chat/completions" }),
    false,
    "openai"
  )
  -- Copilot's adapter as codecompanion holds it: the model's name, and its entry of the
  -- model list (`model.info`) once the adapter has resolved it.
  local asked = 0
  local copilot = {
    name = "copilot",
    url = "https://api.githubcopilot.com/chat/completions",
    model = { name = "gpt-5-codex", info = { endpoint = "responses" } },
    schema = {
      model = {
        default = "auto",
        -- A model list function may be a blocking HTTP request: never called.
        choices = function()
          asked = asked + 1
          return { ["gpt-5-codex"] = { endpoint = "responses" } }
        end,
      },
    },
  }
  T.eq(codecompanion.forces_strict(copilot), true, "copilot model on the responses endpoint (model.info)")
  copilot.model.info = { endpoint = "completions" }
  T.eq(codecompanion.forces_strict(copilot), false, "copilot model on chat completions")
  copilot.model.info = nil
  T.eq(codecompanion.forces_strict(copilot), false, "not known yet: not strict")
  T.eq(asked, 0, "the model list function was never called")
  local listed = {
    name = "listed",
    model = { name = "gpt-5-codex" },
    schema = { model = { default = "x", choices = { ["gpt-5-codex"] = { endpoint = "responses" } } } },
  }
  T.eq(codecompanion.forces_strict(listed), true, "a model list given as a table is read")
  local schema = codecompanion.tool().schema
  codecompanion.set_form(schema, true, true)
  T.eq(schema["function"].parameters.strict, true, "marked as already strict for codecompanion")
  codecompanion.set_form(schema, false, true)
  T.eq(schema["function"].parameters.strict, nil, "normal form unmarked")
  T.eq(schema["function"].strict, false, "function.strict off")
end)

T.test("adapter options are checked by one helper: type, value, unknown key", function()
  T.raises(function()
    codecompanion.tool({ strict = "always" })
  end, '(rpiv_todo) codecompanion: strict: expected true, false or "auto"')
  T.raises(function()
    codecompanion.tool({ reminder = 1 })
  end, "(rpiv_todo) codecompanion: reminder: expected a boolean")
  T.raises(function()
    codecompanion.tool({ sesion = "x" })
  end, "(rpiv_todo) codecompanion: sesion: unknown option (expected session, strict, reminder)")
  T.raises(function()
    avante.tool("x")
  end, "(rpiv_todo) avante: expected a table of options { session }")
  T.raises(function()
    acp.entries(nil, { colour = "red" })
  end, "(rpiv_todo) acp: colour: unknown option (expected default_priority, priority)")
end)

T.test("codecompanion session option", function()
  local tool = codecompanion.tool({
    session = function(self)
      return self.chat_id
    end,
  })
  tool.chat_id = "cc-1"
  tool.cmds[1](tool, { action = "create", subject = "C" }, {})
  T.eq(#todo.session("cc-1"):state().tasks, 1, "cc-1 has the task")
  T.eq(#todo.session("default"):state().tasks, 0, "default untouched")
end)

-- ---------------------------------------------------------------------------
-- Agent Client Protocol
-- ---------------------------------------------------------------------------

T.test("acp.follow sends the plan whenever the list changes, whoever changed it, and only then", function()
  local sent = {}
  local id = "acp-follow"
  local stop = acp.follow("sess_follow", id, function(method, params)
    sent[#sent + 1] = { method = method, params = params }
  end)
  local s = todo.session(id)
  s:execute({ action = "create", subject = "Write the parser" })
  s:execute({ action = "update", id = 1, status = "in_progress" }, "user")
  s:execute({ action = "list" })
  s:execute({ action = "update", id = 1, status = "in_progress" })
  todo.session("another"):execute({ action = "create", subject = "Elsewhere" })
  T.eq(#sent, 2, "the agent's create and the user's start; a list, a no-op and another session send nothing")
  T.eq(sent[1].method, "session/update", "method")
  T.eq(sent[2].params.sessionId, "sess_follow", "the ACP session")
  T.same(
    sent[2].params.update.entries,
    { { content = "Write the parser", priority = "medium", status = "in_progress" } },
    "the user's change, in the plan"
  )
  stop()
  s:execute({ action = "update", id = 1, status = "completed" }, "user")
  T.eq(#sent, 2, "stopped")
  T.raises(function()
    acp.follow("sess", id, "not a function")
  end, "(rpiv_todo) acp: send: expected a function(method, params)", "send checked")
end)

T.test("acp plan lists live tasks as entries in id order, tombstones left out", function()
  local s = todo.session("default")
  s:execute({ action = "create", subject = "Read the spec" })
  s:execute({ action = "create", subject = "Write the parser", activeForm = "Writing the parser" })
  s:execute({ action = "create", subject = "Drop me" })
  s:execute({ action = "create", subject = "Test it" })
  s:execute({ action = "update", id = 1, status = "in_progress" })
  s:execute({ action = "update", id = 1, status = "completed" })
  s:execute({ action = "update", id = 2, status = "in_progress" })
  s:execute({ action = "delete", id = 3 })
  local update = acp.plan(s)
  T.eq(update.sessionUpdate, "plan", "sessionUpdate")
  local want = {
    { "Read the spec", "completed" },
    { "Write the parser", "in_progress" },
    { "Test it", "pending" },
  }
  T.eq(#update.entries, #want, "entry count")
  for i, w in ipairs(want) do
    local e = update.entries[i]
    T.eq(e.content, w[1], "entry " .. i .. " content")
    T.eq(e.status, w[2], "entry " .. i .. " status")
    T.eq(e.priority, "medium", "entry " .. i .. " priority")
  end
end)

T.test("acp entries carry sanitized subjects and chosen priorities", function()
  local s = todo.session("default")
  s:execute({ action = "create", subject = "\27[31mred\27[0m task" })
  s:execute({ action = "create", subject = "calm" })
  s:execute({ action = "update", id = 1, status = "in_progress" })
  local entries = acp.entries(s, {
    default_priority = "low",
    priority = function(task)
      return task.status == "in_progress" and "high" or "urgent"
    end,
  })
  T.eq(entries[1].content, "red task", "escape sequences removed")
  T.eq(entries[1].priority, "high", "priority from the function")
  T.eq(entries[2].priority, "low", "an unknown priority falls back to the default")
  T.raises(function()
    acp.entries(s, { default_priority = "urgent" })
  end, "(rpiv_todo) acp: default_priority:")
end)

T.test("acp notification wraps the plan for session/update; state tables and nil work", function()
  todo.session("default"):execute({ action = "create", subject = "Only" })
  local n = acp.notification("sess_1", nil)
  T.eq(n.sessionId, "sess_1", "sessionId")
  T.eq(n.update.sessionUpdate, "plan", "sessionUpdate")
  T.eq(n.update.entries[1].content, "Only", "foreground session used for nil")
  local from_state = acp.entries({ tasks = { { id = 1, subject = "S", status = "pending" } }, nextId = 2 })
  T.eq(from_state[1].content, "S", "state table")
  local empty = acp.entries({ tasks = {}, nextId = 1 })
  T.eq(#empty, 0, "empty list")
  T.eq(getmetatable(empty), require("rpiv_todo.core").array_mt, "empty entries are marked as a JSON array")
  T.raises(function()
    acp.notification("", nil)
  end, "(rpiv_todo) acp: session_id:")
end)

T.finish("adapters_spec")
