-- Loader spec: `require("rpiv_todo.core")` from a real interpreter (luajit, lua5.1,
-- lua5.4) or a headless Neovim, and a short tour of the contract through the built .so.
-- scripts/test.sh runs it with package.cpath (or Neovim's 'runtimepath') pointing at
-- the build for the interpreter's flavour, and RPIV_FLAVOUR naming that flavour.
-- Expected texts come from the TypeScript original's (rpiv-todo) content-string table and
-- tests/fixtures/reducer-traces.jsonl ("hand-metadata").

local T = dofile(os.getenv("RPIV_ROOT") .. "/tests/harness.lua")
local H = {}

H.in_nvim = type(vim) == "table" and type(vim.api) == "table"
H.flavour = os.getenv("RPIV_FLAVOUR")

-- cjson first, so the core can hand out cjson.array_mt on empty arrays.
do
  local ok, cjson = pcall(require, "cjson")
  H.cjson = ok and type(cjson) == "table" and cjson or nil
end

T.note(
  string.format(
    "%s, flavour %s, cjson %s",
    H.in_nvim and "neovim" or _VERSION,
    tostring(H.flavour),
    H.cjson and "present" or "absent"
  )
)

local loaded, core = pcall(require, "rpiv_todo.core")
T.test("require('rpiv_todo.core') returns the module table", function()
  if not loaded then
    error(tostring(core), 0)
  end
  T.eq(type(core), "table", "type of the module")
end)
if not loaded or type(core) ~= "table" then
  T.finish()
  return
end

-- Decode JSON text with whatever decoder this host has (nil when there is none).
function H.decode(text)
  if H.cjson then
    return H.cjson.decode(text)
  end
  if H.in_nvim and vim.json then
    return vim.json.decode(text)
  end
  return nil
end

T.test("core.version is the crate version from Cargo.toml", function()
  T.eq(type(core.version), "string", "type of core.version")
  T.eq(core.version, T.cargo_version(), "core.version")
end)

T.test("core.flavour names the Lua flavour the module was built for", function()
  T.eq(core.flavour, H.flavour, "core.flavour")
end)

T.test("core.null is a NULL light userdata, equal to cjson.null", function()
  T.eq(type(core.null), "userdata", "type of core.null")
  if H.cjson then
    T.eq(core.null, H.cjson.null, "core.null == cjson.null")
  else
    T.note("cjson absent: core.null not compared with cjson.null")
  end
end)

local s1, s2, s3
T.test("apply with a table creates a task", function()
  local result, state = core.apply(nil, { action = "create", subject = "Write the parser" })
  T.eq(result.content[1].type, "text", "content[1].type")
  T.eq(result.content[1].text, "Created #1: Write the parser (pending)", "content text")
  T.eq(result.details.action, "create", "details.action")
  T.eq(result.details.nextId, 2, "details.nextId")
  T.eq(result.details.error, nil, "details.error")
  T.eq(state.nextId, 2, "state.nextId")
  T.eq(#state.tasks, 1, "task count")
  T.eq(state.tasks[1].id, 1, "task id")
  T.eq(state.tasks[1].subject, "Write the parser", "task subject")
  T.eq(state.tasks[1].status, "pending", "task status")
  s1 = state
end)

T.test("apply with a JSON string updates the status", function()
  local result, state =
    core.apply(s1, '{"action":"update","id":1,"status":"in_progress","activeForm":"writing the parser"}')
  T.eq(result.content[1].text, "Updated #1 (pending \226\134\146 in_progress)", "content text")
  T.eq(state.tasks[1].status, "in_progress", "task status")
  T.eq(state.tasks[1].activeForm, "writing the parser", "task activeForm")
  s2 = state
end)

T.test("list shows the activeForm while in_progress", function()
  local result = core.apply(s2, { action = "list" })
  T.eq(result.content[1].text, "[in_progress] #1 Write the parser (writing the parser)", "content text")
end)

T.test("the same update again says No change", function()
  local result, state = core.apply(s2, { action = "update", id = 1, status = "in_progress" })
  T.eq(
    result.content[1].text,
    "No change: #1 already matches the requested values (status: in_progress)",
    "content text"
  )
  s3 = state
end)

T.test("an integral float id is an integer", function()
  local result = core.apply(s3, { action = "get", id = 1.0 })
  T.contains(result.content[1].text, "#1 [in_progress] Write the parser", "content text")
end)

T.test("a rejected call is in-band and leaves the state untouched", function()
  local result, state = core.apply(s3, { action = "delete", id = 9 })
  T.eq(result.content[1].text, "Error: #9 not found", "content text")
  T.eq(result.details.error, "#9 not found", "details.error")
  T.eq(state.nextId, 2, "state.nextId")
  T.eq(#state.tasks, 1, "task count")
  T.eq(state.tasks[1].status, "in_progress", "task status")
end)

T.test("empty arrays carry core.array_mt", function()
  local result = core.apply(nil, { action = "list" })
  T.eq(result.content[1].text, "No tasks", "content text")
  T.eq(type(result.details.tasks), "table", "type of details.tasks")
  T.eq(next(result.details.tasks), nil, "details.tasks is empty")
  -- debug.getmetatable: mlua's array marker protects itself with __metatable = false.
  T.eq(debug.getmetatable(result.details.tasks), core.array_mt, "metatable of details.tasks")
  -- Debian's lua-cjson 2.1.0 has no array_mt (OpenResty's fork has), so only a cjson
  -- that knows the marker can encode the empty array as [].
  if H.cjson and H.cjson.array_mt then
    T.eq(core.array_mt, H.cjson.array_mt, "core.array_mt is cjson.array_mt")
    T.eq(H.cjson.encode(result.details.tasks), "[]", "cjson.encode(details.tasks)")
  end
end)

T.test("the JSON path writes an empty list as []", function()
  local json = core.list(nil):apply_json('{"action":"list"}')
  T.contains(json, '"tasks":[]', "apply_json result")
end)

T.test("a list handle applies tables and JSON, and hands its state back", function()
  local list = core.list(nil)
  local result = list:apply({ action = "create", subject = "A" })
  T.eq(result.content[1].text, "Created #1: A (pending)", "apply content text")
  local json = list:apply_json('{"action":"list"}')
  T.eq(type(json), "string", "type of apply_json result")
  local decoded = H.decode(json)
  if decoded then
    T.eq(decoded.content[1].text, "[pending] #1 A", "apply_json content text")
    T.eq(decoded.details.nextId, 2, "apply_json details.nextId")
  else
    T.contains(json, "[pending] #1 A", "apply_json text")
  end
  T.eq(list:state().nextId, 2, "state().nextId")
  list:replace(s3)
  T.eq(list:state().tasks[1].subject, "Write the parser", "state after replace")
end)

-- The "hand-metadata" trace: a null value deletes its key; emptying the record drops it.
function H.metadata_nulls(null)
  local _, state = core.apply(nil, { action = "create", subject = "m", metadata = { a = 1, c = null } })
  local meta = state.tasks[1].metadata
  T.eq(meta.a, 1, "metadata.a after create")
  if meta.c ~= core.null and meta.c ~= null then
    error("metadata.c after create: expected a JSON null, got " .. tostring(meta.c), 0)
  end
  local result
  result, state = core.apply(state, { action = "update", id = 1, metadata = { c = null } })
  T.eq(result.content[1].text, "Updated #1", "content text after deleting c")
  T.eq(state.tasks[1].metadata.c, nil, "metadata.c after update")
  T.eq(state.tasks[1].metadata.a, 1, "metadata.a after update")
  result, state = core.apply(state, { action = "update", id = 1, metadata = { a = null } })
  T.eq(result.content[1].text, "Updated #1", "content text after deleting a")
  T.eq(state.tasks[1].metadata, nil, "metadata after its last key is deleted")
end

T.test("core.null in metadata is a JSON null", function()
  H.metadata_nulls(core.null)
end)

if H.in_nvim then
  T.test("Neovim finds the module through 'runtimepath' in the repository", function()
    local found = vim.api.nvim_get_runtime_file("lua/rpiv_todo/core.so", false)[1]
    T.eq(found and vim.fn.resolve(found), vim.fn.resolve(T.root() .. "/lua/rpiv_todo/core.so"), "runtime file")
  end)
  T.test("vim.NIL in metadata is a JSON null", function()
    H.metadata_nulls(vim.NIL)
  end)
  T.test("vim.json.decode output (vim.NIL for null) is accepted as params", function()
    local params = vim.json.decode('{"action":"create","subject":"x","metadata":{"k":null}}')
    local result = core.apply(nil, params)
    T.eq(result.content[1].text, "Created #1: x (pending)", "content text")
  end)
end

T.test("sanitize drops CSI sequences and turns a tab into a space", function()
  T.eq(core.sanitize("\27[31mred\27[0m\tok"), "red ok", "sanitized text")
end)

T.test("replay of no entries is the empty list", function()
  local state = core.replay({})
  T.eq(next(state.tasks), nil, "tasks")
  T.eq(state.nextId, 1, "nextId")
  state = core.replay("[]")
  T.eq(state.nextId, 1, "nextId from JSON text")
end)

T.finish()
