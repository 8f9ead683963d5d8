-- tests/lua/layer_spec.lua: the Lua layer's key checks (setup, tool spec, sessions, replay,
-- /todos) from a real interpreter against the built module. scripts/test.sh runs it per
-- flavour (LUA_PATH/LUA_CPATH, RPIV_ROOT set); by hand, from the crate root:
--   luajit tests/lua/layer_spec.lua      (also lua5.1, lua5.4)
-- with lua/rpiv_todo/core.so built for that interpreter. Exits non-zero on any failure.
-- Expected values come from tests/fixtures (the recorded behaviour of the TypeScript
-- original, rpiv-todo) and the spec, not from this code.

local H = {}

H.root = os.getenv("RPIV_ROOT") or "."
if not os.getenv("LUA_PATH") then
  package.path = H.root
    .. "/lua/?.lua;"
    .. H.root
    .. "/lua/?/init.lua;"
    .. H.root
    .. "/tests/lua/?.lua;"
    .. package.path
end
if not os.getenv("LUA_CPATH") then
  package.cpath = H.root .. "/lua/?.so;" .. package.cpath
end
H.conformance = H.root .. "/tests/fixtures/"

-- cjson before the core, so both use the same array marker.
local has_cjson, cjson = pcall(require, "cjson")
H.json = has_cjson and cjson or dofile(H.root .. "/tests/lua/json.lua")

local todo = require("rpiv_todo")
local core = require("rpiv_todo.core")
local i18n = require("rpiv_todo.i18n")

-- ---------------------------------------------------------------------------
-- A tiny runner
-- ---------------------------------------------------------------------------

H.passed, H.failed = 0, 0

function H.test(name, fn)
  todo.sessions.reset()
  todo.setup({ locale = "en" })
  local ok, err = pcall(fn)
  if ok then
    H.passed = H.passed + 1
  else
    H.failed = H.failed + 1
    print("FAIL " .. name .. "\n     " .. tostring(err))
  end
end

function H.show(v)
  if type(v) == "string" then
    return string.format("%q", v)
  end
  return tostring(v)
end

function H.eq(actual, expected, what)
  if actual ~= expected then
    error((what or "value") .. ": expected " .. H.show(expected) .. ", got " .. H.show(actual), 2)
  end
end

function H.truthy(v, what)
  if not v then
    error(what or "expected a true value", 2)
  end
end

-- Deep equality of decoded JSON values (tables compared key by key, both ways).
function H.same(a, b, path)
  path = path or "$"
  if type(a) ~= type(b) then
    return false, path .. ": " .. type(a) .. " vs " .. type(b)
  end
  if type(a) ~= "table" then
    if a == b then
      return true
    end
    return false, path .. ": " .. H.show(a) .. " vs " .. H.show(b)
  end
  for k, v in pairs(a) do
    local ok, where = H.same(v, b[k], path .. "." .. tostring(k))
    if not ok then
      return false, where
    end
  end
  for k in pairs(b) do
    if a[k] == nil then
      return false, path .. "." .. tostring(k) .. ": missing on the left"
    end
  end
  return true
end

function H.assert_same(a, b, what)
  local ok, where = H.same(a, b)
  if not ok then
    error((what or "tables differ") .. " at " .. where, 2)
  end
end

function H.lines(name)
  local f = assert(io.open(H.conformance .. name, "r"))
  local out = {}
  for line in f:lines() do
    if line:find("%S") then
      out[#out + 1] = H.json.decode(line)
    end
  end
  f:close()
  return out
end

function H.read_json(name)
  local f = assert(io.open(H.conformance .. name, "r"))
  local text = f:read("*a")
  f:close()
  return H.json.decode(text)
end

-- A JSON Schema without its prose: every string-valued "description" keyword removed
-- (a property *named* description is a table and stays).
function H.strip_descriptions(schema)
  if type(schema) ~= "table" then
    return schema
  end
  local out = {}
  for k, v in pairs(schema) do
    if not (k == "description" and type(v) == "string") then
      out[k] = H.strip_descriptions(v)
    end
  end
  return out
end

function H.raises(fn, needle)
  local ok, err = pcall(fn)
  if ok then
    error("expected an error containing " .. H.show(needle), 2)
  end
  if not tostring(err):find(needle, 1, true) then
    error("error " .. H.show(tostring(err)) .. " lacks " .. H.show(needle), 2)
  end
end

function H.text(result)
  return result.content[1].text
end

-- ---------------------------------------------------------------------------
-- /todos
-- ---------------------------------------------------------------------------

H.test("every recorded /todos case renders byte for byte", function()
  local cases = H.lines("command-cases.jsonl")
  H.truthy(#cases > 0, "no command cases")
  for n, c in ipairs(cases) do
    local text, level = todo.command.todos({ tasks = c.tasks, nextId = c.nextId }, { interactive = true })
    H.eq(level, c.level, "case " .. n .. " level")
    if c.empty then
      -- Our own wording: the locale's empty-list message.
      H.eq(text, i18n.t("todos-empty"), "case " .. n .. " empty text")
    else
      H.eq(text, c.text, "case " .. n .. " text")
    end
  end
end)

H.test("/todos in a host without a UI is an error", function()
  local text, level = todo.command.todos({ tasks = {}, nextId = 1 }, { interactive = false })
  H.eq(level, "error")
  H.eq(text, i18n.t("todos-noninteractive"))
end)

H.test("/todos reads a session's list", function()
  local s = todo.session("cmd")
  s:execute({ action = "create", subject = "Write the parser" })
  s:execute({ action = "update", id = 1, status = "in_progress", activeForm = "Writing the parser" })
  local text, level = todo.command.todos(s)
  H.eq(level, "info")
  H.eq(text, "1 in progress\n── In Progress ──\n  ◐ #1 Write the parser (Writing the parser)")
end)

-- ---------------------------------------------------------------------------
-- The tool spec
-- ---------------------------------------------------------------------------

H.test("tool parameters have the structure of schema.json", function()
  local reference = H.read_json("schema.json")
  local spec = todo.tool()
  H.eq(spec.name, reference.toolName, "name")
  H.eq(spec.label, reference.label, "label")
  H.assert_same(H.strip_descriptions(spec.parameters), reference.parameters, "parameters")
end)

H.test("every schema property carries a description of its own", function()
  for name, prop in pairs(todo.tool().parameters.properties) do
    H.truthy(type(prop.description) == "string" and #prop.description > 20, name .. " has no description")
  end
end)

-- What the guidance must teach (the topics the project's design lists), and the phrases that carry each topic in
-- our default guidelines (all must be present).
H.guidance_topics = {
  { "when to open a list", { "three or more", "skip the list" } },
  { "exactly one task in_progress", { "exactly one task in_progress" } },
  { "mark it before starting", { "in_progress before you start" } },
  { "complete immediately", { "completed the moment it is done" } },
  { "never in batches", { "Never save completions", "batch" } },
  { "never with failing tests", { "Never mark a task completed while its tests fail" } },
  { "never with partial work", { "partly done" } },
  {
    "the state machine",
    { "pending ⇄ in_progress", "either of them → completed", "any → deleted", "deleted is final" },
  },
  { "the literal update call", { '{"action":"update","id":3,"status":"completed"}' } },
  { "dependencies", { "blockedBy on create", "addBlockedBy and removeBlockedBy", "never resend the whole array" } },
  { "includeDeleted", { "includeDeleted: true" } },
  {
    "subject vs description vs activeForm",
    {
      "subject as a short imperative title",
      "detail and acceptance criteria in description",
      "activeForm the present-continuous label",
    },
  },
}

H.test("the default guidance teaches every listed topic", function()
  local spec = todo.tool()
  H.eq(#spec.prompt_guidelines, 8, "guideline count")
  H.truthy(spec.prompt_snippet:find("multi-step work", 1, true), "snippet: when to use the tool")
  local all = table.concat(spec.prompt_guidelines, "\n")
  for _, topic in ipairs(H.guidance_topics) do
    for _, phrase in ipairs(topic[2]) do
      H.truthy(
        all:find(phrase, 1, true),
        "guidelines do not teach " .. topic[1] .. ": " .. H.show(phrase) .. " is missing"
      )
    end
  end
  H.truthy(
    spec.description:find("pending ⇄ in_progress, either → completed, any → deleted", 1, true),
    "description: state machine"
  )
  H.eq(type(spec.execute), "function", "execute")
end)

H.test("schema descriptions are distinct and name the actions that take the field", function()
  local props = todo.tool().parameters.properties
  local seen, n = {}, 0
  for name, prop in pairs(props) do
    H.truthy(not seen[prop.description], name .. " repeats another description")
    seen[prop.description] = true
    n = n + 1
  end
  H.eq(n, 12, "property count")
  for name, needle in pairs({
    subject = "Required for create",
    blockedBy = "create only",
    addBlockedBy = "update only",
    removeBlockedBy = "update only",
    includeDeleted = "list only",
    id = "Required for update, get and",
    status = "list: show only tasks with this status",
  }) do
    H.truthy(props[name].description:find(needle, 1, true), name .. " lacks " .. H.show(needle))
  end
end)

-- ---------------------------------------------------------------------------
-- setup()
-- ---------------------------------------------------------------------------

H.bad_setups = {
  { "setup", "not a table" },
  { "colour", { colour = "red" } },
  { "guidance", { guidance = 42 } },
  { "guidance", { guidance = { prompt_snippet = "" } } },
  { "guidance", { guidance = { prompt_snippet = "   " } } },
  { "guidance", { guidance = { prompt_snippet = 5 } } },
  { "guidance", { guidance = { prompt_guidelines = {} } } },
  { "guidance", { guidance = { prompt_guidelines = "one" } } },
  { "guidance", { guidance = { prompt_guidelines = { "a", "" } } } },
  { "guidance", { guidance = { prompt_guidelines = { "a", 3 } } } },
  { "guidance", { guidance = { prompt_guidelines = { [1] = "a", [3] = "c" } } } },
  { "guidance", { guidance = { snippet = "typo" } } },
  { "guidance", {
    guidance = function()
      return nil
    end,
  } },
  { "guidance", {
    guidance = function()
      return { prompt_guidelines = {} }
    end,
  } },
  { "max_widget_lines", { max_widget_lines = 2 } },
  { "max_widget_lines", { max_widget_lines = 3.5 } },
  { "max_widget_lines", { max_widget_lines = "12" } },
  { "max_widget_lines", { max_widget_lines = 1 / 0 } },
  { "max_widget_lines", { max_widget_lines = 0 / 0 } },
  { "collapse_key", { collapse_key = "" } },
  { "collapse_key", { collapse_key = "ctrl+ctrl+t" } },
  { "collapse_key", { collapse_key = "hyper+t" } },
  { "collapse_key", { collapse_key = "ctrl+" } },
  { "collapse_key", { collapse_key = "ctrl+shift+tt" } },
  { "collapse_key", { collapse_key = 20 } },
  { "locale", { locale = "xx" } },
  { "locale", { locale = 7 } },
  { "overlay", { overlay = 5 } },
  { "overlay", { overlay = { row = "not a function" } } },
  { "overlay", {
    overlay = function()
      return { row = 1 }
    end,
  } },
  { "overlay", {
    overlay = function()
      return "x"
    end,
  } },
  { "overlay", { overlay = { colour = function() end } } },
  { "overlay", { overlay = { theme = "neon" } } },
  { "overlay", { overlay = { theme = {
    fg = function(_, t)
      return t
    end,
  } } } },
  { "overlay", { overlay = { theme = { fg = print, bold = print, strikethrough = print, finish = 1 } } } },
  { "overlay", { overlay = { theme = 5 } } },
  { "overlay", { overlay = { glyphs = { pending = 1 } } } },
  { "overlay", { overlay = { glyphs = { failed = "x" } } } },
  { "overlay", {
    overlay = function()
      error("boom")
    end,
  } },
  { "guidance", {
    guidance = function()
      error("boom")
    end,
  } },
  { "max_widget_lines", { max_widget_lines = true } },
  { "collapse_key", { collapse_key = "   " } },
  { "1", { "positional" } },
}

H.test("every invalid setup value raises naming its key", function()
  for n, case in ipairs(H.bad_setups) do
    local key, opts = case[1], case[2]
    local ok, err = pcall(todo.setup, opts)
    H.truthy(not ok, "case " .. n .. " (" .. key .. ") did not raise")
    H.truthy(
      tostring(err):find("(rpiv_todo) " .. key .. ":", 1, true),
      "case " .. n .. ": " .. H.show(tostring(err)) .. " lacks (rpiv_todo) " .. key .. ":"
    )
  end
end)

H.test("a rejected setup changes nothing", function()
  todo.setup({ guidance = { prompt_snippet = "kept" }, max_widget_lines = 5 })
  H.raises(function()
    todo.setup({ guidance = { prompt_snippet = "lost" }, max_widget_lines = 1 })
  end, "(rpiv_todo) max_widget_lines:")
  H.eq(todo.tool().prompt_snippet, "kept")
  H.eq(todo.config.max_widget_lines, 5)
end)

H.test("guidance table form replaces the guideline list whole", function()
  todo.setup({ guidance = { prompt_snippet = "Track work.", prompt_guidelines = { "Only this." } } })
  local spec = todo.tool()
  H.eq(spec.prompt_snippet, "Track work.")
  H.eq(#spec.prompt_guidelines, 1)
  H.eq(spec.prompt_guidelines[1], "Only this.")
end)

H.test("guidance with only a snippet keeps the default guidelines", function()
  todo.setup({ guidance = { prompt_snippet = "Track work." } })
  local spec = todo.tool()
  H.eq(#spec.prompt_guidelines, 8)
  H.eq(spec.prompt_guidelines[8], todo.guidance.defaults.prompt_guidelines[8])
end)

H.test("guidance function form receives the defaults and may extend them", function()
  local seen
  todo.setup({
    guidance = function(defaults)
      seen = defaults
      defaults.prompt_guidelines[#defaults.prompt_guidelines + 1] = "Ninth."
      return defaults
    end,
  })
  H.eq(seen.prompt_snippet, todo.guidance.defaults.prompt_snippet)
  local spec = todo.tool()
  H.eq(#spec.prompt_guidelines, 9)
  H.eq(spec.prompt_guidelines[9], "Ninth.")
  -- The exported defaults are untouched by what the function did to its copy.
  H.eq(#todo.guidance.defaults.prompt_guidelines, 8)
end)

H.test("setup without guidance restores the default guidance", function()
  todo.setup({ guidance = { prompt_snippet = "custom" } })
  todo.setup({})
  H.eq(todo.tool().prompt_snippet, todo.guidance.defaults.prompt_snippet)
end)

H.test("collapse key is trimmed and lowercased; off is accepted", function()
  todo.setup({ collapse_key = "  Ctrl+Shift+X " })
  H.eq(todo.config.collapse_key, "ctrl+shift+x")
  todo.setup({ collapse_key = "off" })
  H.eq(todo.config.collapse_key, "off")
  todo.setup({ collapse_key = "f5" })
  H.eq(todo.config.collapse_key, "f5")
end)

H.test("setup switches the locale and todo.locale() reports it", function()
  todo.setup({ locale = "de" })
  H.eq(todo.locale(), "de")
  todo.setup({ locale = "en" })
  H.eq(todo.locale(), "en")
end)

-- ---------------------------------------------------------------------------
-- Sessions
-- ---------------------------------------------------------------------------

H.test("sessions are isolated: ids, tasks and lists never cross", function()
  local a, b = todo.session("a"), todo.session("b")
  H.eq(H.text(a:execute({ action = "create", subject = "Alpha" })), "Created #1: Alpha (pending)")
  H.eq(H.text(b:execute({ action = "list" })), "No tasks")
  H.eq(H.text(b:execute({ action = "create", subject = "Beta" })), "Created #1: Beta (pending)")
  H.eq(H.text(a:execute({ action = "update", id = 1, status = "completed" })), "Updated #1 (pending → completed)")
  H.eq(b:state().tasks[1].status, "pending")
  H.eq(a:state().tasks[1].subject, "Alpha")
  H.eq(#todo.session("c"):state().tasks, 0)
end)

H.test("a session is the same list every time it is asked for", function()
  todo.session("same"):execute({ action = "create", subject = "One" })
  H.eq(#todo.session("same"):state().tasks, 1)
end)

H.test("shutdown evicts a session's list", function()
  todo.session("gone"):execute({ action = "create", subject = "One" })
  todo.shutdown("gone")
  H.eq(#todo.session("gone"):state().tasks, 0)
  H.eq(todo.session("gone"):state().nextId, 1)
end)

H.test("a session takes JSON text as well as a table", function()
  local s = todo.session("json")
  H.eq(H.text(s:execute('{"action":"create","subject":"From JSON"}')), "Created #1: From JSON (pending)")
end)

H.test("the foreground session is default until the host names another", function()
  H.eq(todo.foreground().id, "default")
  todo.foreground("work")
  H.eq(todo.foreground().id, "work")
  todo.tool().execute({ action = "create", subject = "Not here" })
  H.eq(#todo.foreground():state().tasks, 0)
  H.eq(#todo.session("default"):state().tasks, 1)
end)

H.test("tool().execute and session:execute give the same results", function()
  local calls = {
    { action = "create", subject = "Parse", activeForm = "Parsing" },
    { action = "create", subject = "Check", blockedBy = { 1 } },
    { action = "update", id = 1, status = "in_progress" },
    { action = "update", id = 2, status = "in_progress", addBlockedBy = { 2 } },
    { action = "update", id = 1, status = "completed" },
    { action = "update", id = 1, status = "completed" },
    { action = "get", id = 2 },
    { action = "list", includeDeleted = true },
    { action = "delete", id = 2 },
    { action = "clear" },
  }
  local execute = todo.tool().execute
  local s = todo.session("direct")
  for n, params in ipairs(calls) do
    local via_tool = execute(params, { session = "via-tool" })
    local direct = s:execute(params)
    H.eq(H.text(via_tool), H.text(direct), "call " .. n .. " content")
    H.assert_same(via_tool.details, direct.details, "call " .. n .. " details")
  end
  H.eq(#todo.session("default"):state().tasks, 0, "default session untouched")
end)

H.test("tool().execute and session:execute agree on JSON text too", function()
  local calls = {
    '{"action":"create","subject":"Parse","activeForm":"Parsing"}',
    '{"action":"create","subject":"Check","blockedBy":[1]}',
    '{"action":"update","id":1,"status":"in_progress"}',
    '{"action":"update","id":2,"addBlockedBy":[2]}',
    '{"action":"update","id":1,"status":"completed"}',
    '{"action":"list","includeDeleted":true}',
    '{"action":"update","id":"1"}',
    '{"action":"clear"}',
  }
  local execute = todo.tool().execute
  local s = todo.session("json-direct")
  for n, text in ipairs(calls) do
    local via_tool = execute(text, { session = "json-via-tool" })
    local direct = s:execute(text)
    H.eq(H.text(via_tool), H.text(direct), "call " .. n .. " content")
    H.assert_same(via_tool.details.tasks, direct.details.tasks, "call " .. n .. " tasks")
    H.eq(via_tool.details.nextId, direct.details.nextId, "call " .. n .. " nextId")
  end
  H.eq(H.text(s:execute('{"action":"update","id":"1"}')):sub(1, 7), "Error: ", "a bad id is an in-band error")
end)

H.test("/todos without a source reads the foreground session", function()
  todo.session("bg"):execute({ action = "create", subject = "Hidden" })
  todo.foreground("fg")
  todo.tool().execute({ action = "create", subject = "Shown" }, { session = "fg" })
  local text, level = todo.command.todos(nil, { interactive = true })
  H.eq(level, "info")
  H.eq(text, "1 pending\n── Pending ──\n  ○ #1 Shown")
end)

H.test("a list survives compaction and reload by replay of the branch", function()
  local s = todo.session("long")
  local branch = { { type = "message", message = { role = "user", content = "plan it" } } }
  for _, params in ipairs({
    { action = "create", subject = "A" },
    { action = "create", subject = "B", blockedBy = { 1 } },
    { action = "update", id = 1, status = "completed" },
    { action = "update", id = 2, status = "in_progress", activeForm = "Doing B" },
    { action = "update", id = 2, status = "bogus" }, -- rejected: its snapshot is the same list
  }) do
    local result = s:execute(params)
    branch[#branch + 1] = {
      type = "message",
      message = { role = "toolResult", toolName = "todo", content = result.content, details = result.details },
    }
    branch[#branch + 1] = { type = "message", message = { role = "assistant", content = "ok" } }
  end
  local before = todo.command.todos(s)
  local replayed = 0
  local stop = todo.listen(function(event, id)
    if event == "replayed" and id == "long" then
      replayed = replayed + 1
    end
  end)
  todo.on_compaction("long", branch)
  H.eq(todo.command.todos(s), before, "after compaction")
  todo.shutdown("long") -- the reload: the in-memory list is gone
  H.eq(#todo.session("long"):state().tasks, 0)
  todo.on_session_start("long", branch)
  stop()
  H.eq(replayed, 2, "replay notifications")
  local after = todo.session("long")
  H.eq(todo.command.todos(after), before, "after reload")
  H.eq(after:state().nextId, 3)
  H.eq(H.text(after:execute({ action = "create", subject = "C" })), "Created #3: C (pending)")
end)

H.test("a branch change replays another branch; no snapshot means an empty list", function()
  local s = todo.session("branchy")
  s:execute({ action = "create", subject = "A" })
  todo.on_branch_change("branchy", { { type = "message", message = { role = "user", content = "hi" } } })
  H.eq(#s:state().tasks, 0)
  H.eq(s:state().nextId, 1)
end)

-- ---------------------------------------------------------------------------
-- Renderers
-- ---------------------------------------------------------------------------

H.test("render_call and render_result name the action, task and status", function()
  local spec = todo.tool()
  local s = todo.session("render")
  local created = s:execute({ action = "create", subject = "Write the parser" })
  H.eq(spec.render_call({ action = "create", subject = "Write the parser" }), "+ create Write the parser")
  H.eq(spec.render_result(created), "○ pending #1 Write the parser")
  local args = { action = "update", id = 1, status = "in_progress" }
  H.eq(spec.render_call(args, s:state()), "✎ update #1 Write the parser → ◐ in progress")
  H.eq(spec.render_result(s:execute(args)), "◐ in progress #1 Write the parser")
  local rejected = s:execute({ action = "get", id = 9 })
  H.eq(spec.render_result(rejected), "✗ Error: #9 not found")
  -- The model writes the arguments: odd shapes render, never raise.
  H.eq(spec.render_call({ action = 5, id = 2.5 }), "? ? #2.5")
  H.eq(spec.render_call("nonsense"), "? todo")
end)

print(string.format("layer_spec (%s): %d passed, %d failed", _VERSION, H.passed, H.failed))
os.exit(H.failed == 0 and 0 or 1)
